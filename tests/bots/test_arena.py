"""The arena: duplicate mode really replays the same deals with the teams swapped (checked on its hand
records), records replay through the engine, and the command prints its figures as JSON."""

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bots.arena.match import job_ruleset
from bots.arena.run import ArenaConfig, figures, run_games
from bots.cli import app
from engine import records
from engine.ruleset import Ruleset


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_duplicate_replays_each_deal_with_the_teams_swapped(tmp_path: Path) -> None:
    out = tmp_path / "hands.jsonl"
    config = ArenaConfig(
        specs=("heuristic", "random"),
        ruleset=Ruleset.from_preset("standard", target_score=150),
        games=6,
        seed=9,
        jobs=2,
        duplicate=True,
        record=out,
        max_hands=8,
    )
    results = run_games(config)
    assert [r.index for r in results] == list(range(6))
    hands = read_records(out)
    by_deal: dict[int, dict[int, dict[int, dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for record in hands:
        tag = record["arena"]
        by_deal[tag["deal"]][tag["rotation"]][record["hand_number"]] = record
    assert sorted(by_deal) == [0, 1, 2]
    compared = 0
    for deal, games in by_deal.items():
        assert set(games) == {0, 1}, deal
        first, second = games[0], games[1]
        for number in set(first) & set(second):
            a, b = first[number], second[number]
            assert a["seed"] == b["seed"]
            assert a["deal"] == b["deal"]
            assert a["dealer"] == b["dealer"]
            # Every seat's cards went to the other team's bot the second time.
            assert a["arena"]["seats"] == ["heuristic", "random"] * 2
            assert b["arena"]["seats"] == ["random", "heuristic"] * 2
            compared += 1
    assert compared >= 3
    # The records are real hand records: the engine replays each game's hands to its scores.
    per_game: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record in hands:
        per_game[record["arena"]["game"]].append({k: v for k, v in record.items() if k != "arena"})
    for result in results:
        if result.reason != "hand_cap":
            assert records.replay(per_game[result.index]) == result.scores


def test_figures_of_a_small_run() -> None:
    config = ArenaConfig(
        specs=("heuristic", "random"),
        ruleset=Ruleset.from_preset("hearts", target_score=40),
        games=4,
        seed=1,
        duplicate=True,
    )
    summary = figures(config, run_games(config))
    assert summary.games == 4
    assert [c.label for c in summary.contenders] == ["heuristic", "random"]
    assert sum(c.wins for c in summary.contenders) == 4
    assert summary.advantage is not None and summary.advantage_samples == 2


def test_the_figures_say_how_long_each_bot_took_a_decision() -> None:
    # One hand a game: every seat bids once and plays 13 cards, all through `decide`.
    config = ArenaConfig(
        specs=("search,worlds=2", "heuristic"),
        ruleset=Ruleset.from_preset("standard", target_score=0, max_hands=1),
        games=2,
        seed=4,
        duplicate=True,
    )
    summary = figures(config, run_games(config))
    assert [t.spec for t in summary.thinking] == ["search,worlds=2", "heuristic"]
    for spent in summary.thinking:
        assert spent.decisions == 2 * 2 * 14  # two games, two seats each, 14 decisions a hand
        assert 0.0 <= spent.mean_ms <= spent.longest_ms
    search, heuristic = summary.thinking
    assert search.mean_ms > heuristic.mean_ms  # a playout a candidate card, against a rule
    assert summary.as_dict()["thinking"][0]["decisions"] == 56


def test_a_random_bots_lean_decisions_are_not_timed() -> None:
    config = ArenaConfig(
        specs=("random", "heuristic"),
        ruleset=Ruleset.from_preset("standard", target_score=0, max_hands=1),
        games=1,
        seed=4,
    )
    by_spec = {t.spec: t.decisions for t in figures(config, run_games(config)).thinking}
    # random decides from the legal actions alone (`choose_from`, `play_mask`), never by `decide`
    assert by_spec == {"heuristic": 2 * 14}


def test_arena_command_json() -> None:
    result = CliRunner().invoke(
        app,
        [
            "arena",
            "heuristic",
            "random",
            "heuristic",
            "random",
            "--games",
            "4",
            "--preset",
            "standard",
            "-o",
            "target_score=100",
            "--seed",
            "3",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["games"] == 4
    labels = [bot["bot"] for bot in data["bots"]]
    assert labels == ["heuristic + heuristic", "random + random"]
    for bot in data["bots"]:
        assert (
            0.0 <= bot["win_rate"]["low"] <= bot["win_rate"]["estimate"] <= bot["win_rate"]["high"]
        )
        assert bot["games"] == 4
    assert [t["bot"] for t in data["thinking"]] == ["heuristic"]  # random's plays are lean


def test_arena_command_refuses_bad_input() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["arena", "heuristic", "nosuchbot"]).exit_code != 0
    assert runner.invoke(app, ["arena", "random", "random", "--preset", "nope"]).exit_code != 0
    three = runner.invoke(app, ["arena", "random", "random", "random", "--games", "1"])
    assert three.exit_code != 0


def test_a_runs_ruleset_is_parsed_once_and_a_new_one_is_not_missed() -> None:
    standard = Ruleset.from_preset("standard").to_dict()
    hearts = Ruleset.from_preset("hearts").to_dict()
    first = job_ruleset(standard)
    assert job_ruleset(dict(standard)) is first
    assert job_ruleset(hearts) == Ruleset.from_dict(hearts)
    changed = {**standard, "target_score": 150}
    assert job_ruleset(changed).target_score == 150
    assert job_ruleset(standard) == first
