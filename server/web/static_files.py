"""The page's files, read once from the installed package, and the presets it offers.

Everything under `server/web/static/` is loaded into memory when the web listener starts (a few
tens of KiB), so a request never touches the file system and no path from a request is ever
joined to one: a URL either names a file in this table or is answered 404.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from engine.ruleset import PRESETS, describe_preset

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
}


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file as it is served: its bytes, type and validator."""

    body: bytes
    content_type: str
    etag: str


def _entry(body: bytes, content_type: str) -> StaticFile:
    return StaticFile(body, content_type, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


def _walk(folder: Traversable, prefix: str) -> dict[str, StaticFile]:
    files: dict[str, StaticFile] = {}
    for item in folder.iterdir():
        name = item.name
        if name.startswith(".") or name == "package.json":  # package.json: for Node's tests only
            continue
        if item.is_dir():
            files.update(_walk(item, f"{prefix}{name}/"))
            continue
        suffix = name[name.rfind(".") :] if "." in name else ""
        content_type = CONTENT_TYPES.get(suffix)
        if content_type is not None:  # anything else in the folder is not for the browser
            files[f"{prefix}{name}"] = _entry(item.read_bytes(), content_type)
    return files


def presets_document() -> bytes:
    """`/presets.json`: every ruleset preset the server offers with its game, seats and options,
    so the lobby shows a table's rules before anyone sits (the engine's own values)."""
    presets = [
        {
            "name": name,
            "game": rules.game,
            "players": rules.players,
            "options": rules.to_dict(),
            # Which rules source the preset follows (or that it plays house rules), in one line.
            "description": describe_preset(name),
        }
        for name, rules in PRESETS.items()
    ]
    return json.dumps({"presets": presets}, separators=(",", ":"), sort_keys=True).encode()


def load_site() -> dict[str, StaticFile]:
    """URL path -> file: the static folder, `/` as its index.html, and `/presets.json`."""
    folder = resources.files("server.web").joinpath("static")
    files = _walk(folder, "/")
    if "/index.html" in files:
        files["/"] = files["/index.html"]
    files["/presets.json"] = _entry(presets_document(), CONTENT_TYPES[".json"])
    return files
