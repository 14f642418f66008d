"""`spades-server conformance -- COMMAND...`: a bot program put through the scenarios.

Each scenario gets its own server (in this process, 127.0.0.1, port 0, a database in a temporary
folder), its own proxy and table, and a fresh run of the command. What the bot did wrong is listed
with the docs/protocol.md section to read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import trio

from bots.conformance.report import Failed, Findings, Outcome, Problem, Scenario, run_all, select
from server.conformance.proxy import transcript
from server.conformance.rules import check_all
from server.conformance.run import bot_run
from server.conformance.scenarios import BotScenario, scenarios_for

DEFAULT_PRESETS = ("standard", "hearts")


def kit_scenarios(
    command: Sequence[str], presets: Sequence[str], workdir: Path, cwd: Path | None = None
) -> list[Scenario]:
    return [
        Scenario(
            s.name, s.what, _runner(s, list(command), workdir / s.name, cwd), timeout=s.timeout
        )
        for s in scenarios_for(presets)
    ]


def _runner(
    scenario: BotScenario, command: list[str], workdir: Path, cwd: Path | None
) -> Callable[[Findings], Awaitable[None]]:
    async def run(findings: Findings) -> None:
        await trio.Path(workdir).mkdir(parents=True, exist_ok=True)
        async with bot_run(
            command, workdir, scenario.table, scenario.setting, token=scenario.token, cwd=cwd
        ) as bot:
            try:
                await scenario.script(bot, findings)
            except Failed as exc:
                findings.failures.append(Problem(exc.text, exc.section))
            for problem in check_all(bot.seen(), scenario.allowance):
                if problem not in findings.failures:
                    findings.failures.append(problem)
            await trio.Path(workdir / "transcript.txt").write_text(
                transcript(bot.timeline), encoding="utf-8"
            )

    return run


async def check_bot(
    command: Sequence[str],
    presets: Sequence[str] = DEFAULT_PRESETS,
    *,
    only: Sequence[str] = (),
    on_outcome: Callable[[Outcome], None] | None = None,
    workdir: Path | None = None,
    cwd: Path | None = None,
) -> list[Outcome]:
    """Run the scenarios (those named in `only`, or all) against the bot `command`. Raises
    ValueError for an unknown scenario or preset name."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="spades-conformance-") as tmp:
            return await check_bot(
                command, presets, only=only, on_outcome=on_outcome, workdir=Path(tmp), cwd=cwd
            )
    chosen = select(kit_scenarios(command, presets, workdir, cwd), only)
    return await run_all(chosen, on_outcome)
