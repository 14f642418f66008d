"""The scenarios a bot program is put through: for each, the table the kit opens, how its server
runs, the token the bot is given, and the script (`server.conformance.scripts`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import trio

from bots.conformance.report import Findings
from engine.ruleset import Ruleset
from protocol.types import Clock, Game, Options
from server.conformance import scripts
from server.conformance.decisions import blind_nil_when_offered, kinds_for_seat
from server.conformance.rules import Allowance
from server.conformance.run import BotRun, Script, Setting, Table
from server.conformance.scripts import IDLE_TIMEOUT, PAUSE, RATE_BURST, RATE_PER_SECOND
from server.conformance.seats import blind_nil_first, first_legal, no_pause

ONE_HAND: Options = {"max_hands": 1, "target_score": 0}


@dataclass(frozen=True)
class BotScenario:
    name: str
    what: str
    table: Table
    script: Script
    setting: Setting = field(default_factory=Setting)
    token: str | None = "good"
    allowance: Allowance = field(default_factory=Allowance)
    kinds: frozenset[str] = frozenset()  # decision kinds the bot must be offered (and answer)
    timeout: float = 90.0


def players_of(preset: str) -> int:
    return Ruleset.from_preset(preset).players


def game_of(preset: str) -> Game:
    return Game(Ruleset.from_preset(preset).game)


def one_hand(preset: str, **extra: object) -> Options:
    options: Options = dict(ONE_HAND)
    if preset == "joker":
        options["first_dealer"] = 0  # the dealer sets cards aside: make the bot deal
    options.update(extra)  # type: ignore[arg-type]
    return options


def builtin_table(preset: str, **extra: object) -> Table:
    return Table(
        game_of(preset),
        preset,
        one_hand(preset, **extra),
        builtin=tuple(range(1, players_of(preset))),
    )


def expected_kinds(table: Table, policies: dict[int, object] | None = None) -> frozenset[str]:
    ruleset = Ruleset.from_preset(table.preset, **dict(table.options))
    return kinds_for_seat(ruleset, 0, policies or {})  # type: ignore[arg-type]


# ---------------------------------------------------------------- the list


def scenarios_for(presets: Sequence[str]) -> list[BotScenario]:
    """The scenarios for a bot that plays `presets` (the first is its main game). Each is run
    once: some hold state of their own (the idle scenario's pause)."""
    main = presets[0]
    spades = [p for p in presets if game_of(p) is Game.SPADES]
    hearts = [p for p in presets if game_of(p) is Game.HEARTS]
    out: list[BotScenario] = []
    table = builtin_table(main)
    out.append(
        BotScenario(
            "handshake-token",
            f"hello with SPADES_TOKEN, join SPADES_TABLE, a hand of {main}",
            table,
            scripts.with_kinds(scripts.with_token, expected_kinds(table)),
            kinds=expected_kinds(table),
        )
    )
    out.append(
        BotScenario(
            "no-token",
            "no SPADES_TOKEN: stop with a non-zero exit, or play another way; no loop",
            table,
            scripts.without_usable_token,
            token=None,
        )
    )
    out.append(
        BotScenario(
            "bad-token",
            "a token no account has: bad_token after welcome; stop or log in another way",
            table,
            scripts.without_usable_token,
            token="bad",
            allowance=Allowance(refusals=frozenset({"bad_token"})),
        )
    )
    for preset in presets[1:]:
        table = builtin_table(preset)
        kinds = expected_kinds(table)
        out.append(
            BotScenario(
                f"play-{preset}",
                f"a hand of {preset}: every decision ({', '.join(sorted(kinds))}) legal and in time",
                table,
                scripts.with_kinds(scripts.play, kinds),
                kinds=kinds,
            )
        )
    if hearts:
        out.append(
            BotScenario(
                "hearts-pass",
                "its pass your_turn arrives after the other three passed: one pass, accepted",
                Table(
                    Game.HEARTS,
                    hearts[0],
                    {**ONE_HAND, "hearts_pass_cycle": ["left"]},
                    kit={seat: (first_legal, no_pause) for seat in (1, 2, 3)},
                ),
                scripts.hearts_pass,
            )
        )
    if spades:
        blind = Table(
            Game.SPADES,
            "yahoo",
            {**ONE_HAND, "blind_nil_behind": 0, "first_dealer": 1},
            builtin=(1, 3),
            kit={2: (blind_nil_first, no_pause)},
        )
        kinds = expected_kinds(blind, {2: blind_nil_when_offered})
        out.append(
            BotScenario(
                "blind-nil",
                "blind nil offered (look or bid blind), and the partner's blind nil to exchange for",
                blind,
                scripts.with_kinds(scripts.play, kinds),
                kinds=kinds,
            )
        )
    base = spades[0] if spades else main
    out.append(
        BotScenario(
            "stale-turn",
            "its first act arrives after the clock played for it: refused, not resent, play goes on",
            Table(
                game_of(base),
                base,
                one_hand(base),
                builtin=tuple(range(1, players_of(base))),
                clock=Clock(turn_ms=3000, bank_ms=0),
            ),
            scripts.stale_turn,
            allowance=Allowance(
                refusals=frozenset({"stale_version", "not_your_turn"}), clock_expiries=1
            ),
        )
    )
    out.append(
        BotScenario(
            "drop-resume",
            "the connection is cut at its third act: it comes back with its token and finishes",
            builtin_table(base),
            scripts.drop_and_resume,
            allowance=Allowance(clock_expiries=1),
        )
    )
    out.append(idle_scenario(base))
    out.append(
        BotScenario(
            "rate-limited",
            "its first request after hello is rate_limited: sent again after retry_ms, not sooner",
            builtin_table(base),
            scripts.rate_limited,
            setting=Setting(
                limits={"max_messages_per_second": RATE_PER_SECOND, "max_message_burst": RATE_BURST}
            ),
            allowance=Allowance(refusals=frozenset({"rate_limited"})),
        )
    )
    out.append(
        BotScenario(
            "bye",
            "the server says bye: nothing more on that connection, closed at once",
            builtin_table(base),
            scripts.server_bye,
            allowance=Allowance(clock_expiries=2),
        )
    )
    return out


def idle_scenario(preset: str) -> BotScenario:
    players = players_of(preset)
    kit_seat = 2 if players == 4 else 1
    started = trio.Event()
    table = Table(
        game_of(preset),
        preset,
        one_hand(preset, first_dealer=players - 1) if preset != "joker" else one_hand(preset),
        builtin=tuple(s for s in range(1, players) if s != kit_seat),
        kit={kit_seat: (first_legal, scripts.first_pause(PAUSE, started))},
    )

    async def script(run: BotRun, findings: Findings) -> None:
        await scripts.idle_ping(run, findings, started)

    return BotScenario(
        "idle-ping",
        f"another seat thinks {PAUSE:g} s (idle timeout {IDLE_TIMEOUT:g} s): it pings, and answers ping",
        table,
        script,
        setting=Setting(limits={"idle_timeout": IDLE_TIMEOUT}),
    )
