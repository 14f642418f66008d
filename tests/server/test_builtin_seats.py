"""Built-in seats: they act only on the current version, think off the trio thread, remember the
hand's tricks, and fall back to one of the engine's full legal actions when their bot raises."""

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import trio
from structlog.testing import capture_logs

from bots.sdk.bot import Bot
from bots.sdk.view import BotView
from engine.actions import Action as EngineAction
from engine.actions import action_to_dict
from engine.game import Phase, new_game
from engine.ruleset import Ruleset
from protocol.messages import (
    CreateTable,
    GameOver,
    Guest,
    LoggedIn,
    Spectate,
    TableClosed,
    TableCreated,
    Welcome,
)
from protocol.types import Game
from server.app import local_config, running_server
from server.seats import decide_off_loop, make_decider
from tests.server.wire_client import WireClient

RAISING = "tests.server.test_builtin_seats:RaisingBot"
RECORDING = "tests.server.test_builtin_seats:RecordingBot"


class RaisingBot(Bot):
    """A sample bot with a bug in every decision."""

    def decide(self, view: BotView) -> EngineAction:
        raise RuntimeError("this bot always raises")


class RecordingBot(Bot):
    """Plays the first legal action and notes how many earlier tricks of the hand it was shown."""

    seen: ClassVar[list[tuple[int, str, int]]] = []  # (hand, phase, len(history)), across instances

    def decide(self, view: BotView) -> EngineAction:
        RecordingBot.seen.append((view.hand_number, view.phase, len(view.history)))
        return view.legal[0]


def _play_out(ruleset: Ruleset, spec: str, *, max_actions: int = 4000) -> Counter[str]:
    """A game of `ruleset` with `spec` deciding every seat through `make_decider`, as a table's
    built-in seats do; asserts each action is one of the engine's legal actions; counts kinds."""
    game = new_game(ruleset)
    deciders = [make_decider(spec, seed, ruleset) for seed in range(ruleset.players)]
    assert all(used == spec for used, _ in deciders)
    kinds: Counter[str] = Counter()
    deal = 0
    for _ in range(max_actions):
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            deal += 1
            game.deal(deal.to_bytes(32, "big"))
            continue
        seat = game.to_act()[0]
        legal = game.legal_actions(seat)
        action = deciders[seat][1](game.view(seat), legal)
        assert action in legal
        kinds[str(action_to_dict(action)["kind"])] += 1
        game.apply(action)
    return kinds


def test_a_raising_bot_falls_back_to_the_engines_full_legal_actions() -> None:
    # Hearts passing: the view's own legal list leaves out the 286 ways to pass.
    hearts = _play_out(Ruleset.from_preset("hearts", target_score=40), RAISING)
    assert hearts["pass"] >= 4 and hearts["play"] > 0
    # Joker Spades: the dealer discards two cards each hand.
    joker = _play_out(Ruleset.from_preset("joker", target_score=150), RAISING)
    assert joker["discard"] >= 1 and joker["play"] > 0
    # A blind-nil exchange between partners (offered from the first hand).
    yahoo = _play_out(Ruleset.from_preset("yahoo", blind_nil_behind=0, target_score=300), RAISING)
    assert yahoo["exchange"] >= 1, yahoo


def test_builtin_seats_remember_the_hands_tricks() -> None:
    RecordingBot.seen.clear()
    _play_out(Ruleset.from_preset("standard", target_score=60), RECORDING, max_actions=400)
    plays = [history for _hand, phase, history in RecordingBot.seen if phase == "playing"]
    # Late in a hand a seat is shown far more than the current and the last trick.
    assert plays and max(plays) >= 10
    # ... and the memory starts again with each hand.
    firsts: dict[int, int] = {}
    for hand, phase, history in RecordingBot.seen:
        if phase == "playing":
            firsts.setdefault(hand, history)
    assert firsts and all(n <= 1 for n in firsts.values())


