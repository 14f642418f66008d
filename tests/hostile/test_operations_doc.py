"""docs/operations.md names, for each promise, the test that proves it and whether it passes or is an
expected failure. This keeps the names real and the statuses true to the tests' `xfail` marks."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
ROW = re.compile(r"^\| .+ \| `(?P<ref>[^`]+)`(?P<rest>.*) \| (?P<status>[^|]+) \|$")
REF = re.compile(r"^(?P<module>test_\w+)\.py::(?P<name>test_\w+)(?:\[[^\]]*\])?$")


def promise_rows() -> list[tuple[str, str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Promises and the tests that prove them", 1)[1]
    rows = []
    for line in section.splitlines():
        match = ROW.match(line)
        if match and REF.match(match["ref"]):
            rows.append((match["ref"], match["status"].strip(), line))
    return rows


# (async only because the package's autouse fixture is a trio fixture)
async def test_the_doc_names_promises() -> None:
    assert len(promise_rows()) >= 20


@pytest.mark.parametrize(
    ("ref", "status", "line"), promise_rows(), ids=[ref for ref, _s, _l in promise_rows()]
)
async def test_each_promise_names_a_real_test_with_its_true_status(
    ref: str, status: str, line: str
) -> None:
    match = REF.match(ref)
    assert match is not None
    module = importlib.import_module(f"tests.hostile.{match['module']}")
    test = getattr(module, match["name"], None)
    assert callable(test), f"docs/operations.md names a test that does not exist: {ref}"
    marks = [mark.name for mark in getattr(test, "pytestmark", [])]
    if status.startswith("**xfail**"):
        assert "xfail" in marks, f"{ref} is documented as xfail but is not marked so"
    else:
        assert status.startswith("passes"), line
        assert "xfail" not in marks, f"{ref} is marked xfail but documented as passing"
