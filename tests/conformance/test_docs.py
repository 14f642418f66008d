"""docs/bots.md's conformance section lists exactly the scenarios the two kits run, in their order."""

from __future__ import annotations

import re
from pathlib import Path

from bots.conformance.server_kit import CHECKS
from server.conformance.kit import DEFAULT_PRESETS
from server.conformance.scenarios import scenarios_for

DOC = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text(encoding="utf-8")


def scenario_rows(heading: str) -> list[str]:
    section = DOC[DOC.index(heading) :]
    section = section[: section.index("\n### ", 1)] if "\n### " in section[1:] else section
    return re.findall(r"^\| `([a-zA-Z-]+)` \|", section, re.M)


def test_the_bot_kits_scenarios_are_documented() -> None:
    documented = scenario_rows("### Check a bot")
    names = [s.name for s in scenarios_for(list(DEFAULT_PRESETS))]
    # One `play-PRESET` row stands for the main preset's others (`play-hearts` by default).
    assert [n if not n.startswith("play-") else "play-PRESET" for n in names] == [
        n for n in documented if n not in ("SPADES_SERVER", "SPADES_TOKEN", "SPADES_TABLE")
    ]


def test_the_server_kits_scenarios_are_documented() -> None:
    assert scenario_rows("### Check a server") == [name for name, _, _ in CHECKS]
