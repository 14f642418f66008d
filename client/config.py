"""Where the client keeps what it remembers: the current server and one account token per server.

Everything lives in the user's config directory (platformdirs), or in `$SPADES_CONFIG_DIR` when set
(tests point it at a temporary directory). Layout:

    client.json              {"server": "192.168.1.20:7777"}        the server `spades connect` chose
                             (`tls://...`, and "ca": a PEM path, for a server behind TLS)
    servers/<host_port>.json {"server": ..., "name": ..., "token": ...}  mode 0600: a token is a secret
    bots/<host_port>.json    the bot accounts `spades-bot register` made (bots/sdk/credentials.py,
                             which owns that file; the client only reads their names)

A token file is written to a temporary file created with mode 0600 and renamed over the old one, so a
crash never leaves a half-written or world-readable token behind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "spades-table"
ENV_CONFIG_DIR = "SPADES_CONFIG_DIR"
ENV_DATA_DIR = "SPADES_DATA_DIR"
TLS_SCHEME = "tls://"
DEFAULT_PORT = 7777  # the server's default (server.config.DEFAULT_PORT); kept here so the client
# needs no server import to parse an address


class ConfigError(Exception):
    """Something the user gave (an address) or the config on disk is unusable; the message says what."""


@dataclass(frozen=True, slots=True)
class ServerAddress:
    """A server to dial: over TLS when `tls` (the address was written `tls://HOST:PORT`), checking
    its certificate against the system's CAs, or against the PEM file `ca` when given."""

    host: str
    port: int
    tls: bool = False
    ca: str | None = None

    @property
    def key(self) -> str:
        """The address as text, the key its token is filed under (the same with or without TLS)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def text(self) -> str:
        """The address as the user writes it: `key`, with `tls://` in front for TLS."""
        return f"{TLS_SCHEME}{self.key}" if self.tls else self.key

    @classmethod
    def parse(cls, text: str) -> ServerAddress:
        """`HOST`, `HOST:PORT` or `[IPv6]:PORT`, each optionally after `tls://`; raises ConfigError
        with a sentence otherwise."""
        text = text.strip()
        if text.lower().startswith(TLS_SCHEME):
            return dataclasses.replace(cls.parse(text[len(TLS_SCHEME) :]), tls=True)
        if "://" in text:
            raise ConfigError(f"{text!r}: the only scheme is tls://, as in tls://myhost:7777")
        if not text:
            raise ConfigError("give a server address, like 192.168.1.20 or myhost:7777")
        host, port_text = text, ""
        if text.startswith("["):
            end = text.find("]")
            if end < 0:
                raise ConfigError(f"{text!r}: an IPv6 address needs a closing ']'")
            host, rest = text[1:end], text[end + 1 :]
            if rest:
                if not rest.startswith(":"):
                    raise ConfigError(f"{text!r}: expected ':PORT' after the address")
                port_text = rest[1:]
        elif text.count(":") == 1:
            host, port_text = text.split(":")
        if not host:
            raise ConfigError(f"{text!r}: the host is missing")
        port = DEFAULT_PORT
        if port_text:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise ConfigError(f"{text!r}: the port must be a number from 1 to 65535")
            port = int(port_text)
        return cls(host, port)


@dataclass(frozen=True, slots=True)
class Credentials:
    """A registered account on one server. (A guest's resume token is never filed: the play
    session keeps it in memory for its reconnects.)"""

    name: str
    token: str


def config_dir() -> Path:
    """`$SPADES_CONFIG_DIR`, else the platform's user config dir for the app."""
    override = os.environ.get(ENV_CONFIG_DIR)
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """`$SPADES_DATA_DIR`, else the platform's user data dir (game journals, the local server)."""
    override = os.environ.get(ENV_DATA_DIR)
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object")
    return data


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Write JSON readable by the owner alone, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2)
        out.write("\n")
    os.chmod(tmp, 0o600)  # O_CREAT's mode is masked by umask, and an old file keeps its mode
    os.replace(tmp, path)


class ClientConfig:
    """The files under one config directory."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else config_dir()

    @property
    def _main_file(self) -> Path:
        return self.root / "client.json"

    def _server_file(self, key: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", key)
        return self.root / "servers" / f"{safe}.json"

    def current_server(self) -> ServerAddress | None:
        """The server `spades connect` remembered, if any."""
        data = _read_json(self._main_file)
        text, ca = data.get("server"), data.get("ca")
        if not isinstance(text, str):
            return None
        address = ServerAddress.parse(text)
        if address.tls and isinstance(ca, str) and ca:
            address = dataclasses.replace(address, ca=ca)
        return address

    def set_current_server(self, address: ServerAddress) -> None:
        data = _read_json(self._main_file)
        data["server"] = address.text
        data.pop("ca", None)
        if address.ca is not None:
            data["ca"] = str(Path(address.ca).resolve())
        _write_private(self._main_file, data)

    def guest_name(self) -> str | None:
        """The name this person asked to play under as a guest (`""`: let the server make one
        up), or None if never asked."""
        name = _read_json(self._main_file).get("guest_name")
        return name if isinstance(name, str) else None

    def save_guest_name(self, name: str) -> None:
        data = _read_json(self._main_file)
        data["guest_name"] = name
        _write_private(self._main_file, data)

    def credentials(self, key: str) -> Credentials | None:
        """The account remembered for a server (by `ServerAddress.key`, or "local" for `spades play`)."""
        data = _read_json(self._server_file(key))
        name, token = data.get("name"), data.get("token")
        if isinstance(name, str) and isinstance(token, str) and token:
            return Credentials(name, token)
        return None

    def save_credentials(self, key: str, credentials: Credentials) -> None:
        _write_private(
            self._server_file(key),
            {"server": key, "name": credentials.name, "token": credentials.token},
        )

    def forget_credentials(self, key: str) -> None:
        self._server_file(key).unlink(missing_ok=True)

    def bot_names(self, key: str) -> list[str]:
        """The bot accounts `spades-bot register` made for the server `key` from this machine
        (`bots/sdk/credentials.py` writes them: {"bots": {name: token}}); [] when none."""
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", key)
        bots = _read_json(self.root / "bots" / f"{safe}.json").get("bots")
        return [name for name in bots if isinstance(name, str)] if isinstance(bots, dict) else []

    def bot_servers(self) -> list[str]:
        """The servers `spades-bot register` kept bot accounts for from this machine, by key."""
        folder = self.root / "bots"
        keys = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            data = _read_json(path)
            if isinstance(data.get("server"), str) and data.get("bots"):
                keys.append(data["server"])
        return keys

    def token_path(self, key: str) -> Path:
        """Where the token for `key` is kept (shown to the user after `register`)."""
        return self._server_file(key)
