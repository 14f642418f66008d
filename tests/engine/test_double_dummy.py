"""The double-dummy solver (engine/double_dummy.py) against a plain minimax over the engine's own
rules on endings small enough to search whole, for every four-handed preset (and each play rule of
Crazy Spades' schedule), and against DDS (the `endplay` package) where Spades and bridge coincide."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions import Bid
from engine.double_dummy import BudgetExceeded, DoubleDummyError, Position, Solver, solve
from engine.ordering import ORDERS
from engine.ruleset import PRESETS, Ruleset
from engine.spades import SpadesGame
from tests.engine.helpers import ending

# Every four-handed preset, with the hand numbers of Crazy Spades that change the play rule.
FOUR_HANDED = [name for name, r in PRESETS.items() if r.partnerships]
CASES = [(name, 1) for name in FOUR_HANDED] + [
    ("crazy", 1 + PRESETS["crazy"].hand_schedule.index(kind))
    for kind in ("pressure", "nothing_but_spades")
]


def minimax(game: SpadesGame) -> int:
    """Side 0's tricks from here with perfect play, by trying every legal card (the engine's rules)."""
    if game.tricks_done == 13:
        return 0
    seat = game.turn
    legal = game.legal_play_mask(seat)
    done = game.tricks_done
    values = []
    for card in range(54):
        if legal >> card & 1:
            child = game.copy()
            child.play_fast(card)
            won = 1 if child.tricks_done > done and child.last_trick_winner % 2 == 0 else 0
            values.append(won + minimax(child))
    return max(values) if seat % 2 == 0 else min(values)


def random_ending(ruleset: Ruleset, hand_number: int, rng: random.Random, size: int) -> SpadesGame:
    """`size` cards a seat from a shuffled deck, a random leader and breaking, then 0-3 random
    legal cards of the first trick played."""
    _, game = ending(ruleset, hand_number, rng, size, break_at_random=True)
    for _ in range(rng.randrange(4)):
        legal = game.legal_play_mask(game.turn)
        game.play_fast(rng.choice([c for c in range(54) if legal >> c & 1]))
    return game


@settings(max_examples=150, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32), size=st.integers(2, 3))
def test_the_solver_equals_minimax_on_small_endings(
    case: tuple[str, int], seed: int, size: int
) -> None:
    name, hand_number = case
    game = random_ending(PRESETS[name], hand_number, random.Random(seed), size)
    solution = solve(Position.of_game(game))
    done = game.tricks_done
    assert solution.tricks[0] == minimax(game)
    assert sum(solution.tricks) == 13 - done
    seat = game.turn
    legal = game.legal_play_mask(seat)
    assert set(solution.card_tricks) == {c for c in range(54) if legal >> c & 1}
    for card, won in solution.card_tricks.items():
        child = game.copy()
        child.play_fast(card)
        side0 = minimax(child)
        if child.tricks_done > done and child.last_trick_winner % 2 == 0:
            side0 += 1
        assert won == (side0 if seat % 2 == 0 else 13 - done - side0), card


@pytest.mark.parametrize(("index", "case"), list(enumerate(CASES)))
def test_the_solver_equals_minimax_with_four_tricks_a_hand(
    index: int, case: tuple[str, int]
) -> None:
    name, hand_number = case
    rng = random.Random(index)
    game = random_ending(PRESETS[name], hand_number, rng, 4)
    assert solve(Position.of_game(game), per_card=False).tricks[0] == minimax(game)


def _pbn(hands: list[int]) -> str:
    return "N:" + " ".join(
        ".".join(
            "".join("23456789TJQKA"[r] for r in range(12, -1, -1) if hand >> (13 * s + r) & 1)
            for s in (3, 2, 1, 0)
        )
        for hand in hands
    )


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(1, 6))
def test_the_solver_equals_dds_where_spades_is_bridge(seed: int, size: int) -> None:
    endplay_types = pytest.importorskip("endplay.types", reason="endplay (DDS) is not installed")
    endplay_dds = pytest.importorskip("endplay.dds", reason="endplay (DDS) is not installed")
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[size * s : size * s + size]) for s in range(4)]
    leader = rng.randrange(4)
    deal = endplay_types.Deal.from_pbn(_pbn(hands))
    deal.trump = endplay_types.Denom.spades
    deal.first = endplay_types.Player(leader)
    dds = {
        (3 - int(card.suit)) * 13 + int(card.rank).bit_length() - 3: won
        for card, won in endplay_dds.solve_board(deal)
    }
    # Spades broken: leading a spade is allowed, as in bridge with spades trumps.
    position = Position.of_ruleset(PRESETS["standard"], hands, leader, spades_broken=True)
    solution = solve(position)
    assert solution.card_tricks == dds
    # With no spade left anywhere, the breaking rule cannot matter.
    if not any(h & ORDERS["standard"].trumps for h in hands):
        unbroken = Position.of_ruleset(PRESETS["yahoo"], hands, leader, spades_broken=False)
        assert solve(unbroken).card_tricks == dds


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"deck": "pinochle"}, "unknown deck"),
        ({"leader": 4}, "leader"),
        ({"hands": (1, 1, 4, 8)}, "two seats"),
        ({"hands": (1, 2, 4, 8 | 16)}, "add up"),
        ({"trick": (1,)}, "both in the trick"),
        ({"hands": (1, 2, 4, 1 << 52)}, "not in the standard deck"),
        ({"play_rule": "fast"}, "play_rule"),
        ({"hands": (0, 0, 0, 0)}, "no trick"),
    ],
)
def test_a_position_that_cannot_occur_is_refused_with_a_sentence(
    change: dict[str, object], words: str
) -> None:
    base = Position((1, 2, 4, 8), 0)
    fields = {
        "hands": base.hands,
        "leader": base.leader,
        "trick": base.trick,
        "deck": base.deck,
        "play_rule": base.play_rule,
    }
    fields.update(change)
    with pytest.raises(DoubleDummyError, match=words) as caught:
        solve(Position(**fields))  # type: ignore[arg-type]
    assert caught.value.code == "bad_position"


def test_a_game_outside_its_play_phase_is_refused() -> None:
    game = SpadesGame(PRESETS["standard"], dealer=0)
    with pytest.raises(DoubleDummyError, match="play phase"):
        Position.of_game(game)
    with pytest.raises(DoubleDummyError, match="four-handed"):
        Position.of_ruleset(PRESETS["three-player"], [1, 2, 4], 0)


def test_unbroken_spades_change_some_results_so_it_is_no_bridge_solver() -> None:
    rng = random.Random(7)
    differ = 0
    for _ in range(200):
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [sum(1 << c for c in deck[3 * s : 3 * s + 3]) for s in range(4)]
        broken = solve(Position.of_ruleset(PRESETS["standard"], hands, 0, spades_broken=True))
        closed = solve(Position.of_ruleset(PRESETS["standard"], hands, 0, spades_broken=False))
        differ += broken.tricks != closed.tricks
    assert differ > 0


@pytest.mark.parametrize("seed", range(6))
def test_longer_endings_equal_dds_where_spades_is_bridge(seed: int) -> None:
    # Eight tricks a hand: past what minimax can check, where the bounds and the table do the work.
    endplay_types = pytest.importorskip("endplay.types", reason="endplay (DDS) is not installed")
    endplay_dds = pytest.importorskip("endplay.dds", reason="endplay (DDS) is not installed")
    rng = random.Random(1000 + seed)
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[8 * s : 8 * s + 8]) for s in range(4)]
    leader = seed % 4
    deal = endplay_types.Deal.from_pbn(_pbn(hands))
    deal.trump = endplay_types.Denom.spades
    deal.first = endplay_types.Player(leader)
    best = max(won for _, won in endplay_dds.solve_board(deal))
    position = Position.of_ruleset(PRESETS["standard"], hands, leader, spades_broken=True)
    assert solve(position, per_card=False).tricks[leader % 2] == best


def test_under_pressure_a_partner_out_of_the_suit_trumps_and_takes_the_lead() -> None:
    # Found by a random search: North's cashing of clubs is no sure trick under pressure when South
    # is out of clubs and holds a spade, for South must trump and lead next (2 tricks, not 3).
    ruleset = PRESETS["crazy"]
    hand_number = 1 + ruleset.hand_schedule.index("pressure")
    hands = [35253091566624, 60397977600, 551903567872, 2199027482632]
    game = SpadesGame.position(
        ruleset,
        hands=hands,
        dealer=0,
        bids=[Bid(seat=s, tricks=1) for s in range(4)],
        leader=1,
        tricks_won=[9, 0, 0, 0],
        hand_number=hand_number,
    )
    assert game.play_rule == "pressure"
    assert solve(Position.of_game(game)).tricks == (minimax(game), 4 - minimax(game)) == (2, 2)


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32), size=st.integers(3, 6))
def test_one_solver_along_a_hand_answers_as_a_fresh_one_at_every_card(
    case: tuple[str, int], seed: int, size: int
) -> None:
    # The table's entries are facts about every position of the same shape, so a solver that kept
    # them from the earlier positions of the hand (and from a wrong guess) answers the same.
    name, hand_number = case
    rng = random.Random(seed)
    game = random_ending(PRESETS[name], hand_number, rng, size)
    solver = Solver()
    while game.tricks_done < 13:
        position = Position.of_game(game)
        fresh = solve(position)
        kept = solver.solve(position, guess=rng.randrange(14))
        assert (kept.tricks, kept.card_tricks) == (fresh.tricks, fresh.card_tricks)
        legal = game.legal_play_mask(game.turn)
        game.play_fast(rng.choice([c for c in range(54) if legal >> c & 1]))


def test_a_search_past_its_budget_stops_and_the_solver_goes_on() -> None:
    rng = random.Random(5)
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[9 * s : 9 * s + 9]) for s in range(4)]
    position = Position.of_ruleset(PRESETS["standard"], hands, 0)
    solver = Solver()
    with pytest.raises(BudgetExceeded):
        solver.solve(position, budget=5)
    whole = solve(position)
    assert whole.nodes > 5
    again = solver.solve(position, budget=whole.nodes)
    assert (again.tricks, again.card_tricks) == (whole.tricks, whole.card_tricks)
