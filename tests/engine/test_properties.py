"""Properties every preset's engine must keep, checked on random legal games (hypothesis picks seeds).

For each preset in `engine.ruleset.PRESETS` (Spades and Hearts alike) and two more Hearts rulesets,
through the `Game` interface only:

- random legal games always finish (hands capped with `max_hands`, steps bounded);
- every card in play is played exactly once a hand, and the tricks add up and chain (a trick's winner
  leads the next);
- `apply` accepts exactly what `legal_actions` lists: an action that is not listed is refused with
  IllegalAction, and the state (every view, scores, histories, version) is exactly as before;
- no view and no event meant for a seat (or a spectator) holds a card that seat may not know, where
  what it may know is worked out independently from the full events: its own dealt cards once it has
  looked, cards passed or exchanged to it, cards drawn by it, and everything played or laid face up;
- `copy()` is independent: playing on a copy leaves the original exactly as it was;
- replaying the finished hands (their seeds, dead deals and actions) through a fresh engine reproduces
  every hand history and the final scores, and so does `engine.records.replay` on the hands' records
  after a JSON round trip (which also gives back each history exactly).
"""

import itertools
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import (
    Action,
    Bid,
    Claim,
    DeclareDeficient,
    Discard,
    ExchangeCards,
    KeepDrawn,
    LookAtHand,
    PassCards,
    PlayCard,
)
from engine.cards import CardMask, card_text, mask_of, parse_card
from engine.errors import IllegalAction
from engine.events import Event
from engine.game import Game, Phase, new_game
from engine.history import HandHistory
from engine.ordering import TRUMP, card_order
from engine.records import game_records, record_to_hand, replay
from engine.ruleset import PRESETS, Ruleset

# Every preset (`hearts` plays 002 with the house options off, `hearts-house` with them on), plus
# Hearts with the other options turned and three-handed Hearts, which no preset covers.
RULESETS: dict[str, Ruleset] = {
    **PRESETS,
    "hearts+options": PRESETS["hearts-house"].with_options(
        hearts_pass_count=4,
        hearts_queen_breaks=True,
        hearts_moon="subtract_self",
        hearts_jack_of_diamonds=True,
        hearts_pass_cycle=("right", "none", "across"),
    ),
    "hearts+three": PRESETS["hearts"].with_options(players=3, hearts_pass_cycle=("left", "right")),
}
PRESET_NAMES = sorted(RULESETS)
MAX_HANDS = 3  # hands per game: enough to cross a hand boundary and to finish quickly
MAX_STEPS = 2_000  # deals plus actions in one game; far above what MAX_HANDS hands need
EXAMPLES = 5

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def capped(name: str) -> Ruleset:
    """The preset with the game bounded: at most MAX_HANDS hands (fewer if the preset says so)."""
    ruleset = RULESETS[name]
    hands = min(ruleset.max_hands or MAX_HANDS, MAX_HANDS)
    return ruleset.with_options(max_hands=hands)


# -- what each seat may know, worked out from the full events -----------------------------------------


_CARD_BITS = {card_text(card): 1 << card for card in range(54)}
# A card anywhere in a plain structure is a JSON string of exactly its notation ("QS", "BJ").
_QUOTED_CARD = re.compile(r'"([2-9TJQKA][CDHS]|BJ|LJ)"')


def cards_of(value: Any) -> CardMask:
    """Every card notation in a plain (to_dict) structure, as a mask."""
    mask = 0
    for text in set(_QUOTED_CARD.findall(json.dumps(value))):
        mask |= _CARD_BITS[text]
    return mask


def notation_mask(value: Any) -> CardMask:
    """A card or list of cards in notation as a mask (None or missing: empty)."""
    if value is None:
        return 0
    if isinstance(value, str):
        return 1 << parse_card(value)
    return mask_of(parse_card(text) for text in value)


@dataclass
class Knowledge:
    """What each seat, and anybody, may know in the current hand."""

    players: int
    public: CardMask = 0
    seats: list[CardMask] = field(default_factory=list)

    def reset(self) -> None:
        self.public = 0
        self.seats = [0] * self.players

    def known(self, seat: int | None) -> CardMask:
        return self.public if seat is None else self.public | self.seats[seat]

    def learn(self, event: Event) -> None:
        data = event.to_dict()
        kind = data["kind"]
        if kind == "hand_dealt":
            self.reset()
            for seat, hand in enumerate(data["hands"]):
                if seat not in data["hidden"]:
                    self.seats[seat] |= notation_mask(hand)
            for face_up in data["face_up"]:
                self.public |= notation_mask(face_up)
        elif kind in ("hand_looked", "card_drawn", "cards_discarded", "cards_given"):
            self.seats[data["seat"]] |= notation_mask(data.get("cards") or data.get("card"))
        elif kind == "draw_resolved":
            self.seats[data["seat"]] |= notation_mask(data["taken"])
            self.public |= notation_mask(data["discarded"])
        elif kind in ("cards_exchanged", "cards_passed"):
            cards = notation_mask(data["cards"])
            self.seats[data["giver"]] |= cards
            self.seats[data["receiver"]] |= cards
        elif kind == "card_played":
            self.public |= notation_mask(data["card"])
        elif kind in ("claim_made", "deal_declared_dead"):
            self.public |= notation_mask(data["cards"])


