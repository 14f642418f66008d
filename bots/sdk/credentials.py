"""Where `spades-bot register` keeps a bot account's token, so `spades-bot run` finds it.

One file per server address, in the user's config directory (platformdirs), beside the terminal
client's own tokens (`client/config.py`): the same folder (`$SPADES_CONFIG_DIR` when set, which
the tests point at a temporary directory), under `bots/`:

    bots/<host_port>.json   {"server": "192.168.1.20:7777", "default": "my-bot",
                             "bots": {"my-bot": "12.Xq2b...", "other-bot": "13.Lk9..."}}

mode 0600, written to a temporary file and renamed over the old one (a token is a password). The
last bot registered on a server is its `default`: `spades-bot run` plays as it unless told
`--account NAME`. `--token` and `SPADES_TOKEN` win over the file. (The folder logic is repeated
here rather than imported: `bots/` may not import `client/`; tests/bots/test_register.py checks
that both name the same folder.)
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "spades-table"  # the client's (client.config.APP_NAME): one folder for both
ENV_CONFIG_DIR = "SPADES_CONFIG_DIR"
BOTS_FOLDER = "bots"


class CredentialsError(Exception):
    """The file on disk cannot be used; the message says which and why."""


@dataclass(frozen=True, slots=True)
class BotCredentials:
    """A bot account on one server."""

    name: str
    token: str


def config_dir() -> Path:
    """`$SPADES_CONFIG_DIR`, else the platform's user config dir for the app (the client's)."""
    override = os.environ.get(ENV_CONFIG_DIR)
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def server_key(host: str, port: int) -> str:
    """The address a token is filed under: `host:port`, `[v6]:port` (as the client files its own)."""
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}"


class BotTokens:
    """The bot tokens kept under one config directory."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else config_dir()

    def path(self, key: str) -> Path:
        """The file holding the bots registered on the server `key`."""
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", key)
        return self.root / BOTS_FOLDER / f"{safe}.json"

    def _read(self, key: str) -> dict[str, Any]:
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise CredentialsError(f"cannot read {path}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("bots", {}), dict):
            raise CredentialsError(f"{path} does not hold the bots' tokens")
        return data

    def names(self, key: str) -> list[str]:
        """The bots registered on `key` from this machine, oldest first."""
        return [name for name, token in self._read(key).get("bots", {}).items() if token]

    def find(self, key: str, name: str | None = None) -> BotCredentials | None:
        """The bot `name` (or the server's default bot) on `key`, if one is kept."""
        data = self._read(key)
        bots = data.get("bots", {})
        wanted = name if name is not None else data.get("default")
        token = bots.get(wanted) if isinstance(wanted, str) else None
        if not isinstance(token, str) or not token:
            return None
        assert isinstance(wanted, str)
        return BotCredentials(wanted, token)

    def save(self, key: str, credentials: BotCredentials) -> Path:
        """Keep the bot's token (it becomes the server's default bot); returns the file."""
        data = self._read(key)
        bots = dict(data.get("bots", {}))
        bots[credentials.name] = credentials.token
        path = self.path(key)
        _write_private(path, {"server": key, "default": credentials.name, "bots": bots})
        return path


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
