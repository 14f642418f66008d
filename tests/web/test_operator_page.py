"""The page in a real browser hears the operator: `spades-server admin announce` shows on it, and
`admin close` of its table says why (docs/operations.md, Administer a running server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from server.operator import new_token
from server.storage import write_transaction
from tests.web.browser import ROOT, need_browser
from tests.web.page import WAIT_MS, chromium, open_page, register

pytestmark = pytest.mark.timeout(120)

CLI = [sys.executable, "-m", "server.cli"]
SERVE = [*CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--web-port", "0", "--no-ladder"]


@contextmanager
def served(db: Path) -> Iterator[tuple[str, str]]:
    """`spades-server serve` on 127.0.0.1, ports 0; yields (its game address, its web page)."""
    proc = subprocess.Popen(
        [*SERVE, "--db", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        game = url = None
        for _ in range(10):  # a few lines at most before the addresses
            line = proc.stdout.readline()
            if "spades join " in line:
                game = line.rsplit("spades join ", 1)[1].split()[0]
            if "web page: open " in line:
                url = line.rsplit("open ", 1)[1].strip()
                break
        assert game is not None and url is not None, "the server did not print its addresses"
        yield game, url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server is a bug
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()


def admin(game: str, token: str, *args: str) -> str:
    done = subprocess.run(
        [*CLI, "admin", "--server", game, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "SPADES_OPERATOR_TOKEN": token},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_page_shows_an_announcement_and_why_its_table_closed(tmp_path: Path) -> None:
    need_browser()

    errors: list[str] = []
    db = tmp_path / "server.db"
    with served(db) as (game, url), chromium() as browser:
        token, digest = new_token()
        with write_transaction(db) as tx:
            tx.add_operator_token(digest)
        page = open_page(browser, errors)
        register(page, url, "ann")

        assert (
            admin(game, token, "announce", "restart at 22:00") == "told 2 connections\n"
        )  # the page and the command itself
        page.wait_for_function(
            "() => document.getElementById('notice').textContent === 'Operator: restart at 22:00'",
            timeout=WAIT_MS,
        )

        page.click("#create-submit")
        page.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)
        table_id = page.evaluate("spadesApp.table.table")
        closed = admin(game, token, "close", table_id, "--reason", "maintenance")
        assert closed == f"table {table_id} closed\n"
        page.wait_for_function(
            "() => document.getElementById('notice').textContent"
            f" === 'Table {table_id} has closed: maintenance.'",
            timeout=WAIT_MS,
        )
        page.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)
    assert errors == []
