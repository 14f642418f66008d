"""`spades-bot analyze RECORDS.jsonl [--json]`: the arena's records reviewed double-dummy, with a
summary per seat by the name the records give it."""

import json
from pathlib import Path

from typer.testing import CliRunner

from bots.cli import app


def arena_records(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "arena",
            "heuristic",
            "random",
            "--games",
            "1",
            "--max-hands",
            "1",
            "--record",
            str(path),
        ],
    )
    assert result.exit_code == 0, result.output
    return path


def test_analyze_json_sums_each_bots_lost_tricks(tmp_path: Path) -> None:
    path = arena_records(tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(path), "--json", "--budget", "300"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["finished"] is True and report["budget"] == 300
    [hand] = report["hands"]
    assert len(hand["seats"]) == 4 and len(hand["tricks_lost"]) == 4
    assert set(report["seats"]) == set(hand["seats"])
    assert sum(s["tricks_lost"] for s in report["seats"].values()) == sum(hand["tricks_lost"])
    assert hand["cards_not_analysed"] > 0  # the early positions need more than 300
    for card in hand["cards"]:
        assert card["cost"] is None or card["cost"] > 0


def test_analyze_text_and_a_bad_file(tmp_path: Path) -> None:
    path = arena_records(tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(path), "--budget", "300"])
    assert result.exit_code == 0, result.output
    assert "tricks lost by play, per seat:" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    refused = CliRunner().invoke(app, ["analyze", str(bad)])
    assert refused.exit_code == 1
    assert "line 1: not JSON" in refused.output