def check_views(game: Game, knowledge: Knowledge, events: list[Event]) -> None:
    for seat in [*range(game.players), None]:
        known = knowledge.known(seat)
        view = game.spectator_view() if seat is None else game.view(seat)
        leaked = cards_of(view.to_dict()) & ~known
        assert not leaked, f"the view of seat {seat} shows cards it may not know: {leaked:#x}"
        for event in events:
            told = event.for_seat(seat)
            leaked = cards_of(told) & ~known
            assert not leaked, f"{event.kind} tells seat {seat} cards it may not know"


# -- driving a game -----------------------------------------------------------------------------------


def observable(game: Game) -> Any:
    """What every seat and spectator sees (each seat's own hand included)."""
    return (
        game.version,
        game.phase,
        game.to_act(),
        game.scores,
        game.is_over,
        game.outcome,
        game.spectator_view().to_dict(),
        [game.view(seat).to_dict() for seat in range(game.players)],
    )


def canonical(game: Game) -> Any:
    """Everything observable about a game, to compare before and after a refused action."""
    return (
        observable(game),
        game.histories,
        [game.legal_actions(seat) for seat in range(game.players)],
    )


def action_key(action: Action) -> Any:
    """An action up to the order of its cards: passing QS AS is passing AS QS."""
    if isinstance(action, PassCards | ExchangeCards | Discard):
        return (type(action), action.seat, tuple(sorted(action.cards)))
    return action


def candidate_actions(game: Game, seat: int, rng: random.Random) -> Iterator[Action]:
    """A few actions of every kind, most of them illegal now."""
    hand_cards = list(range(54))
    yield PlayCard(seat, rng.choice(hand_cards))
    yield PlayCard(seat, rng.randrange(-2, 60))
    yield PlayCard((seat + 1) % game.players, rng.choice(hand_cards))
    yield Bid(seat, rng.randrange(-1, 19), blind=rng.random() < 0.3)
    yield PassCards(seat, tuple(rng.sample(hand_cards, rng.randrange(0, 5))))
    yield ExchangeCards(seat, tuple(rng.sample(hand_cards, rng.randrange(0, 4))))
    yield Discard(seat, tuple(rng.sample(hand_cards, rng.randrange(0, 4))))
    yield LookAtHand(seat)
    yield Claim(seat)
    yield DeclareDeficient(seat)
    yield KeepDrawn(seat, rng.random() < 0.5)
    yield PlayCard(game.players + 1, 0)


def play_game(
    ruleset: Ruleset,
    rng: random.Random,
    on_step: Callable[[Game, list[Event]], None] | None = None,
    on_turn: Callable[[Game, int], None] | None = None,
    choose: Callable[[Game, list[Action], random.Random], Action] | None = None,
) -> tuple[Game, int | None, list[bytes]]:
    """A random legal game to its end; returns the game, the first dealer given to `new_game` (None:
    drawn from the first seed, as the ruleset says) and every seed dealt."""
    dealer = rng.choice([None, *range(ruleset.players)])
    game = new_game(ruleset, dealer=dealer)
    seeds_dealt: list[bytes] = []
    for _ in range(MAX_STEPS):
        if game.is_over:
            return game, dealer, seeds_dealt
        if game.phase is Phase.DEALING:
            seed = rng.randbytes(8)
            seeds_dealt.append(seed)
            events = game.deal(seed)
        else:
            to_act = game.to_act()
            assert to_act, f"nobody may act in phase {game.phase}"
            seat = rng.choice(to_act)
            if on_turn is not None:
                on_turn(game, seat)
            legal = game.legal_actions(seat)
            assert legal, f"seat {seat} is to act in phase {game.phase} but has no legal action"
            events = game.apply(rng.choice(legal) if choose is None else choose(game, legal, rng))
        if on_step is not None:
            on_step(game, events)
    raise AssertionError(f"the game did not finish in {MAX_STEPS} steps")


