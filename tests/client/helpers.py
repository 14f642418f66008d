"""Shared pieces for the client tests: a display that records frames, bounded polling, a person's
move typed at the play screen."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from io import StringIO

import trio
from rich.console import Group

from client.session import PlaySession
from client.state import TableState
from client.terminal import Line, Terminal


class FakeDisplay:
    """Stands in for the terminal: lines typed through `type()`, frames kept as plain text."""

    interactive = False

    def __init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[str](16)
        self.frames: list[str] = []
        self.width, self.height = 80, 24
        self._plain = Terminal(out=StringIO(), inp=StringIO())

    def size(self) -> tuple[int, int]:
        return self.width, self.height

    def draw(self, frame: Group, width: int) -> None:
        self.frames.append(self._plain.frame_text(frame, width))
        del self.frames[:-5]

    @property
    def screen(self) -> str:
        return self.frames[-1] if self.frames else ""

    async def type(self, line: str) -> None:
        await self._send.send(line)

    async def keys(self) -> AsyncIterator[Line]:
        async for line in self._receive:
            yield Line(line)


async def wait_for(condition: Callable[[], bool], what: str, limit: float = 20.0) -> None:
    """Poll `condition` every 10 ms until it holds; fail after `limit` seconds."""
    with trio.move_on_after(limit):
        # Bounded polling: the screen state has no event to wait on, and move_on_after caps it.
        while not condition():  # noqa: ASYNC110
            await trio.sleep(0.01)
        return
    raise AssertionError(f"timed out waiting for {what}")


def move_for(state: TableState) -> str:
    """What a person would type now: a bid of 3, or the number under the first legal card."""
    assert state.turn is not None
    kinds = state.turn.kinds()
    if "bid" in kinds:
        return "3"
    card = state.turn.legal[0].card
    assert card is not None
    return str(state.hand().index(card) + 1)


async def take_turn(session: PlaySession, display: FakeDisplay) -> None:
    """At the seat's turn, type what a person would (`move_for`) and wait until the server took
    it: the turn gone, or a later one."""
    state = session.state
    assert state.turn is not None
    version = state.turn.version
    await display.type(move_for(state))
    await wait_for(
        lambda: session.state.turn is None or session.state.turn.version != version,
        "the move to be taken",
    )


def table_column(text: str, index: int, columns: int) -> str:
    """Column `index` (0-based) of a rich table of `columns` columns as printed in `text`: its
    cells' wrapped lines put back together (a space where a line ended, none inside a folded
    word cannot be told apart, so compare with spaces removed)."""
    joined = ""
    for line in text.splitlines():
        cells = line.split("│")
        if len(cells) == columns + 2:
            joined += cells[index + 1].strip() + " "
    return joined
