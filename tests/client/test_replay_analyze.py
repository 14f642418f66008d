"""`spades replay FILE --analyze`: each hand reviewed double-dummy under its score, the cards that
cost tricks marked, positions past the budget said to be not analysed, Ctrl-C keeping what was
done, and a three-handed game said to be not analysed."""

import json
import random
from pathlib import Path

from typer.testing import CliRunner

from client.cli import app
from client.replay import record_ruleset
from client.review import analyze, reviewers
from engine.game import new_game
from engine.records import game_records
from engine.ruleset import Ruleset


def write_game(path: Path, preset: str, hands: int, seed: int = 3) -> list[dict[str, object]]:
    """The first `hands` hands of a game of random legal moves, as `spades-server export` writes."""
    rng = random.Random(seed)
    game = new_game(Ruleset.from_preset(preset, target_score=500))
    for number in range(5000):
        if game.is_over or (game.phase.value == "dealing" and game.hand_number > hands):
            break
        if game.phase.value == "dealing":
            game.deal(f"analyze-{number}".encode())
            continue
        seat = game.to_act()[0]
        game.apply(rng.choice(game.legal_actions(seat)))
    records = game_records(game, game_id="g9")
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def test_replay_analyze_shows_each_hands_review(tmp_path: Path) -> None:
    export = tmp_path / "game.jsonl"
    write_game(export, "standard", 1)
    result = CliRunner().invoke(
        app, ["replay", str(export), "--all", "--analyze", "--budget", "300"]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "double-dummy at the start of play" in out
    assert "tricks lost by play: South" in out
    # The opening positions need more than 300 searched positions: said, not guessed.
    assert "not analysed (budget)" in out and " ?" in out
    assert "trick 13" in out


def test_a_stopped_analysis_keeps_what_it_did(tmp_path: Path) -> None:
    export = tmp_path / "game.jsonl"
    records = write_game(export, "standard", 2)
    jobs = reviewers(records, [record_ruleset(r) for r in records], 300)
    steps = 0

    def advance() -> None:
        nonlocal steps
        steps += 1
        if steps == 10:
            raise KeyboardInterrupt  # Ctrl-C after ten positions

    reviews, finished = analyze(jobs, advance)
    assert not finished and len(reviews) == len(records) >= 2
    first, second = reviews[:2]
    assert not isinstance(first, str) and not isinstance(second, str)
    assert not first.complete and first.cards[-1].cost == 0  # the last card was analysed
    assert second.not_analysed == len(second.cards)  # never reached


def test_a_three_handed_game_is_said_to_be_not_analysed(tmp_path: Path) -> None:
    export = tmp_path / "three.jsonl"
    write_game(export, "three-player", 1)
    result = CliRunner().invoke(app, ["replay", str(export), "--all", "--analyze"])
    assert result.exit_code == 0, result.output
    assert "not analysed: a 3-handed hand is not analysed" in result.output


def test_the_clients_own_journal_is_reviewed_too() -> None:
    from tests.client.test_state_render import play_hand

    state, _ = play_hand(Ruleset.from_preset("standard"), b"history-seed")
    record = state.finished_hands[0]
    [job] = reviewers([record], [record_ruleset(record)], 300)
    assert not isinstance(job, str), job
    reviews, finished = analyze([job], lambda: None)
    [review] = reviews
    assert finished and not isinstance(review, str)
    assert len(review.cards) == 52 and review.cards[-1].cost == 0
    missed = record | {"missed_tricks": [3]}
    [said] = reviewers([missed], [record_ruleset(missed)], 300)
    assert said == "not analysed: the client missed tricks of this hand (it was not connected)"