async def test_decisions_run_off_the_trio_thread_within_the_deadline() -> None:
    """A decision runs in a worker thread: the server's loop keeps running while the bot thinks, and
    a bot that overruns its deadline is abandoned. Threading events, not wall-clock bounds, say so:
    the first bot is blocked until after its call has returned None; the second answers only once
    the loop has ticked twenty times while it waited."""
    ruleset = Ruleset.from_preset("standard")
    game = new_game(ruleset)
    game.deal(bytes(32))
    seat = game.to_act()[0]
    legal = game.legal_actions(seat)
    ticks = 0
    released = threading.Event()  # the overrunning bot may finish
    ticked = threading.Event()  # the loop ran twenty times while a bot thought

    def overrunning(view: Any, legal: list[EngineAction]) -> EngineAction:
        trio.from_thread.check_cancelled()  # raises if we were not in a trio worker thread
        released.wait(10)
        return legal[0]

    def waits_for_the_loop(view: Any, legal: list[EngineAction]) -> EngineAction:
        trio.from_thread.check_cancelled()
        assert ticked.wait(10), "the loop stood still while the bot thought"
        return legal[0]

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await trio.sleep(0.001)
            ticks += 1
            if ticks >= 20:
                ticked.set()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            start = trio.current_time()
            late = await decide_off_loop(overrunning, game.view(seat), legal, deadline=start + 0.1)
            assert late is None and not released.is_set()  # the deadline came first
            released.set()
            nursery.start_soon(ticker)
            done = await decide_off_loop(
                waits_for_the_loop, game.view(seat), legal, deadline=trio.current_time() + 20
            )
            assert done == legal[0]
            nursery.cancel_scope.cancel()
    assert ticks >= 20  # the loop kept running while the bot thought


async def _bot_game(port: int, game: Game, preset: str, options: dict[str, Any]) -> None:
    client = await WireClient.connect(port)
    assert isinstance(await client.hello(), Welcome)
    assert isinstance(await client.request(Guest()), LoggedIn)
    created = await client.request(
        CreateTable(game=game, preset=preset, options=options, bots=[0, 1, 2, 3])
    )
    assert isinstance(created, TableCreated), created
    await client.request(Spectate(table=created.table))
    end = await client.expect(GameOver | TableClosed)
    assert isinstance(end, GameOver), end
    await client.aclose()


def _refusals(logs: Sequence[Mapping[str, Any]]) -> Counter[str]:
    return Counter(str(e.get("code")) for e in logs if e.get("event") == "bot_action_refused")


async def test_builtin_seats_never_act_on_a_stale_version(tmp_path: Path) -> None:
    # Hearts passes are simultaneous (every seat acts at the same version), so a seat's decision
    # is often overtaken by another's; none of them may reach the table as a stale act.
    games: list[tuple[Game, str, dict[str, Any]]] = [
        (Game.HEARTS, "hearts", {"target_score": 40}),
        (Game.HEARTS, "hearts", {"target_score": 40}),
        (Game.SPADES, "joker", {"target_score": 150}),
        (Game.SPADES, "yahoo", {"target_score": 150, "blind_nil_behind": 0}),
    ]
    with capture_logs() as logs, trio.fail_after(120):
        config = local_config(tmp_path / "server.db")
        async with running_server(config) as server, trio.open_nursery() as nursery:
            for game, preset, options in games:
                nursery.start_soon(_bot_game, server.port, game, preset, options)
    assert sum(1 for e in logs if e.get("event") == "game_over") == 4
    assert _refusals(logs) == Counter()
    assert not [e for e in logs if e.get("event") == "clock_expired"]


async def test_a_raising_builtin_bot_still_finishes_its_games(tmp_path: Path) -> None:
    config = local_config(tmp_path / "server.db", builtin_bot=RAISING)
    with capture_logs() as logs, trio.fail_after(120):
        async with running_server(config) as server, trio.open_nursery() as nursery:
            nursery.start_soon(_bot_game, server.port, Game.HEARTS, "hearts", {"target_score": 20})
            nursery.start_soon(_bot_game, server.port, Game.SPADES, "joker", {"max_hands": 2})
    assert sum(1 for e in logs if e.get("event") == "game_over") == 2
    assert any(e.get("event") == "builtin_bot_failed" for e in logs)
    assert _refusals(logs) == Counter()  # every fallback was one of the engine's legal actions
