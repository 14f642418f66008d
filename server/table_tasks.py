"""Two small helpers of a task that drives tables it opened itself (the ladder's matches, the
events' rounds): waiting for the first of a table's ends, and not minding a table that closed
under the task (it is over either way)."""

from __future__ import annotations

import trio

from server.table_commands import TableError


class closed_table_ok:
    """Suppress `TableError` from a table that closed under us (it is over either way)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        return isinstance(exc, TableError)


async def first_of(*events: trio.Event) -> None:
    """Return as soon as any of `events` is set."""
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        for event in events:
            nursery.start_soon(wait, event)