# -- the properties -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=seeds)
def test_random_games_finish_and_every_card_is_played_once(name: str, seed: int) -> None:
    ruleset = capped(name)
    # Each seat's cards when the play of each hand starts, read from its own view.
    starting: dict[int, list[CardMask]] = {}

    def note_hands(game: Game, events: list[Event]) -> None:
        if game.phase is Phase.PLAYING and game.hand_number not in starting:
            hands = [game.view(seat).hand for seat in range(game.players)]
            starting[game.hand_number] = [hand or 0 for hand in hands]

    game, _, _ = play_game(ruleset, random.Random(seed), on_step=note_hands)
    assert game.is_over
    assert game.outcome is not None
    assert game.phase is Phase.GAME_OVER
    assert game.to_act() == ()
    histories = game.histories
    assert 1 <= len(histories) <= MAX_HANDS
    for history in histories:
        check_hand(ruleset, history, starting[history.hand_number])
    for earlier, later in itertools.pairwise(histories):
        assert later.score_before == earlier.score_after
    assert tuple(game.scores) == histories[-1].score_after


def check_hand(ruleset: Ruleset, history: HandHistory, starting: list[CardMask]) -> None:
    """One finished hand: `starting` is each seat's hand when the play began."""
    n = history.players
    cards = [card for _, card in history.plays]
    assert len(set(cards)) == len(cards), "a card was played twice"
    dealt = 0
    for hand in history.deal:
        assert not dealt & hand, "two seats were dealt the same card"
        dealt |= hand
    for seat in range(n):
        assert starting[seat].bit_count() == ruleset.tricks_per_hand
        played = mask_of(card for who, card in history.plays if who == seat)
        if history.claim is None:
            assert played == starting[seat], f"seat {seat} did not play exactly the cards it held"
        else:
            assert not played & ~starting[seat], f"seat {seat} played a card it did not hold"
    if history.claim is None:
        assert len(history.trick_winners) == ruleset.tricks_per_hand
    assert sum(history.tricks) == ruleset.tricks_per_hand
    played_tricks = len(cards) // n
    assert len(cards) == played_tricks * n, "a trick was left unfinished"
    for trick in range(played_tricks):
        seats = [seat for seat, _ in history.plays[trick * n : (trick + 1) * n]]
        assert sorted(seats) == list(range(n)), "a seat played twice to one trick"
        assert seats == [(seats[0] + i) % n for i in range(n)], "play did not go clockwise"
        if trick + 1 < played_tricks:
            assert history.plays[(trick + 1) * n][0] == history.trick_winners[trick]
    if history.claim is None:
        for seat in range(n):
            assert history.tricks[seat] == history.trick_winners.count(seat)
    for before, delta, after in zip(
        history.score_before, history.score_delta, history.score_after, strict=True
    ):
        assert before + delta == after


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=seeds)
def test_apply_accepts_exactly_the_legal_actions_and_a_refusal_changes_nothing(
    name: str, seed: int
) -> None:
    rng = random.Random(seed)
    probes = random.Random(seed ^ 0x5EED)

    def probe(game: Game, seat: int) -> None:
        if probes.random() > 0.25:  # probing every turn would be slow; a quarter finds plenty
            return
        legal = {action_key(action) for action in game.legal_actions(seat)}
        before = canonical(game)
        seen = (game.version, game.phase, game.to_act(), game.view(seat).to_dict())
        tried = []
        for action in candidate_actions(game, seat, probes):
            if action_key(action) in legal:
                continue
            try:
                game.apply(action)
            except IllegalAction:
                pass
            else:
                pytest.fail(
                    f"{action} is not in legal_actions({seat}) but was applied ({game.phase})"
                )
            tried.append(action)
            now = (game.version, game.phase, game.to_act(), game.view(seat).to_dict())
            assert now == seen, f"refusing {action} changed the game"
        # Every seat's view, the legal actions and the histories once after all the refusals.
        assert canonical(game) == before, f"one of these refusals changed the game: {tried}"

    game, _, _ = play_game(capped(name), rng, on_turn=probe)
    before = canonical(game)
    with pytest.raises(IllegalAction):
        game.apply(PlayCard(0, 0))
    assert canonical(game) == before


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=seeds)
def test_no_view_or_event_shows_a_card_its_seat_may_not_know(name: str, seed: int) -> None:
    ruleset = capped(name)
    knowledge = Knowledge(ruleset.players)
    knowledge.reset()

    def observe(game: Game, events: list[Event]) -> None:
        for event in events:
            knowledge.learn(event)
        check_views(game, knowledge, events)

    play_game(ruleset, random.Random(seed), on_step=observe)


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=seeds)
def test_replaying_the_hands_reproduces_the_histories_and_scores(name: str, seed: int) -> None:
    ruleset = capped(name)
    game, dealer, _ = play_game(ruleset, random.Random(seed))
    replay = new_game(ruleset, dealer=dealer)
    for history in game.histories:
        # -1: the first dealer is still to be drawn from the first seed.
        for dead in history.dead_deals:
            assert replay.dealer in (dead.dealer, -1)
            replay.deal(dead.seed)
            assert replay.dealer == dead.dealer
            replay.apply(DeclareDeficient(dead.seat))
        assert replay.dealer in (history.dealer, -1)
        replay.deal(history.seed)
        assert replay.dealer == history.dealer
        for action in history.actions:
            replay.apply(action)
        assert replay.histories[-1] == history
    assert replay.scores == game.scores
    assert replay.outcome == game.outcome


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=seeds)
def test_hand_records_round_trip_and_replay_to_the_same_scores(name: str, seed: int) -> None:
    ruleset = capped(name)
    game, _, _ = play_game(ruleset, random.Random(seed))
    records = [json.loads(json.dumps(record)) for record in game_records(game, game_id="g")]
    assert len(records) == len(game.histories)
    for record, history in zip(records, game.histories, strict=True):
        assert record_to_hand(record) == (history, ruleset)
    assert replay(records) == game.scores


