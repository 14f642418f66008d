"""What `spades-bot conformance` runs: the server kit, its table on stdout, the exit code."""

from __future__ import annotations

import sys

import trio

from bots.conformance.report import Outcome, exit_code, render
from bots.conformance.server_kit import CHECKS, check_server


def scenario_names(only: list[str]) -> list[str]:
    """`--only` values, each possibly a comma list."""
    return [name.strip() for item in only for name in item.split(",") if name.strip()]


def list_scenarios() -> str:
    width = max(len(name) for name, _, _ in CHECKS)
    return "\n".join(f"{name:<{width}}  {what}" for name, _, what in CHECKS)


class Unreachable(Exception):
    """No server answers at that address."""


async def _reachable(host: str, port: int) -> None:
    try:
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        raise Unreachable(f"cannot reach a server at {host}:{port}: {exc}") from None
    await stream.aclose()


def run(host: str, port: int, only: list[str]) -> int:
    """Check the server at host:port; print the table; 0 only if every scenario passed. Raises
    ValueError for an unknown scenario name."""

    names = scenario_names(only)
    known = [name for name, _, _ in CHECKS]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"no scenario {', '.join(unknown)}; the scenarios are: {', '.join(known)}")
    trio.run(_reachable, host, port)

    def progress(outcome: Outcome) -> None:
        print(f"  {outcome.name}: {outcome.verdict.value}", file=sys.stderr, flush=True)

    print(f"checking {host}:{port} against docs/protocol.md", file=sys.stderr, flush=True)
    outcomes = trio.run(check_server, host, port, names, progress)
    render(outcomes, sys.stdout)
    return exit_code(outcomes)
