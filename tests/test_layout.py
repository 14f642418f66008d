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
    # The server may seat the sample bots (bots.registry, bots.sdk), never the human's client.
    "server": {"client", "bots.cli", "bots.sdk.runner"},
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_of(path: Path, package: str) -> set[str]:
    """Every module of `package` that `path` imports, wherever the import is: at the top, inside a
    function, or under `if TYPE_CHECKING:` (a cycle hidden behind one is still a cycle)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from server import queries` names a module; `from server.x import Y` names server.x.
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(n for n in names if n == package or n.startswith(package + "."))
    return found


# (engine/ is not in the list yet: hand_end and claims name SpadesGame for their type hints under
# TYPE_CHECKING, while engine.spades imports them; the server's rooms are the issue's.)
@pytest.mark.parametrize("package", ["server", "protocol", "client", "bots"])
def test_no_import_cycles_not_even_behind_type_checking(package: str) -> None:
    modules = {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}
    graph = {
        name: {m for m in _imports_of(path, package) if m in modules and m != name}
        for name, path in modules.items()
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert cycles == [], " / ".join(" -> ".join(c) for c in cycles)
