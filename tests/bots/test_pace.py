"""The search bot's `pace=hand`: the hand's time (`ms` for each of its decisions) is one bank, the bid
takes up to three decisions' worth of it, and the hand as a whole keeps to it. Time is a clock that
moves a fixed step at each reading, so the figures count clock reads, whatever the machine's load."""

import pytest

from bots.samples.heuristic import HeuristicBot
from bots.samples.search import PACED_BID_SHARE, SearchBot
from bots.sdk.view import BotView, HandMemory
from engine.game import Phase, new_game
from engine.ruleset import PRESETS
from tests.bots.test_world import SteppingClock

TICK = 0.005  # seconds the clock moves at each reading


def play_hand(bot: SearchBot, deal: bytes) -> list[tuple[str, int, float]]:
    """One hand, `bot` at seat 0 on a stepping clock and the heuristic elsewhere: every decision of
    the bot as (phase, worlds sampled, clock time it took)."""
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=3)
    game.deal(deal)
    others = HeuristicBot(seed=3)
    memories = [HandMemory() for _ in range(4)]
    clock = bot.now = SteppingClock(TICK)
    mine: list[tuple[str, int, float]] = []
    for _ in range(100):
        if game.phase is Phase.DEALING or game.is_over:
            break
        seat = game.to_act()[0]
        view = BotView.from_seat_view(game.view(seat), ruleset, memory=memories[seat])
        if seat != 0:
            game.apply(others.decide(view))
            continue
        before = clock.time
        game.apply(bot.decide(view))
        mine.append((view.phase, bot.last_worlds, clock.time - before))
    return mine


def test_the_search_paces_its_hand_by_default() -> None:
    assert SearchBot().paced and not SearchBot(pace="decision").paced


@pytest.mark.parametrize("pace", ["game", "", 1, None])
def test_the_search_checks_its_pace(pace: object) -> None:
    with pytest.raises(ValueError, match="pace"):
        SearchBot(pace=pace)  # type: ignore[arg-type]


def test_a_paced_bid_takes_more_time_than_one_decision() -> None:
    ms = 30
    steady = play_hand(SearchBot(seed=1, ms=ms, pace="decision"), b"pace-bid")
    paced = play_hand(SearchBot(seed=1, ms=ms, pace="hand"), b"pace-bid")
    assert steady[0][0] == paced[0][0] == "bidding"
    # 30 ms at 5 ms a read: about 6 reads for one decision, about 18 for the paced bid.
    assert steady[0][1] <= 2 + ms / 1000 / TICK
    assert paced[0][1] > 2 + ms / 1000 / TICK
    # The bid's share, and the reads that start and end it and the world it was in (4 at most).
    assert paced[0][2] <= PACED_BID_SHARE * ms / 1000 + 4 * TICK + 1e-9


@pytest.mark.parametrize("deal", [b"pace-1", b"pace-2", b"pace-3"])
def test_a_paced_hand_keeps_to_its_time(deal: bytes) -> None:
    ms = 20
    decisions = play_hand(SearchBot(seed=2, ms=ms, pace="hand"), deal)
    count = len(decisions)
    assert count == 14  # the bid and 13 cards
    spent = sum(seconds for _, _, seconds in decisions)
    # The bank is ms for each decision; a decision may run past its share by the world it is in
    # the middle of (a read or two of this clock) and the two worlds it always samples.
    assert spent <= count * ms / 1000 + count * 3 * TICK


def test_a_new_game_opens_a_new_bank() -> None:
    # Two games of one hand each: the second game's hand has the first's number, and its bid still
    # gets the bid's share of a full bank, not the little the first hand left.
    bot = SearchBot(seed=4, ms=30, pace="hand")
    first = play_hand(bot, b"pace-game-1")
    second = play_hand(bot, b"pace-game-1")
    assert first[0][0] == second[0][0] == "bidding"
    assert second[0][1] > 2 + 30 / 1000 / TICK


def test_a_paced_decision_still_keeps_to_half_the_clock_it_has_left() -> None:
    # The bid's share would be 3 x 200 ms; with 0.1 s on the clock there is no time to spare, so
    # the bid samples only the two worlds a decision always samples.
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=3)
    game.deal(b"pace-clock")
    view = BotView.from_seat_view(game.view(0), ruleset, deadline=0.1)
    assert view.phase == "bidding"
    bot = SearchBot(seed=5, ms=200)
    bot.now = SteppingClock(TICK)
    bot.decide(view)
    assert bot.last_worlds == 2
