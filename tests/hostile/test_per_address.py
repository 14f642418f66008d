"""One address cannot take the lobby from everyone else, however many guest accounts it makes, and
guest accounts nobody uses go away (issue 22, item 6). Against a real `spades-server serve`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import trio

from protocol.messages import (
    Chat,
    ChatMessage,
    CreateTable,
    Error,
    Guest,
    LoggedIn,
    Login,
    Ok,
    TableCreated,
)
from protocol.types import ChatScope, Game
from tests.hostile.peer import Peer, errors, round_trip, welcomed
from tests.hostile.proc import ServerProcess

WAITING = CreateTable(game=Game.SPADES, preset="standard")  # nobody sits: it stays open


async def guest_peer(port: int, source: str) -> Peer:
    peer = await welcomed(port, source=source)
    assert isinstance(await peer.request(Guest()), LoggedIn)
    return peer


async def test_guests_of_one_address_cannot_fill_the_lobby(tmp_path: Path) -> None:
    """Two guest accounts of one address may open 16 tables between them (the default
    `--max-tables-per-address`), refused `rate_limited` after that, and another address can
    still open tables in a lobby of 40."""
    with (
        ServerProcess(tmp_path / "s.db", "--no-ladder", "--max-tables", "40") as server,
        trio.fail_after(60),
    ):
        hogs = [await guest_peer(server.port, "127.0.0.1") for _ in range(2)]
        opened = 0
        refusal = None
        for attempt in range(40):  # bounded: the lobby holds 40
            reply = await hogs[attempt % 2].request(WAITING)
            if isinstance(reply, Error):
                refusal = reply
                break
            assert isinstance(reply, TableCreated), reply
            opened += 1
        assert opened == 16, opened
        assert refusal is not None and refusal.code == "rate_limited", refusal
        assert "your address" in refusal.message
        neighbour = await guest_peer(server.port, "127.0.0.2")
        assert isinstance(await neighbour.request(WAITING), TableCreated)
        for hog in hogs:  # refused, not hung up on
            assert errors(await round_trip(hog)) == []


async def test_one_address_cannot_make_guest_accounts_without_end(tmp_path: Path) -> None:
    """An address makes 30 guest accounts at once (the default `--max-guests-per-address`), then
    is refused `rate_limited` with the wait in `retry_ms` (two minutes: 30 an hour); another
    address still plays as a guest."""
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(90):
        replies = []
        for _ in range(31):
            async with await welcomed(server.port) as peer:
                replies.append(await peer.request(Guest()))
        assert all(isinstance(reply, LoggedIn) for reply in replies[:30]), replies
        refused = replies[30]
        assert isinstance(refused, Error) and refused.code == "rate_limited", refused
        assert refused.retry_ms is not None and 60_000 < refused.retry_ms <= 120_000, refused
        async with await welcomed(server.port, source="127.0.0.2") as other:
            assert isinstance(await other.request(Guest()), LoggedIn)
        rows = sqlite3.connect(tmp_path / "s.db").execute(
            "SELECT COUNT(*) FROM accounts WHERE is_guest = 1"
        )
        assert rows.fetchone()[0] == 31  # nothing stored for the refused one


def account_names(db: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute("SELECT name FROM accounts")}
    finally:
        conn.close()


async def test_unused_guest_accounts_expire(tmp_path: Path) -> None:
    """With `--guest-ttl 2`, a guest account that has gone (no connection, no seat, no game
    played) is deleted within a few seconds, and its resume token logs in no more; a guest still
    connected, a guest whose seat is held, and registered accounts stay."""
    db = tmp_path / "s.db"
    with ServerProcess(db, "--no-ladder", "--guest-ttl", "2") as server, trio.fail_after(60):
        gone = await welcomed(server.port)
        made = await gone.request(Guest())
        assert isinstance(made, LoggedIn) and made.token is not None
        await gone.aclose()
        connected = await guest_peer(server.port, "127.0.0.1")
        seated = await guest_peer(server.port, "127.0.0.1")
        created = await seated.request(
            CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
        )
        assert isinstance(created, TableCreated), created
        await seated.aclose()  # its seat is held for it (the reconnect grace), then played for it
        person = await welcomed(server.port, "registered-person")
        names = account_names(db)
        assert made.name in names
        for _ in range(200):  # bounded: 20 s, looking every 0.1 s
            if made.name not in account_names(db):
                break
            await trio.sleep(0.1)
        names = account_names(db)
        assert made.name not in names, "the unused guest was not deleted"
        kept = [m.name for m in connected.received + person.received if isinstance(m, LoggedIn)]
        assert {"registered-person", *kept} <= names
        assert len([n for n in names if n.startswith("guest-")]) == 2  # connected, seated
        again = await welcomed(server.port)
        refused = await again.request(Login(token=made.token))
        assert isinstance(refused, Error) and refused.code == "bad_token", refused
        for _ in range(100):  # bounded: 10 s; the line is logged just after the delete commits
            if '"guests_expired"' in server.logs():
                break
            await trio.sleep(0.1)
        assert '"guests_expired"' in server.logs()


async def test_one_address_cannot_drown_the_lobby_chat(tmp_path: Path) -> None:
    """Ten connections of one address, each within its own chat limit (5 lines at once), share one
    lobby-chat limit: 20 lines at once, the rest refused `rate_limited`; another address still
    speaks, and everyone hears it."""
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        crowd = [await guest_peer(server.port, "127.0.0.1") for _ in range(10)]
        listener = await guest_peer(server.port, "127.0.0.2")
        said = 0
        refused = []
        started = trio.current_time()
        for round_number in range(5):
            for peer in crowd:
                reply = await peer.request(Chat(scope=ChatScope.LOBBY, text=f"{round_number}"))
                if isinstance(reply, Ok):
                    said += 1
                else:
                    refused.append(reply)
        # The burst, and what refilled meanwhile (2 a second), where each connection alone
        # could have said 5 (50 in all).
        assert said <= 20 + 2 * (trio.current_time() - started) + 1, said
        assert refused and all(
            isinstance(r, Error) and r.code == "rate_limited" and r.retry_ms for r in refused
        ), refused
        reply = await listener.request(Chat(scope=ChatScope.LOBBY, text="may I?"))
        assert isinstance(reply, Ok), reply
        heard = await crowd[0].expect(ChatMessage)
        for _ in range(100):  # bounded: the crowd's own lines come first
            if heard.text == "may I?":
                break
            heard = await crowd[0].expect(ChatMessage)
        assert heard.text == "may I?"
