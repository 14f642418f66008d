"""`spades-bot new` writes a bot that loads and plays."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bots.arena.match import GameJob, play_game
from bots.cli import app
from bots.registry import make_bot
from bots.skeleton import class_name, module_name
from engine.ruleset import Ruleset


def test_names() -> None:
    assert class_name("my-bot") == "MyBot"
    assert class_name("3 tricks") == "Bot3TricksBot"
    assert module_name("My Bot") == "my_bot"
    assert module_name("class") == "bot_class"


def test_new_writes_a_bot_that_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["new", "skeleton-test"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "skeleton_test.py").exists()
    again = CliRunner().invoke(app, ["new", "skeleton-test"])
    assert again.exit_code == 1
    monkeypatch.syspath_prepend(str(tmp_path))
    bot = make_bot("skeleton_test:SkeletonTestBot", seed=1)
    assert bot.name == "SkeletonTestBot"
    for preset in ("standard", "hearts"):
        ruleset = Ruleset.from_preset(preset).with_options(target_score=100)
        job = GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=("skeleton_test:SkeletonTestBot", "random"),
            ruleset=ruleset.to_dict(),
            seed=1,
            max_hands=6,
        )
        outcome = play_game(job)
        assert outcome.fallbacks == 0
        assert outcome.hands >= 1
