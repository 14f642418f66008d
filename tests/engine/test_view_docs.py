"""docs/protocol.md, "Game views" and `hand_dealt`, checked against the engine: each claim below is a
phrase the document's table states for a field, and the values every preset's views (and hand_dealt
events) hold through random games, before the first deal to the game's end."""

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.events import Event
from engine.game import Game, Phase, new_game
from engine.ruleset import PRESETS, Ruleset
from tests.engine.helpers import random_action

TEXT = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
View = dict[str, Any]


def section(title: str) -> str:
    start = TEXT.index(title)
    end = TEXT.find("\n#", start + len(title))
    return TEXT[start:end]


def meanings(block: str) -> dict[str, str]:
    """Field name -> its table row's last cell, for every table row in `block`."""
    rows = {}
    for line in block.splitlines():
        match = re.match(r"\| `(\w+)` \|.*\| (.*) \|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


VIEW_ROWS = meanings(section("## Game views"))
DEALT_ROWS = meanings(section("#### `hand_dealt`"))


# field -> (the words of its documented meaning, what every view then holds). `draws`: the game
# draws its first dealer from the first seed (no dealer given, ruleset first_dealer "random").
VIEW_CLAIMS: dict[str, tuple[str, Callable[[Any, View, Game, bool], bool]]] = {
    "leader": (
        "-1 unless a trick is being played (`phase` is not `playing`)",
        lambda value, view, game, draws: (
            (value == -1) == (view["phase"] != "playing") and -1 <= value < game.players
        ),
    ),
    "dealer": (
        "-1 before the first deal when that deal's seed draws the first dealer",
        lambda value, view, game, draws: (
            value == -1 if view["hand_number"] == 0 and draws else 0 <= value < game.players
        ),
    ),
    "hand_type": (
        '`""` in a game without a schedule and before the first deal',
        lambda value, view, game, draws: (
            (value == "") == (not game.ruleset.hand_schedule or view["hand_number"] == 0)
        ),
    ),
    "pass_direction": (
        '`left`, `right`, `across` or `none` this hand; `""` in Spades',
        lambda value, view, game, draws: (
            value == ""
            if game.ruleset.game == "spades"
            else value in ("left", "right", "across", "none")
        ),
    ),
    "points": (
        "Hearts: per seat, penalty points taken this hand; `[]` in Spades",
        lambda value, view, game, draws: (
            value == [] if game.ruleset.game == "spades" else len(value) == game.players
        ),
    ),
}
DEALT_CLAIMS: dict[str, tuple[str, Callable[[Any, dict[str, Any], Game], bool]]] = {
    "hand_type": (
        'Crazy Spades: the hand\'s type; "" without a schedule',
        lambda value, event, game: (value == "") == (not game.ruleset.hand_schedule),
    ),
    "pass_direction": (
        "Hearts: where this hand's pass goes (from the engine's event); absent in Spades",
        lambda value, event, game: (
            value is None
            if game.ruleset.game == "spades"
            else value == getattr(game, "pass_direction", None)
        ),
    ),
}


def test_the_claims_are_the_documents_words() -> None:
    for field, (words, _) in VIEW_CLAIMS.items():
        assert words in VIEW_ROWS[field], field
    for field, (words, _) in DEALT_CLAIMS.items():
        assert words in DEALT_ROWS[field], field


def check_views(game: Game, draws: bool) -> None:
    for seat in [*range(game.players), None]:
        view = (game.spectator_view() if seat is None else game.view(seat)).to_dict()
        for field, (_, holds) in VIEW_CLAIMS.items():
            assert holds(view[field], view, game, draws), (field, view[field], view["phase"])


def check_events(game: Game, events: list[Event]) -> None:
    for event in events:
        if event.kind != "hand_dealt":
            continue
        for seat in [*range(game.players), None]:
            shown = event.for_seat(seat)
            assert shown is not None
            for field, (_, holds) in DEALT_CLAIMS.items():
                assert holds(shown.get(field), shown, game), (field, shown.get(field))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_views_and_hand_dealt_hold_what_the_document_says(preset: str) -> None:
    ruleset: Ruleset = PRESETS[preset]
    ruleset = ruleset.with_options(max_hands=2, target_score=0)
    rng = random.Random(preset)
    for dealer in (None, 1):
        game = new_game(ruleset, dealer=dealer)
        draws = dealer is None
        check_views(game, draws)
        for _ in range(500):
            if game.is_over:
                break
            if game.phase is Phase.DEALING:
                events = game.deal(rng.randbytes(8))
            else:
                events = game.apply(random_action(game, rng))
            check_events(game, events)
            check_views(game, draws)
        assert game.is_over


def test_both_games_views_have_every_field() -> None:
    # "Both games' views have every field, so a client reads the same keys whatever the game".
    assert "Both games' views have every field" in section("## Game views")
    for preset in ("standard", "two-player", "hearts"):
        game = new_game(PRESETS[preset])
        game.deal(b"keys")
        assert list(game.spectator_view().to_dict()) == list(
            new_game(PRESETS["hearts"]).spectator_view().to_dict()
        )
        assert list(game.view(0).to_dict()) == list(new_game(PRESETS["hearts"]).view(0).to_dict())
