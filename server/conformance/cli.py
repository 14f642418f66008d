"""What `spades-server conformance -- COMMAND...` runs: the bot kit, its table, the exit code."""

from __future__ import annotations

import logging
import shutil
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import trio

from bots.conformance.report import Outcome, exit_code, render
from engine.ruleset import PRESETS
from server.config import LogFormat, configure_logging
from server.conformance.kit import DEFAULT_PRESETS, check_bot
from server.conformance.scenarios import scenarios_for


def names(values: Sequence[str]) -> list[str]:
    """Option values, each possibly a comma list."""
    return [name.strip() for item in values for name in item.split(",") if name.strip()]


def list_scenarios(presets: Sequence[str]) -> str:
    chosen = list(presets) or list(DEFAULT_PRESETS)
    scenarios = scenarios_for(chosen)
    width = max(len(s.name) for s in scenarios)
    return "\n".join(f"{s.name:<{width}}  {s.what}" for s in scenarios)


def run(
    command: Sequence[str],
    presets: Sequence[str],
    only: Sequence[str],
    keep: Path | None,
    *,
    verbose: bool = False,
) -> int:
    """Put `command` through the scenarios; print the table; 0 only if every one passed. Raises
    ValueError for a usage mistake (no command, an unknown preset or scenario)."""
    if not command:
        raise ValueError("give the bot's command after --, e.g. -- spades-bot run heuristic")
    if shutil.which(command[0]) is None and not Path(command[0]).exists():
        raise ValueError(f"{command[0]!r} is not a program on PATH")
    chosen = names(presets) or list(DEFAULT_PRESETS)
    unknown = [p for p in chosen if p not in PRESETS]
    if unknown:
        raise ValueError(f"no preset {', '.join(unknown)}; the presets are: {', '.join(PRESETS)}")
    picked = names(only)
    known = [s.name for s in scenarios_for(chosen)]
    missing = [name for name in picked if name not in known]
    if missing:
        raise ValueError(f"no scenario {', '.join(missing)}; the scenarios are: {', '.join(known)}")
    # The kit's own server logs only its errors: the table is the output.
    configure_logging(LogFormat.console, logging.INFO if verbose else logging.ERROR)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)

    def progress(outcome: Outcome) -> None:
        print(f"  {outcome.name}: {outcome.verdict.value}", file=sys.stderr, flush=True)

    print(f"checking `{' '.join(command)}` against docs/protocol.md", file=sys.stderr, flush=True)
    outcomes = trio.run(
        partial(check_bot, list(command), chosen, only=picked, on_outcome=progress, workdir=keep)
    )
    render(outcomes, sys.stdout)
    if keep is not None:
        print(f"transcripts and the bot's output: {keep}/SCENARIO/", file=sys.stdout)
    return exit_code(outcomes)
