"""Starting the play screen: against a named server, or against a server run in this process.

Both return the line to print once the screen is gone (where the seat stands, how to come back).
"""

from __future__ import annotations

from client.config import ClientConfig, ServerAddress
from client.journal import Journal
from client.local import LOCAL_KEY, local_account, local_paths, local_server, play_command
from client.session import Mode, PlaySession, Seating
from client.terminal import Terminal
from protocol import messages as m


async def run_session(session: PlaySession, terminal: Terminal) -> str:
    with terminal.session():
        await session.run()
    state = session.state
    if not state.table:
        return ""
    if state.game_over is not None:
        return f"Game over at table {state.table}. `spades history` lists it."
    if state.seat is None:
        return f"Stopped watching table {state.table}."
    if session.token is None:
        return f"Left table {state.table} (a guest's seat is given to a bot)."
    return (
        f"Left table {state.table}; your seat is held for a while: "
        f"`spades join {state.table}` to sit back down."
    )


async def play_session(
    address: ServerAddress, token: str | None, seating: Seating, guest_name: str | None = None
) -> str:
    """The play (or watch) screen at a server; `guest_name` is the name a guest asks for."""
    terminal = Terminal()
    session = PlaySession(
        address=address,
        token=token,
        seating=seating,
        display=terminal,
        journal=Journal(address.key),
        guest_name=guest_name,
    )
    return await run_session(session, terminal)


async def ladder_session(address: ServerAddress, token: str | None) -> str:
    """`spades ladder enter`: on the ladder while the screen is up, playing the matches it seats."""
    terminal = Terminal()
    session = PlaySession(
        address=address,
        token=token,
        seating=Seating(Mode.LADDER),
        display=terminal,
        journal=Journal(address.key),
    )
    with terminal.session():
        await session.run()
    return f"Left the ladder of {address.key}."


async def event_session(address: ServerAddress, token: str, event: str) -> PlaySession:
    """`spades event EVENT --play`: checked in while the screen is up, playing each round's table;
    the session ends by itself with the event (its `ended` is then set)."""
    terminal = Terminal()
    session = PlaySession(
        address=address,
        token=token,
        seating=Seating(Mode.EVENT, event=event),
        display=terminal,
        journal=Journal(address.key),
    )
    with terminal.session():
        await session.run()
    return session


async def play_local(
    config: ClientConfig, request: m.CreateTable, *, explicit: bool = False, new_game: bool = False
) -> str:
    """`spades play`: a local server, your local account, a table with bots, the play screen."""
    db_path, log_path = local_paths()
    async with local_server(db_path, log_path) as address:
        credentials = await local_account(address, config)
        terminal = Terminal()
        session = PlaySession(
            address=address,
            token=credentials.token,
            seating=Seating(Mode.RESUME, create=request, explicit=explicit, new_game=new_game),
            display=terminal,
            journal=Journal(LOCAL_KEY),
        )
        message = await run_session(session, terminal)
    if session.state.game_over is None and session.state.seat is not None:
        return f"Left the game; `{play_command()}` takes you back to it. (Server log: {log_path})"
    return message
