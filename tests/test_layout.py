"""The rooms of docs/architecture.md: engine/ and protocol/ stay pure; nothing imports upward."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What each room may never import (design.md, "Rooms").
FORBIDDEN: dict[str, set[str]] = {
    "engine": {
        "trio",
        "socket",
        "asyncio",
        "logging",
        "structlog",
        "time",
        "msgpack",
        "protocol",
        "server",
        "client",
        "bots",
        "sqlite3",
        "selectors",
        "ssl",
    },
    # Sans-IO: no sockets, no event loop, no clock (the caller owns time: timeouts, rates).
    "protocol": {
        "trio",
        "socket",
        "asyncio",
        "time",
        "datetime",
        "selectors",
        "server",
        "client",
        "bots",
        "sqlite3",
        "ssl",
    },
    "client": {"server.table", "server.storage", "server.ladder"},
    "bots": {"server", "client"},
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def violates(module: str, forbidden: set[str]) -> bool:
    return any(module == f or module.startswith(f + ".") for f in forbidden)


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_room_imports_stay_in_bounds(room: str) -> None:
    bad = []
    for path in sorted((ROOT / room).rglob("*.py")):
        if "examples" in path.parts:
            continue
        for module in imported_modules(path):
            if violates(module, FORBIDDEN[room]):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    assert bad == []


def test_engine_uses_no_global_random_state() -> None:
    # random.Random(seed) instances are fine; the module-level functions share hidden global state.
    bad = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "random"
                and node.attr != "Random"
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} random.{node.attr}")
    assert bad == []
