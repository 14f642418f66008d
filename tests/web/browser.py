"""Headless Chromium for the page's tests: Debian's `chromium` (never a downloaded browser), driven
by Playwright, against a real `spades-server serve` subprocess on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("SPADES_CHROMIUM", "/usr/bin/chromium")
# The flags that work on these machines (no sandbox as root, no network but loopback).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("SPADES_TEST_ARTIFACTS", ROOT / ".artifacts")) / "web"


def need_browser() -> None:
    """Skip (with the reason) without Chromium or Playwright; fail instead where the browser is
    required (CI and `make test-web` set SPADES_REQUIRE_BROWSER=1)."""
    missing = None
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium chromium-driver)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright package is not installed (pip install -e '.[dev]')"
    if missing is None:
        return
    if os.environ.get("SPADES_REQUIRE_BROWSER"):
        pytest.fail(missing)
    pytest.skip(missing)


@contextmanager
def served(db: Path | str, *extra: str) -> Iterator[str]:
    """`spades-server serve` on 127.0.0.1 with ports 0; yields the web address it printed. `db`:
    a SQLite file, or a PostgreSQL URL."""
    with served_ports(db, *extra) as (url, _port):
        yield url


@contextmanager
def served_ports(db: Path | str, *extra: str) -> Iterator[tuple[str, int]]:
    """`served`, yielding the game port too (for a protocol client beside the browser)."""
    command = [
        sys.executable,
        "-m",
        "server.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--web-port",
        "0",
        "--db",
        str(db),
        "--no-ladder",
        # No double-dummy analysis of the hands played: a solver process a hand, tens of seconds
        # of CPU each, that no browser test looks at (tests/server/test_hand_analysis.py does).
        "--no-hand-analysis",
        *extra,
    ]
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = None
        port = None
        for _ in range(10):  # a few lines at most before the address
            line = proc.stdout.readline()
            if not line:
                break
            if "join with: spades join " in line:
                port = int(line.rsplit(":", 1)[1])
            if "web page: open " in line:
                url = line.rsplit("open ", 1)[1].strip()
                break
        assert url is not None and port is not None, "the server did not print its addresses"
        yield url, port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server is a bug
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_variety(data: bytes) -> int:
    """How many distinct byte values a sample of the decoded pixels holds (a blank image: few)."""
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    pixels = zlib.decompress(idat)
    return len(set(pixels[:: max(1, len(pixels) // 20000)]))
