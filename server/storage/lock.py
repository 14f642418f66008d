"""One server per database: an exclusive lock on a file beside it, held while a server serves it.

The lock is the operating system's (`flock` on POSIX, `msvcrt.locking` on Windows) on
`<database>.lock`: it belongs to the open file, so it goes when the holder closes it or dies in any
way, `kill -9` included, and a crash never leaves the database stuck. The file itself stays (removing
it would race with a server opening it); it only says who holds the lock, as a line of JSON
(`pid`, `host`, `since`), for the message a second server gets.

Readers (`spades-server export`) do not take the lock: they may run beside the server.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from server.storage.errors import DatabaseInUse, StorageError


def lock_path_of(database: Path) -> Path:
    """`<database>.lock`, beside the file the path resolves to (so two spellings of one database,
    or a link to it, share one lock)."""
    database = database.resolve()
    return database.with_name(database.name + ".lock")


def _try_lock(fd: int) -> bool:
    """Take the lock on `fd` without waiting; False if someone else holds it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def read_holder(lock_path: Path) -> tuple[int | None, str | None]:
    """(pid, host) as the lock file says; (None, None) when it says nothing readable (a holder
    that has not written it yet)."""
    try:
        data: Any = json.loads(lock_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    pid, host = data.get("pid"), data.get("host")
    return (
        pid if isinstance(pid, int) else None,
        host if isinstance(host, str) else None,
    )


class DatabaseLock:
    """The lock on one database, held from `acquire` until `release` (or the process's end)."""

    def __init__(self, database: Path, fd: int) -> None:
        self.database = database
        self.path = lock_path_of(database)
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, database: Path) -> DatabaseLock:
        """Take the lock of `database` for this process; raises `DatabaseInUse` (naming the holder)
        if another process, or another open in this one, holds it."""
        path = lock_path_of(database)
        try:
            # Not inherited by child processes (Python's default), so only this process holds it.
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open the lock file {path}: {exc.strerror or exc}") from exc
        try:
            locked = _try_lock(fd)
        except OSError as exc:
            os.close(fd)
            raise StorageError(f"cannot lock {path}: {exc.strerror or exc}") from exc
        if not locked:
            os.close(fd)
            pid, host = read_holder(path)
            raise DatabaseInUse(database, path, pid, host)
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        try:
            # Rewritten in place (never replaced: the lock is on this very file). On Windows the
            # first byte is the locked range: write after it is locked, from the start, as here.
            os.ftruncate(fd, 0)
            os.write(fd, (json.dumps(holder) + "\n").encode())
        except OSError:
            pass  # the lock holds anyway; a second server's message just names nobody
        return cls(database, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up (idempotent). The file stays, emptied, for the next holder."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing the file releases the lock
