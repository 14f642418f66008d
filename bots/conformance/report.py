"""Scenarios and their table: what each kit prints, and the exit code it returns.

A scenario is an async function given a `Findings`: it raises `Failed` (what went wrong, and the
section of docs/protocol.md to read) at a broken promise it cannot go on after, records one it can
go on after with `findings.expect(...)`, and notes what it could not check. `run_all` runs them one
after another, each bounded in time, and never lets one scenario's crash stop the others.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TextIO

import trio

from bots.conformance.claims import Section


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "FAIL"
    SKIP = "skip"


class Failed(Exception):
    """A scenario found the other side breaking the document."""

    def __init__(self, text: str, section: Section) -> None:
        super().__init__(text)
        self.text = text
        self.section = section


class Skipped(Exception):
    """A scenario cannot run here (the server does not offer what it needs); says why."""


@dataclass(frozen=True)
class Problem:
    """One broken promise: a sentence, and where the document makes it."""

    text: str
    section: Section | None = None


@dataclass
class Outcome:
    """One scenario's result: its failures (none when it passed) and notes."""

    name: str
    verdict: Verdict
    seconds: float
    failures: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scenario:
    """A named check: `what` says in a line what it checks (the docs list it)."""

    name: str
    what: str
    run: Callable[[Findings], Awaitable[None]]
    timeout: float = 60.0


class Findings:
    """What a scenario found: failures it could go on after, and notes (shown under its row)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.failures: list[Problem] = []

    def __call__(self, text: str) -> None:
        """A note: something not checked, or worth knowing."""
        self.lines.append(text)

    def expect(self, condition: object, text: str, section: Section) -> bool:
        """Record a failure unless `condition` holds, and go on; whether it held."""
        if not condition:
            self.failures.append(Problem(text, section))
        return bool(condition)


def check(condition: object, text: str, section: Section) -> None:
    """Raise `Failed(text, section)` unless `condition` holds."""
    if not condition:
        raise Failed(text, section)


async def run_one(scenario: Scenario) -> Outcome:
    findings = Findings()
    started = time.monotonic()
    skipped: str | None = None
    try:
        with trio.fail_after(scenario.timeout):
            await scenario.run(findings)
    except Failed as exc:
        findings.failures.append(Problem(exc.text, exc.section))
    except Skipped as exc:
        skipped = str(exc)
    except trio.TooSlowError:
        findings.failures.append(Problem(f"did not finish within {scenario.timeout:g} s"))
    except Exception as exc:  # a scenario's own crash is reported, and the others still run
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}"
        findings.failures.append(
            Problem(f"the kit crashed: {type(exc).__name__}: {exc} (at {where})")
        )
    verdict = Verdict.FAIL if findings.failures else Verdict.SKIP if skipped else Verdict.PASS
    if skipped:
        findings.lines.insert(0, skipped)
    return Outcome(
        name=scenario.name,
        verdict=verdict,
        seconds=time.monotonic() - started,
        failures=findings.failures,
        notes=findings.lines,
    )


async def run_all(
    scenarios: Sequence[Scenario], on_outcome: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    outcomes = []
    for scenario in scenarios:
        outcome = await run_one(scenario)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes


def select(scenarios: Sequence[Scenario], only: Sequence[str]) -> list[Scenario]:
    """The scenarios named in `only` (all when empty); raises ValueError for an unknown name."""
    if not only:
        return list(scenarios)
    known = {s.name: s for s in scenarios}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ValueError(f"no scenario {', '.join(unknown)}; the scenarios are: {', '.join(known)}")
    return [known[name] for name in only]


def render(outcomes: Sequence[Outcome], out: TextIO) -> None:
    """The table: one row per scenario, then each failure's sentence and the section to read."""
    width = max([len(o.name) for o in outcomes] + [8])
    out.write(f"{'scenario':<{width}}  result  time\n")
    for o in outcomes:
        out.write(f"{o.name:<{width}}  {o.verdict.value:<6}  {o.seconds:5.1f} s\n")
    problems = [o for o in outcomes if o.verdict is not Verdict.PASS or o.notes]
    for o in problems:
        out.write(f"\n{o.name}: {o.verdict.value}\n")
        for failure in o.failures:
            out.write(f"  - {failure.text}\n")
            if failure.section is not None:
                out.write(f"    read: {failure.section}\n")
        for note in o.notes:
            out.write(f"  note: {note}\n")
    failed = sum(o.verdict is Verdict.FAIL for o in outcomes)
    skipped = sum(o.verdict is Verdict.SKIP for o in outcomes)
    passed = len(outcomes) - failed - skipped
    out.write(f"\n{passed} passed, {failed} failed, {skipped} skipped\n")


def exit_code(outcomes: Sequence[Outcome]) -> int:
    """0 only if every scenario passed (a skipped one is not a pass)."""
    return 0 if all(o.verdict is Verdict.PASS for o in outcomes) else 1
