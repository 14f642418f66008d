"""The page's own logic (server/web/static/js/) under Node's test runner, against the same fixtures
the Python side is checked with: every example of docs/protocol.md (the codec), the engine's deals
and Hearts points (the deal check), and the document's whole-hand walk-through (the reducer).
Skipped, with the reason, where Node is not installed: `make test` needs only Python."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest

from client.verify import engine_deal
from engine.cards import mask_of, parse_card
from engine.deal import commitment
from engine.hearts_rules import penalty_points
from engine.option_docs import rule_lines
from engine.records import game_records
from engine.ruleset import PRESETS, Ruleset
from engine.view_fold import HANDLED
from protocol.docs import EXAMPLE, parse_hex
from server.web.static_files import presets_document
from tests.engine.helpers import play_random_game
from tests.protocol.test_docs import TEXT, sequence_entries
from tests.web.view_streams import event_streams

JS_TESTS = sorted((Path(__file__).parent / "js").glob("*.test.mjs"))
CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"] + ["LJ", "BJ"]


def has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return False


def fixtures() -> dict[str, Any]:
    examples = []
    for match in EXAMPLE.finditer(TEXT):
        shown = json.loads(match.group("json"))
        body = parse_hex(match.group("hex"))[4:]
        examples.append({"map": shown, "body": body.hex(), "floats": has_float(shown)})
    integers = [
        0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**53 - 1,
        -1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1,
    ]  # fmt: skip
    deals = []
    for preset in ("standard", "hearts"):
        ruleset = Ruleset.from_preset(preset)
        for i, dealer in enumerate((0, 1, 2, 3, 0, 3)):
            seed = bytes([i * 17 % 256, 200 - i, 7, i]) * 4
            hands = [sorted(h, key=parse_card) for h in engine_deal(ruleset, seed, dealer)]
            deck = sorted((card for hand in hands for card in hand), key=parse_card)
            deals.append(
                {
                    "preset": preset,
                    "seed": seed.hex(),
                    "commitment": commitment(seed),
                    "dealer": dealer,
                    "deck": deck,
                    "hands": hands,
                }
            )
    penalty = [
        [card, penalty_points(mask_of([parse_card(card)]), False), penalty_points(mask_of([parse_card(card)]), True)]
        for card in CARDS
    ]  # fmt: skip
    walkthrough = [entry for who, entry in sequence_entries() if who == "S"]
    # The rules panels: the page's lines (rules.js) for every preset, and a few tables' overrides,
    # against the engine's `rule_lines`, from the document the page reads (`/presets.json`).
    rulesets = [*PRESETS.values()] + [
        PRESETS["standard"].with_options(**overrides)
        for overrides in (
            {"blind_nil": True, "target_score": 0, "max_hands": 3},
            {"bags": "no_bags", "tram": True, "first_dealer": 2},
            {"nil": False, "losing_floor_enabled": True, "deficient_hands": ["no_spades"]},
        )
    ]
    rules = [
        {"options": r.to_dict(), "lines": [dataclasses.asdict(line) for line in rule_lines(r)]}
        for r in rulesets
    ]
    # Whole games' hand records (spades-hand/1) as `spades-server export` writes them, for the
    # replay: four-handed Spades (re-dealt by the page), Hearts (with passes), three-handed Spades
    # (a card set aside: the page checks the seed only).
    records = {
        preset: game_records(
            play_random_game(Ruleset.from_preset(preset), random.Random(preset), max_hands=hands),
            game_id=f"g-{preset}",
        )
        for preset, hands in (("standard", 2), ("hearts", 1), ("three-player", 1))
    }
    return {
        "presets": json.loads(presets_document()),
        "rules": rules,
        "examples": examples,
        "integers": [[n, msgpack.packb(n).hex()] for n in integers],
        "deals": deals,
        "penalty": penalty,
        "walkthrough": walkthrough,
        "records": records,
        # The engine's event streams and views, for the page's reducer (view_fold.test.mjs).
        "streams": event_streams(),
        "event_kinds": sorted(HANDLED),
    }


def test_the_pages_logic_under_node(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node is not installed: the page's JavaScript unit tests need it")
    assert JS_TESTS, "no JavaScript tests found"
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps(fixtures()), encoding="utf-8")
    result = subprocess.run(
        [node, "--test", *map(str, JS_TESTS)],
        env={"SPADES_FIXTURES": str(path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# fail 0" in result.stdout
