"""docs/bots.md's examples are real: the 20-line bot is the tested file, and it plays."""

import re
from pathlib import Path

import pytest

from bots.arena.match import GameJob, play_game
from engine.ruleset import PRESETS

ROOT = Path(__file__).resolve().parents[2]


def test_the_short_bot_in_the_docs_is_the_example_file() -> None:
    doc = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.DOTALL)
    source = (ROOT / "bots" / "examples" / "minimal.py").read_text(encoding="utf-8")
    assert blocks and blocks[0] == source
    assert len(source.strip().splitlines()) < 20


@pytest.mark.parametrize("preset", ["standard", "hearts", "joker", "three-player"])
def test_the_short_bot_plays(preset: str) -> None:
    ruleset = PRESETS[preset].with_options(target_score=100)
    result = play_game(
        GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=("bots.examples.minimal:MinimalBot", "heuristic"),
            ruleset=ruleset.to_dict(),
            seed=4,
            max_hands=4,
        )
    )
    assert result.fallbacks == 0
    assert result.hands >= 1
