"""Every sample bot plays whole games of every preset without one illegal action."""

from typing import Any

import pytest

from bots.arena.match import GameJob, play_game
from bots.registry import SAMPLES, BotSpecError, make_bot
from bots.sdk import Bot
from engine.ruleset import PRESETS

# Short games: a low target (or few hands) keeps the whole matrix to a few seconds.
SHORT = {"target_score": 150}


def short_ruleset(name: str) -> dict[str, Any]:
    ruleset = PRESETS[name]
    if ruleset.target_score:
        target = 50 if ruleset.game == "hearts" else 150
        ruleset = ruleset.with_options(target_score=target)
    else:
        ruleset = ruleset.with_options(max_hands=3)
    return ruleset.to_dict()


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("pair", [("heuristic", "random"), ("random", "heuristic")])
def test_sample_bots_play_every_preset(preset: str, pair: tuple[str, str]) -> None:
    result = play_game(
        GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=pair,
            ruleset=short_ruleset(preset),
            seed=11,
            max_hands=12,
        )
    )
    assert result.fallbacks == 0
    assert result.hands >= 1
    assert result.winners


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_search_bot_plays_every_preset(preset: str) -> None:
    result = play_game(
        GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=("search,ms=5", "heuristic"),
            ruleset=short_ruleset(preset),
            seed=12,
            max_hands=2,
        )
    )
    assert result.fallbacks == 0
    assert result.hands >= 1


def test_registry() -> None:
    for name in SAMPLES:
        bot = make_bot(name, seed=1)
        assert isinstance(bot, Bot)
        assert bot.name == name
    with pytest.raises(BotSpecError):
        make_bot("no-such-bot")
    with pytest.raises(BotSpecError):
        make_bot("bots.registry:make_bot")