# Presets whose spades break by trumping (000, 002, 003 three-handed): `spades_break = "trumped"`.
BROKEN_BY_TRUMPING = [
    name
    for name in PRESET_NAMES
    if RULESETS[name].game == "spades" and RULESETS[name].spades_break == "trumped"
]


@pytest.mark.parametrize("name", BROKEN_BY_TRUMPING)
@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=seeds)
def test_no_spade_is_led_before_one_trumped_another_suit_unless_the_leader_holds_only_spades(
    name: str, seed: int
) -> None:
    # Worked out from the events alone: a spade (a trump of the deck: jokers and Deuces High's twos
    # too) led is legal only once a spade has been played to a trick led in another suit this hand,
    # or when the leader's hand was nothing but spades.
    ruleset = capped(name)
    order = card_order(ruleset.deck)
    hands: dict[int, CardMask] = {}
    trick: list[int] = []
    trumped = False

    def before_turn(game: Game, seat: int) -> None:
        hands[seat] = game.view(seat).hand or 0

    def after(game: Game, events: list[Event]) -> None:
        nonlocal trumped
        for event in events:
            data = event.to_dict()
            if data["kind"] == "hand_dealt":
                trumped = False
                trick.clear()
            elif data["kind"] == "card_played":
                card = parse_card(data["card"])
                spade = bool(order.trumps >> card & 1)
                if not trick and spade:
                    held = hands[data["seat"]]
                    assert trumped or not held & ~order.trumps, (
                        f"seat {data['seat']} led {data['card']} before spades were broken "
                        f"holding {held:#x}"
                    )
                if trick and spade and order.suit[trick[0]] != TRUMP:
                    trumped = True
                trick.append(card)
            elif data["kind"] == "trick_won":
                trick.clear()

    def hoard_spades(game: Game, legal: list[Action], rng: random.Random) -> Action:
        # Following, mostly keep spades and throw the rest, so hands of nothing but spades come up
        # often; leading, choose freely, so a spade is led whenever one may be.
        if not game.spectator_view().trick:
            return rng.choice(legal)
        others = [a for a in legal if not (isinstance(a, PlayCard) and order.trumps >> a.card & 1)]
        return rng.choice(others if others and rng.random() < 0.9 else legal)

    play_game(ruleset, random.Random(seed), on_step=after, on_turn=before_turn, choose=hoard_spades)


@pytest.mark.parametrize("name", PRESET_NAMES)
@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=seeds)
def test_a_copy_is_independent_of_its_original(name: str, seed: int) -> None:
    rng = random.Random(seed)
    forks = random.Random(seed ^ 0xC0FFEE)

    def fork(game: Game, seat: int) -> None:
        if forks.random() > 0.1:
            return
        before = canonical(game)
        twin = game.copy()
        assert canonical(twin) == before
        for _ in range(forks.randrange(1, 30)):
            if twin.is_over:
                break
            if twin.phase is Phase.DEALING:
                twin.deal(forks.randbytes(8))
                continue
            acting = forks.choice(twin.to_act())
            twin.apply(forks.choice(twin.legal_actions(acting)))
        assert canonical(game) == before, "playing on a copy changed the original"

    play_game(capped(name), rng, on_turn=fork)
