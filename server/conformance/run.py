"""One scenario's run: a server, the proxy, the kit's seats, and the bot program, all on 127.0.0.1.

`BotRun` is what a scenario's script is given: the timeline, the proxy's hooks, the bot's process,
and ways to wait (bounded) for what the bot or the server does.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import trio

from bots.conformance import claims
from bots.conformance.report import Failed, Findings
from bots.conformance.target import Target, Visit
from protocol.messages import GameOver, Message
from protocol.types import ClientKind, Clock, Game, Options
from server.app import local_config, running_server
from server.config import Limits
from server.conformance.proxy import Proxy, Source, Timeline
from server.conformance.rules import Seen
from server.conformance.seats import Choose, KitSeat, Pause

#: How long a bot has to leave once its game is over before the kit stops it (not a failure).
EXIT_WITHIN = 5.0
STDERR_TAIL = 1500


@dataclass(frozen=True)
class Table:
    """The table a scenario opens for the bot: built-in bots, the kit's own seats, and one free
    seat left for the bot."""

    game: Game
    preset: str
    options: Options = field(default_factory=dict)
    builtin: tuple[int, ...] = ()
    kit: Mapping[int, tuple[Choose, Pause]] = field(default_factory=dict)
    clock: Clock | None = None


@dataclass(frozen=True)
class Setting:
    """How the scenario's server runs (anything `ServerConfig` and `Limits` take)."""

    limits: Mapping[str, Any] = field(default_factory=dict)
    server: Mapping[str, Any] = field(default_factory=dict)


class BotRun:
    """A bot program playing one scenario."""

    def __init__(
        self, visit: Visit, proxy: Proxy, timeline: Timeline, table: str, token: str
    ) -> None:
        self.visit = visit
        self.proxy = proxy
        self.timeline = timeline
        self.table = table
        self.token = token
        self.process: trio.Process | None = None
        self.exited = trio.Event()
        self.returncode: int | None = None
        self.stderr_path: Path | None = None
        self.seats: list[KitSeat] = []

    def seen(self) -> Seen:
        return Seen.of(self.timeline)

    def game_over(self) -> bool:
        """Whether the bot's connection was sent its table's `game_over`."""
        return any(
            e.source is Source.SERVER
            and e.forwarded
            and isinstance(e.message, GameOver)
            and e.message.table == self.table
            for e in self.timeline.entries
        )

    def messages_from_bot(self) -> list[Message]:
        return [e.message for e in self.timeline.entries if e.source is Source.BOT and e.message]

    async def until(
        self, condition: Callable[[], bool], within: float, what: str, section: claims.Section
    ) -> None:
        """Wait until `condition()` holds; Failed(what) if it does not within `within` seconds, or
        if the bot exits first (its stderr's tail in the sentence)."""
        with trio.move_on_after(within):
            while not condition():
                if self.exited.is_set():
                    raise Failed(f"{what}: the bot exited first ({self.exit_words()})", section)
                await self.timeline.until(lambda: condition() or self.exited.is_set())
            return
        raise Failed(f"{what} within {within:g} s", section)

    def exit_words(self) -> str:
        tail = self.stderr_tail()
        code = f"exit code {self.returncode}"
        return f"{code}; its stderr ends: {tail}" if tail else code

    def stderr_tail(self) -> str:
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        text = self.stderr_path.read_text(encoding="utf-8", errors="replace").strip()
        return " | ".join(text[-STDERR_TAIL:].splitlines()[-6:])


async def open_table(visit: Visit, spec: Table) -> tuple[str, list[KitSeat]]:
    """Open the table and seat the kit's players (the bot takes the seat left free)."""
    host = await visit.player(prefix="ckhost")
    created = await host.create(
        spec.game, spec.preset, dict(spec.options), bots=list(spec.builtin), clock=spec.clock
    )
    seats: list[KitSeat] = []
    for seat, (choose, pause) in sorted(spec.kit.items()):
        player = await visit.player(prefix="ckseat")
        await player.join(created.table, seat=seat)
        seats.append(KitSeat(player, created.table, choose, pause))
    return created.table, seats


@asynccontextmanager
async def bot_run(
    command: Sequence[str],
    workdir: Path,
    spec: Table,
    setting: Setting,
    *,
    token: str | None = "good",
    kind: ClientKind = ClientKind.BOT,
    cwd: Path | None = None,
) -> AsyncIterator[BotRun]:
    """A server, a proxy, the table, the kit's seats, and the bot started against them. `token`:
    "good" (a registered account's), "bad" (one no account has) or None (no SPADES_TOKEN)."""
    limits = replace(Limits(), **dict(setting.limits))
    config = local_config(workdir / "server.db", limits=limits, **dict(setting.server))
    async with running_server(config) as server, trio.open_nursery() as nursery:
        timeline = Timeline()
        proxy = Proxy(("127.0.0.1", server.port), timeline)
        port = await nursery.start(proxy.serve)
        target = Target("127.0.0.1", server.port)
        async with target.session() as visit:
            account = await visit.player(kind, prefix="ckbot")
            await account.client.aclose()
            table, seats = await open_table(visit, spec)
            secret = (
                account.token
                if token == "good"
                else _forged(account.token)
                if token == "bad"
                else None
            )
            run = BotRun(visit, proxy, timeline, table, secret or "")
            run.seats = seats
            for seat in seats:
                nursery.start_soon(seat.run)
            env = dict(os.environ)
            env["SPADES_SERVER"] = f"127.0.0.1:{port}"
            env["SPADES_TABLE"] = table
            env.pop("SPADES_TOKEN", None)
            if secret is not None:
                env["SPADES_TOKEN"] = secret
            run.stderr_path = workdir / "bot.stderr"
            nursery.start_soon(_run_bot, run, list(command), env, workdir, cwd)
            try:
                yield run
            finally:
                nursery.cancel_scope.cancel()


def _forged(token: str) -> str:
    """A token of the right form that no account has (the last character changed)."""
    last = token[-1:]
    return token[:-1] + ("A" if last != "A" else "B")


async def _run_bot(
    run: BotRun, command: list[str], env: dict[str, str], workdir: Path, cwd: Path | None
) -> None:
    assert run.stderr_path is not None
    with (workdir / "bot.stdout").open("wb") as out, run.stderr_path.open("wb") as err:
        try:
            done = await trio.run_process(
                command, env=env, stdout=out, stderr=err, check=False, cwd=cwd
            )
            run.returncode = done.returncode
        except OSError as exc:
            err.write(f"the kit could not start {command[0]!r}: {exc}\n".encode())
            run.returncode = 127
        finally:
            run.exited.set()
            run.timeline.poke()


async def finish(run: BotRun, findings: Findings, within: float = 60.0) -> None:
    """Wait for the bot's game to end, then give the bot a moment to leave."""
    await run.until(run.game_over, within, "the bot's game was not over", claims.PLAYING)
    with trio.move_on_after(EXIT_WITHIN):
        await run.exited.wait()
    if not run.exited.is_set():
        findings(
            f"the bot was still running {EXIT_WITHIN:g} s after its game ended; the kit stopped it"
        )
    elif run.returncode not in (0, None):
        findings(f"the bot exited with code {run.returncode} after its game ({run.exit_words()})")


Script = Callable[[BotRun, Findings], Awaitable[None]]
