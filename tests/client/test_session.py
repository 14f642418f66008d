"""The play session against a real in-process server: a whole hand, chat, and a dropped connection."""

from __future__ import annotations

from pathlib import Path

import trio

from client.config import ServerAddress
from client.journal import Journal, read_records
from client.lobby import create_request, register
from client.session import Mode, PlaySession, Seating
from client.verify import Verdict
from server.app import Server
from tests.client.helpers import FakeDisplay, move_for, wait_for


async def start(
    server: Server, tmp_path: Path, nursery: trio.Nursery, name: str
) -> tuple[PlaySession, FakeDisplay]:
    address = ServerAddress("127.0.0.1", server.port)
    credentials = await register(address, name)
    display = FakeDisplay()
    session = PlaySession(
        address=address,
        token=credentials.token,
        seating=Seating(Mode.CREATE, create=create_request("standard", {}, -1, False, 0)),
        display=display,
        journal=Journal(address.key, root=tmp_path / "history"),
    )
    nursery.start_soon(session.run)
    await wait_for(session.seated.is_set, "the first snapshot")
    return session, display


async def test_a_whole_hand_against_three_bots(server: Server, tmp_path: Path) -> None:
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            session, display = await start(server, tmp_path, nursery, "ada")
            state = session.state
            assert state.seat == 0 and state.names.get(1, "").startswith("bot:")
            await display.type("/say good luck")
            await wait_for(lambda: any("<ada> good luck" in line for line in state.log), "chat")
            for _ in range(40):
                await wait_for(lambda: state.turn is not None or bool(state.scored), "a turn")
                if state.scored:
                    break
                version = state.turn.version if state.turn else -1
                await display.type(move_for(state))
                await wait_for(
                    lambda v=version: state.turn is None or state.turn.version != v,  # type: ignore[misc]
                    "the move to be taken",
                )
            assert state.scored, "the hand did not finish"
            await wait_for(lambda: 1 in state.checks, "the deal check")
            assert state.checks[1].verdict is Verdict.VERIFIED, state.checks[1].lines
            assert "Scores" in display.screen and "Us " in display.screen
            records = read_records(next((tmp_path / "history").glob("*/*.jsonl")))
            assert records[0]["hand_number"] == 1 and records[0]["verified"] == "verified"
            await display.type("/quit")
        assert session.quitting


async def test_a_dropped_connection_comes_back_by_itself(server: Server, tmp_path: Path) -> None:
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            session, display = await start(server, tmp_path, nursery, "bea")
            state = session.state
            await wait_for(lambda: state.turn is not None, "our first turn")
            (ours,) = [s for s in server.sessions if s.account and s.account.name == "bea"]
            ours.connection.abort("test drops the line")
            await wait_for(lambda: session.reconnects >= 1, "the drop to be noticed")
            await wait_for(
                lambda: any("While you were away" in line for line in state.log), "the resync"
            )
            await wait_for(lambda: state.status == "" and state.turn is not None, "our turn back")
            assert "Reconnected." in state.log
            version = state.turn.version if state.turn else -1
            await display.type(move_for(state))
            await wait_for(
                lambda: state.turn is None or state.turn.version != version, "a move after resync"
            )
            session.quit()


async def test_a_guest_gets_its_seat_back_by_itself(server: Server, tmp_path: Path) -> None:
    """No account: the session plays as a guest, keeps the resume token the server gave it (in
    memory), and its reconnect logs the guest in again and takes the same seat back."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            address = ServerAddress("127.0.0.1", server.port)
            display = FakeDisplay()
            session = PlaySession(
                address=address,
                token=None,
                seating=Seating(Mode.CREATE, create=create_request("standard", {}, -1, False, 0)),
                display=display,
                journal=Journal(address.key, root=tmp_path / "history"),
                guest_name="roamer",
            )
            nursery.start_soon(session.run)
            await wait_for(session.seated.is_set, "the first snapshot")
            assert session.guest_token is not None and session.token is None
            state = session.state
            seat, table = state.seat, state.table
            await wait_for(lambda: state.turn is not None, "our first turn")
            (ours,) = [s for s in server.sessions if s.account and s.account.name == session.name]
            assert ours.account is not None and ours.account.is_guest
            ours.connection.abort("test drops the line")
            await wait_for(lambda: session.reconnects >= 1, "the drop to be noticed")
            await wait_for(lambda: state.status == "" and state.turn is not None, "our turn back")
            assert "Reconnected." in state.log
            assert (state.seat, state.table) == (seat, table)
            # The same guest, back on a new connection (not a new guest).
            (again,) = [s for s in server.sessions if s.account and s.account.name == session.name]
            assert again is not ours
            version = state.turn.version if state.turn else -1
            await display.type(move_for(state))
            await wait_for(
                lambda: state.turn is None or state.turn.version != version, "a move after resync"
            )
            session.quit()


async def test_a_resized_terminal_is_redrawn_without_waiting_for_an_event(
    autojump_clock: trio.abc.Clock,
) -> None:
    # No table and no clock: before this, nothing but a server event would redraw the screen.
    # The ticker's looks are trio time: the autojump clock runs them in no time.
    display = FakeDisplay()
    session = PlaySession(
        address=ServerAddress("127.0.0.1", 1),
        token=None,
        seating=Seating(Mode.CREATE, create=create_request("standard", {}, -1, False, 0)),
        display=display,
    )
    session.redraw()
    assert max(len(line) for line in display.screen.splitlines()) <= 80
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(session._ticker)
            await trio.sleep(0.6)
            assert len(display.frames) == 1, "no redraw while nothing changes"
            display.width, display.height = 100, 30
            await wait_for(lambda: len(display.frames) == 2, "the redraw after a resize", 5.0)
            nursery.cancel_scope.cancel()
    assert max(len(line) for line in display.screen.splitlines()) > 80


async def test_a_server_shutting_down_is_said_so(tmp_path: Path) -> None:
    """Issue 41 item 4: the server's `bye` (`the server is shutting down`) is what the screen says
    while it tries again, not the refused reconnects (`cannot reach ...`) cut at the edge."""
    from server.app import local_config, running_server

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            async with running_server(local_config(tmp_path / "s.db")) as srv:
                session, _ = await start(srv, tmp_path, nursery, "cy")
                await wait_for(lambda: session.state.turn is not None, "our first turn")
            await wait_for(lambda: session.reconnects >= 2, "two tries to reconnect")
            status = session.state.status
            assert "the server is shutting down" in status and "cannot reach" not in status, status
            assert len(status) <= 80, status
            session.quit()
