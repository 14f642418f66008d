"""Public position constructors for searching bots: `HeartsGame.position` (the twin of
`SpadesGame.position`), `SpadesGame.position(played=)` and `deal_fixed(hand_number=, scores=, bags=)`."""

import random
from collections.abc import Callable

import pytest

from engine.actions import Bid, LookAtHand
from engine.cards import CardMask
from engine.errors import IllegalAction
from engine.events import TrickWon
from engine.game import Phase
from engine.hearts import HeartsGame
from engine.ruleset import PRESETS
from engine.spades import SpadesGame


def chooser(seed: int) -> Callable[[CardMask], int]:
    rng = random.Random(seed)
    return lambda mask: rng.choice([c for c in range(52) if mask >> c & 1])


@pytest.mark.parametrize("players", [4, 3])
@pytest.mark.parametrize("seed", range(6))
def test_a_hearts_position_built_from_the_facts_plays_out_like_the_game(
    players: int, seed: int
) -> None:
    cycle = ("left", "right", "across", "none") if players == 4 else ("left", "right", "none")
    ruleset = PRESETS["hearts"].with_options(players=players, hearts_pass_cycle=cycle)
    rng = random.Random(seed)
    game = HeartsGame(ruleset, dealer=seed % players)
    history: list[tuple[tuple[int, int], ...]] = []
    for hand in range(2):  # into the second hand, so scores and the hand number matter
        game.deal(bytes([seed, hand + 1]))
        history = []
        while game.phase is not Phase.PLAYING:
            game.apply(rng.choice(game.legal_actions(game.to_act()[0])))
        stop = rng.randrange(1, 12 * players) if hand == 1 else 99
        for _ in range(stop):
            if game.phase is not Phase.PLAYING:
                break
            for event in game.apply(rng.choice(game.legal_actions(game.to_act()[0]))):
                if isinstance(event, TrickWon):
                    history.append(event.plays)
    assert game.phase is Phase.PLAYING
    view = game.spectator_view()
    built = HeartsGame.position(
        ruleset,
        hands=[game.hand(s) for s in range(players)],
        dealer=game.dealer,
        leader=view.leader,
        trick=view.trick,
        history=history,
        broken=view.broken,
        hand_number=game.hand_number,
        scores=game.scores,
        pass_direction=game.pass_direction,
    )
    seat = game.to_act()[0]
    assert built.to_act() == game.to_act()
    assert built.legal_play_mask(seat) == game.legal_play_mask(seat)
    mine = built.spectator_view()
    assert (mine.tricks, mine.played, mine.trick, mine.points) == (
        view.tricks,
        view.played,
        view.trick,
        view.points,
    )
    twin = game.copy()
    twin.play_to_end(chooser(seed))
    built.play_to_end(chooser(seed))
    assert built.scores == twin.scores
    assert built.histories[-1].plays == twin.histories[-1].plays
    assert built.histories[-1].trick_winners == twin.histories[-1].trick_winners


def test_a_hearts_position_that_does_not_add_up_is_refused() -> None:
    ruleset = PRESETS["hearts"]
    with pytest.raises(IllegalAction):
        HeartsGame.position(ruleset, hands=[0] * 4, dealer=0, leader=0)
    with pytest.raises(IllegalAction):  # 13 tricks' worth of cards, but one trick already won
        HeartsGame.position(
            ruleset,
            hands=[0x1FFF << (13 * s) for s in range(4)],
            dealer=0,
            leader=0,
            tricks_won=[1, 0, 0, 0],
        )


def test_spades_position_takes_the_played_cards_when_the_history_is_missing() -> None:
    ruleset = PRESETS["standard"]
    game = SpadesGame(ruleset, dealer=0)
    game.deal(b"played")
    while game.phase is Phase.BIDDING:
        game.apply(game.legal_actions(game.to_act()[0])[-1])
    rng = random.Random(1)
    for _ in range(9):
        game.apply(rng.choice(game.legal_actions(game.to_act()[0])))
    view = game.spectator_view()
    built = SpadesGame.position(
        ruleset,
        hands=[game.hand(s) for s in range(4)],
        dealer=0,
        bids=[b for b in game.bids if b is not None],
        leader=view.leader,
        trick=view.trick,
        tricks_won=game.tricks,
        broken=view.broken,
        played=game.played,
    )
    assert built.played == game.played and built.tricks == game.tricks


def test_deal_fixed_can_start_a_later_hand_with_the_scores_and_bags() -> None:
    ruleset = PRESETS["standard"]
    plain = SpadesGame(ruleset, dealer=1)
    plain.deal(b"reference")
    hands = [plain.hand(s) for s in range(4)]
    game = SpadesGame(ruleset, dealer=1)
    game.deal_fixed(hands, hand_number=5, scores=[212, -40], bags=[2, 7])
    assert (game.hand_number, game.scores, game.bags) == (5, (212, -40), (2, 7))
    assert game.phase is Phase.BIDDING and game.to_act() == (2,)
    for seat in (2, 3, 0, 1):
        if LookAtHand(seat) in game.legal_actions(seat):
            game.apply(LookAtHand(seat))
        game.apply(Bid(seat, 3))
    game.play_to_end(chooser(0))
    scored = game.histories[-1]
    assert scored.hand_number == 5
    with pytest.raises(IllegalAction):
        SpadesGame(ruleset, dealer=1).deal_fixed(hands, scores=[0, 0, 0])
    fresh = SpadesGame(ruleset, dealer=1)
    fresh.deal_fixed(hands)
    assert (fresh.hand_number, fresh.scores, fresh.bags) == (1, (0, 0), (0, 0))
