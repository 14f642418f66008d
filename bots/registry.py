"""Getting a bot by name: the sample bots by their short names, anything else as `module:Class`.

A spec is `NAME` or `module:Class`, optionally followed by `,key=value` options passed to the
constructor (`search,ms=50`). The server seats built-in bots with `make_bot("heuristic", seed)`.
"""

import difflib
import functools
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any, Final

from bots.sdk.bot import AnyBot, AsyncBot, Bot

#: Sample bots by name: module and class, imported only when asked for.
SAMPLES: Final[dict[str, str]] = {
    "random": "bots.samples.random_bot:RandomBot",
    "heuristic": "bots.samples.heuristic:HeuristicBot",
    "search": "bots.samples.search:SearchBot",
}


class BotSpecError(ValueError):
    """A spec names no bot that can be built; nothing was built."""


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split `name,key=value,...` into the name and its options (ints and floats parsed)."""
    name, *pairs = spec.split(",")
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise BotSpecError(f"{spec!r}: options are written key=value, not {pair!r}")
        options[key.strip()] = _value(raw.strip())
    if not name:
        raise BotSpecError("a bot spec needs a name")
    return name.strip(), options


def _value(raw: str) -> Any:
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            pass
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


def resolve(name: str) -> type[AnyBot]:
    """The bot class a sample name or `module:Class` names. Raises BotSpecError."""
    target = SAMPLES.get(name, name)
    module_name, sep, class_name = target.partition(":")
    if not sep:
        known = ", ".join(SAMPLES)
        raise BotSpecError(f"{name!r} is neither a sample bot ({known}) nor module:Class")
    # A bot file in the working directory should load even from an installed console script.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BotSpecError(f"cannot import {module_name!r}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise BotSpecError(f"{module_name} has no {class_name}{_bots_in(module, class_name)}")
    if not (inspect.isclass(cls) and issubclass(cls, Bot | AsyncBot)):
        raise BotSpecError(f"{target!r} is not a Bot or AsyncBot subclass")
    return cls


def _bots_in(module: object, wanted: str) -> str:
    """` (it has MyBot)`: the bot classes the module does define, the nearest to `wanted`
    first, so a typo in the class's name reads as one; empty when it defines none."""
    found = [
        name
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, Bot | AsyncBot)
        and value not in (Bot, AsyncBot)
        and not name.startswith("_")
    ]
    if not found:
        return " (it defines no Bot or AsyncBot subclass)"
    close = difflib.get_close_matches(wanted, found, n=len(found), cutoff=0)
    return f" (it has {', '.join(close)})"


def make_bot(name: str, seed: int | None = None, **options: Any) -> AnyBot:
    """A new bot: `make_bot("heuristic", seed=7)`, `make_bot("search", ms=50)`, `make_bot("pkg.mod:MyBot")`.

    Options may also ride in the name (`"search,ms=50"`). Raises BotSpecError when it cannot be built.
    """
    bare, more = parse_spec(name)
    cls = resolve(bare)
    kwargs = {**more, **options}
    accepts = _accepts(cls.__init__)
    if accepts("seed"):
        kwargs["seed"] = seed
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise BotSpecError(f"cannot build {bare!r} with {kwargs}: {exc}") from exc


@functools.cache
def _accepts(init: Callable[..., Any]) -> Callable[[str], bool]:
    # Cached: the arena builds every seat's bot for every game, and reading a signature costs more
    # than building the bot.
    params = inspect.signature(init).parameters
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return lambda name: var_kw or name in params
