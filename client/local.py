"""`spades play` with no server named: a table server in this process, and an account on it.

The server is the real one (`server.app.running_server`, the only server code the client touches),
listening on 127.0.0.1 on a port the OS picks, with its SQLite database in the user data dir so an
unfinished game is still there next time. Its log goes to a file beside the database, never to the
screen the game is drawn on. The account is registered on first use and its token kept in the config
dir under the key "local", so a dropped connection can take the seat back like on any server.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO

import structlog

from client.config import ClientConfig, Credentials, ServerAddress, data_dir
from client.connection import ConnectionLost, ServerError, open_connection
from client.lobby import register

LOCAL_KEY = "local"
NAME_ATTEMPTS = 8
# Set by the Makefile's `play` target: the person started with `make play`, where `spades` may not
# be on their PATH yet (before `make install`), so what we tell them to type is the make form.
VIA_ENV = "SPADES_VIA"


def play_command(args: str = "") -> str:
    """The command that plays again from where the person started: `spades play --new`, or
    `make play ARGS="--new"` under `make play`."""
    if os.environ.get(VIA_ENV) == "make":
        return f'make play ARGS="{args}"' if args else "make play"
    return f"spades play {args}" if args else "spades play"


def local_paths() -> tuple[Path, Path]:
    """The local server's database and log file."""
    base = data_dir()
    return base / "local-server.db", base / "local-server.log"


def _quiet_server_logs(log_path: Path) -> IO[str]:
    """Send the in-process server's structlog output to a file (the screen is the game's)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sink = log_path.open("a", encoding="utf-8")
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.WriteLoggerFactory(file=sink),
        cache_logger_on_first_use=False,
    )
    return sink


@asynccontextmanager
async def local_server(db_path: Path, log_path: Path) -> AsyncIterator[ServerAddress]:
    """Run a server in this process for the duration; yields the address to dial."""
    from server.app import running_server
    from server.config import ServerConfig

    db_path.parent.mkdir(parents=True, exist_ok=True)
    sink = _quiet_server_logs(log_path)
    try:
        config = ServerConfig(host="127.0.0.1", port=0, db_path=db_path, server_name="local")
        async with running_server(config) as server:
            yield ServerAddress("127.0.0.1", server.port)
    finally:
        sink.close()


def default_name() -> str:
    """The login name, cut to what account names allow (2-24 of letters, digits, _ . -)."""
    try:
        raw = getpass.getuser()
    except (KeyError, OSError):
        raw = "player"
    name = re.sub(r"[^A-Za-z0-9_.-]", "", raw).lstrip(".-")[:20]
    return name if len(name) >= 2 else "player"


async def local_account(address: ServerAddress, config: ClientConfig) -> Credentials:
    """The saved local account if the server still knows it; otherwise a new one, saved."""
    saved = config.credentials(LOCAL_KEY)
    if saved is not None:
        try:
            async with open_connection(address, token=saved.token):
                return saved
        except ConnectionLost as exc:
            if exc.code != "bad_token":
                raise
        config.forget_credentials(LOCAL_KEY)  # the database was reset: start afresh
    base = default_name()
    for attempt in range(NAME_ATTEMPTS):
        name = base if attempt == 0 else f"{base[:20]}-{attempt + 1}"
        try:
            credentials = await register(address, name)
        except ServerError as exc:
            if exc.code == "name_taken":
                continue
            raise
        config.save_credentials(LOCAL_KEY, credentials)
        return credentials
    raise ServerError("name_taken", f"could not find a free account name like {base!r}")
