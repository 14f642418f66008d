"""EventSettings: a sentence per mistake, the JSON round trip, the rounds a knockout derives, each
round's boards; and the pure core stays pure (no trio, no IO, no clock)."""

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.events.settings import (
    MAX_ENTRANTS,
    EntryKind,
    EventFormat,
    EventSettings,
    knockout_rounds,
)

ROOT = Path(__file__).resolve().parents[2]
PURE = ("settings.py", "plans.py", "pairing.py", "scoring.py")
NOT_PURE = {"trio", "socket", "asyncio", "time", "datetime", "sqlite3", "psycopg", "structlog"}


def swiss(**changes: Any) -> EventSettings:
    return dataclasses.replace(
        EventSettings(EventFormat.SWISS_PAIRS, rounds=4, boards=3), **changes
    )


def test_defaults_are_sound_and_the_table_options_fix_hands_and_dealer() -> None:
    settings = swiss()
    settings.validate()
    assert settings.table_options() == {"target_score": 0, "max_hands": 3, "first_dealer": 0}
    assert settings.ruleset().max_hands == 3
    assert settings.entry is EntryKind.BOTH and settings.no_show_grace == 120.0


@pytest.mark.parametrize(
    ("changes", "sentence"),
    [
        ({"rounds": 0}, "rounds must be 1 to 20, not 0"),
        ({"rounds": 21}, "rounds must be 1 to 20, not 21"),
        ({"rounds": 2.5}, "rounds must be a whole number, not 2.5"),
        ({"boards": 0}, "boards must be 1 to 26 a round, not 0"),
        ({"boards": 27}, "boards must be 1 to 26 a round, not 27"),
        ({"max_entrants": 3}, "max_entrants must be 4 to 256, not 3"),
        ({"max_entrants": 257}, "max_entrants must be 4 to 256, not 257"),
        ({"human_turn_ms": 10}, "human_turn_ms must be 1000 to 600000, not 10"),
        ({"bot_turn_ms": 700_000}, "bot_turn_ms must be 100 to 600000, not 700000"),
        ({"no_show_grace": -1.0}, "no_show_grace must be 0 to 3600 seconds, not -1.0"),
        ({"grace_s": float("nan")}, "grace_s must be 0 to 3600 seconds, not nan"),
        ({"round_gap": "soon"}, "round_gap must be a number of seconds, not 'soon'"),
        ({"preset": "nonesuch"}, "unknown preset 'nonesuch'"),
        ({"options": {"players": 3}}, "an event needs four players in two partnerships"),
        ({"options": {"nil_value": "lots"}}, "nil_value"),
        (
            {"format": "bingo"},
            "format must be one of swiss_pairs, swiss_individual, knockout_pairs",
        ),
        ({"entry": "anyone"}, "entry must be one of people, bots, both"),
    ],
)
def test_each_mistake_is_one_sentence(changes: dict[str, Any], sentence: str) -> None:
    with pytest.raises(ValueError, match="^.*" + re.escape(sentence)):
        swiss(**changes).validate()


def test_an_individual_field_is_a_multiple_of_four() -> None:
    settings = swiss(format=EventFormat.SWISS_INDIVIDUAL, max_entrants=10)
    with pytest.raises(ValueError, match="multiple of 4, not 10"):
        settings.validate()
    dataclasses.replace(settings, max_entrants=16).validate()


def test_a_knockout_derives_its_rounds_from_the_field() -> None:
    settings = swiss(format=EventFormat.KNOCKOUT_PAIRS, rounds=3)
    with pytest.raises(ValueError, match="give rounds 0, not 3"):
        settings.validate()
    knockout = dataclasses.replace(settings, rounds=0)
    knockout.validate()
    assert [knockout.rounds_for(n) for n in (1, 2, 3, 4, 5, 8, 9, 16, 256)] == [
        1, 1, 2, 2, 3, 3, 4, 4, 8
    ]  # fmt: skip
    assert knockout_rounds(MAX_ENTRANTS) == 8
    assert swiss().rounds_for(64) == 4


@given(
    fmt=st.sampled_from(EventFormat),
    rounds=st.integers(1, 20),
    boards=st.integers(1, 26),
    entry=st.sampled_from(EntryKind),
    quarters=st.integers(1, 64),
    no_show=st.floats(0, 3600),
)
def test_json_round_trip(
    fmt: EventFormat, rounds: int, boards: int, entry: EntryKind, quarters: int, no_show: float
) -> None:
    settings = EventSettings(
        fmt,
        rounds=0 if fmt is EventFormat.KNOCKOUT_PAIRS else rounds,
        boards=boards,
        options={"nil_value": 50},
        entry=entry,
        max_entrants=4 * quarters,
        no_show_grace=no_show,
    )
    settings.validate()
    assert EventSettings.from_json(settings.to_json()) == settings


def test_from_json_refuses_with_a_sentence() -> None:
    good = swiss().to_json()
    for data, sentence in [
        ([], "event settings must be a map"),
        ({**good, "colour": "red"}, "unknown event setting 'colour'"),
        ({k: v for k, v in good.items() if k != "boards"}, "event settings need 'boards'"),
        ({**good, "format": "bingo"}, "format must be one of"),
        ({**good, "entry": 3}, "entry must be one of"),
        ({**good, "rounds": 99}, "rounds must be 1 to 20, not 99"),
    ]:
        with pytest.raises(ValueError, match=re.escape(sentence)):
            EventSettings.from_json(data)
    # Whole seconds stored as an int read back as the float field.
    assert EventSettings.from_json({**good, "grace_s": 60}).grace_s == 60.0


def test_each_round_has_its_own_boards_the_same_for_every_table() -> None:
    settings = swiss()
    secret = b"s" * 32
    one, two = settings.board_set(secret, 1), settings.board_set(secret, 2)
    assert one.hands == 3
    assert one.deal_seed(0) == settings.board_set(secret, 1).deal_seed(0)
    assert one.deal_seed(0) != two.deal_seed(0)
    assert one.deal_seed(0) != settings.board_set(b"t" * 32, 1).deal_seed(0)


@pytest.mark.parametrize("name", PURE)
def test_the_core_is_pure(name: str) -> None:
    tree = ast.parse((ROOT / "server" / "events" / name).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
            if node.module.startswith("server.") and not node.module.startswith(
                ("server.events.", "server.ladder.duplicate")
            ):
                imported.add(node.module)
    assert imported & NOT_PURE == set()
    assert {m for m in imported if m.startswith("server.")} == set()
