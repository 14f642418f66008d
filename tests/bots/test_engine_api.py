"""bots/ uses only the engines' public API: no `x._field` read or write outside a class's own `self`
(the search bot builds its worlds with `SpadesGame.position`, `HeartsGame.position` and
`deal_fixed`), and no `getattr`/`setattr` by a private name."""

import ast
from pathlib import Path

BOTS = Path(__file__).resolve().parents[2] / "bots"


def private_uses(source: str) -> list[tuple[int, str]]:
    """(line, text) of every private attribute touched on something other than `self` or `cls`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            name = node.attr
            base = node.value
            own = isinstance(base, ast.Name) and base.id in ("self", "cls")
            if name.startswith("_") and not name.startswith("__") and not own:
                found.append((node.lineno, f"{ast.unparse(base)}.{name}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "delattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
        ):
            found.append((node.lineno, f"{node.func.id}(..., {node.args[1].value!r})"))
    return found


def test_the_scan_catches_private_engine_fields() -> None:
    old = "def f(game, view):\n    game._phase = 1\n    x = game._hands[0]\n    setattr(game, '_turn', 2)\n"
    assert sorted(text for _, text in private_uses(old)) == [
        "game._hands",
        "game._phase",
        "setattr(..., '_turn')",
    ]
    assert private_uses("class A:\n    def f(self):\n        self._x = 1\n") == []


def test_bots_touch_no_private_attributes() -> None:
    files = sorted(BOTS.rglob("*.py"))
    assert any(path.name == "world.py" for path in files)
    offences = [
        f"{path.relative_to(BOTS.parent)}:{line}: {text}"
        for path in files
        for line, text in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert offences == []
