"""The page's files, read once from the installed package, and the presets it offers.

Everything under `server/web/static/` is loaded into memory when the web listener starts (a few
tens of KiB), so a request never touches the file system and no path from a request is ever
joined to one: a URL either names a file in this table or is answered 404.

Each text file is also gzipped then, once (so a request costs no compression): a browser that
accepts gzip gets that (`Content-Encoding: gzip`), others the file as it is, and every answer for
a file that has both says `Vary: Accept-Encoding` so no cache hands one to the other. Each form has
its own strong `ETag` (a hash of its bytes), and a request whose `If-None-Match` names the one it
would get is answered 304 without a body.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from engine.option_docs import OPTION_DOCS
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


# Compressed only from this size, and when it saves this share: below, the bytes saved are fewer
# than a packet's worth, not worth the browser's work and a second validator.
MIN_LENGTH = 1024
MIN_SAVING = 0.1
COMPRESSED_TYPES = ("text/", "application/json", "image/svg+xml")


@dataclass(frozen=True, slots=True)
class Form:
    """One form of a file as it goes on the wire: its bytes, its validator, and its
    `Content-Encoding` (None: the file as it is)."""

    body: bytes
    etag: str
    encoding: bytes | None = None


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file as it is served: its type, its bytes and validator, and its gzipped form (None
    when it is not worth compressing)."""

    body: bytes
    content_type: str
    etag: str
    gzipped: Form | None = None

    @property
    def plain(self) -> Form:
        return Form(self.body, self.etag)

    def form_for(self, accept_encoding: bytes | None) -> Form:
        """The form to send to a client that sent this `Accept-Encoding` (all its values, joined
        by commas; None: none sent)."""
        if self.gzipped is not None and accepts_gzip(accept_encoding):
            return self.gzipped
        return self.plain


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _entry(body: bytes, content_type: str) -> StaticFile:
    gzipped = None
    if len(body) >= MIN_LENGTH and content_type.startswith(COMPRESSED_TYPES):
        # mtime=0: the same bytes (so the same ETag) at every start, on every worker.
        packed = gzip.compress(body, compresslevel=9, mtime=0)
        if len(packed) <= len(body) * (1 - MIN_SAVING):
            gzipped = Form(packed, _etag(packed), b"gzip")
    return StaticFile(body, content_type, _etag(body), gzipped)


def accepts_gzip(accept_encoding: bytes | None) -> bool:
    """Whether an `Accept-Encoding` allows gzip: `gzip` (or `x-gzip`, or `*`) listed with a
    weight above zero, a weight given for `gzip` itself overriding `*`'s (RFC 9110 12.5.3)."""
    if not accept_encoding:
        return False
    weights: dict[str, float] = {}
    for item in accept_encoding.decode("latin-1").split(","):
        coding, _, params = item.partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 0.0  # a weight we cannot read is not a yes
        weights[coding.strip().lower()] = weight
    for coding in ("gzip", "x-gzip"):
        if coding in weights:
            return weights[coding] > 0
    return weights.get("*", 0.0) > 0


def etag_matches(if_none_match: bytes | None, etag: str) -> bool:
    """Whether an `If-None-Match` (a list of entity tags, or `*`) names `etag`, by the weak
    comparison RFC 9110 13.1.2 asks for (a `W/` prefix is ignored)."""
    if if_none_match is None:
        return False
    text = if_none_match.decode("latin-1").strip()
    if text == "*":
        return True
    tags = (tag.strip() for tag in text.split(","))
    return any((tag[2:] if tag.startswith("W/") else tag) == etag for tag in tags)


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
    so the lobby shows a table's rules before anyone sits (the engine's own values), and every
    option's description (`options`, in the engine's order `option_order`)."""
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
    # What each option means and when it matters, in words: the engine's one table of them, so
    # the page's rules panels describe any table's options as the terminal client does.
    option_docs = {name: doc.to_dict() for name, doc in OPTION_DOCS.items()}
    document = {"presets": presets, "options": option_docs, "option_order": list(OPTION_DOCS)}
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def load_site() -> dict[str, StaticFile]:
    """URL path -> file: the static folder, `/` as its index.html, and `/presets.json`."""
    folder = resources.files("server.web").joinpath("static")
    files = _walk(folder, "/")
    if "/index.html" in files:
        files["/"] = files["/index.html"]
    files["/presets.json"] = _entry(presets_document(), CONTENT_TYPES[".json"])
    return files
