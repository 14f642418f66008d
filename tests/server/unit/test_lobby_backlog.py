"""`Lobby.submit_later` (the cluster's link, connections going away): a table's full inbox puts
commands in a bounded backlog, drained in order by one task, instead of a task per command; past
`BACKLOG` the command is refused (the caller answers `server_full`). Over memory streams."""

from __future__ import annotations

import trio
import trio.testing

from protocol.messages import CreateTable, Error, Message, Register, TableCreated
from protocol.types import Game
from server.app import running_server
from server.config import Limits
from server.lobby import BACKLOG
from server.peers import SharedEvent
from server.table_commands import LeaveCommand
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config


class Answers:
    """A peer that keeps the ids of the answers it is given."""

    peer_id = "answers"
    connected = True

    def __init__(self) -> None:
        self.ids: list[int | None] = []

    def deliver(self, message: Message) -> None:
        self.ids.append(getattr(message, "id", None))
        assert isinstance(message, Error)

    def deliver_shared(self, shared: SharedEvent) -> None:
        raise AssertionError("an unseated peer hears no events")


def all_tasks() -> int:
    """Tasks alive in this run (the whole tree)."""
    root = trio.lowlevel.current_root_task()
    assert root is not None
    count, stack = 0, [root]
    while stack:  # bounded: a tree of finitely many tasks
        task = stack.pop()
        count += 1
        stack.extend(child for nursery in task.child_nurseries for child in nursery.child_tasks)
    return count


async def test_a_full_inbox_backlogs_in_order_then_refuses(autojump_clock: trio.abc.Clock) -> None:
    listener = MemoryListener()
    config = memory_config(limits=Limits(idle_timeout=0, write_timeout=0), ladder=False)
    async with running_server(config, listeners=[listener]) as server:
        client = await MemoryClient.connect(listener)
        await client.hello()
        await client.request(Register(name="ada"))
        created = await client.request(CreateTable(game=Game.SPADES, preset="standard"))
        assert isinstance(created, TableCreated)
        with trio.fail_after(60):
            await trio.testing.wait_all_tasks_blocked()
            lobby = server.lobby
            table = lobby.tables[created.table]
            peer = Answers()
            # The inbox's room, and one more: the table waiting on it takes the first at once.
            inbox = config.limits.table_inbox_size + 1
            tasks_before = all_tasks()
            # No checkpoint in this loop: the table cannot take anything meanwhile.
            accepted = [
                lobby.submit_later(table, LeaveCommand(peer=peer, request_id=n))
                for n in range(inbox + BACKLOG + 5)  # (bounded)
            ]
            assert accepted == [True] * (inbox + BACKLOG) + [False] * 5
            await trio.lowlevel.checkpoint()  # (tasks started are in the tree from here)
            assert all_tasks() - tasks_before <= 1  # one drain at most, not one per command
            await trio.testing.wait_all_tasks_blocked()
            # Every command accepted was answered (not seated here), in the order it came.
            assert peer.ids == list(range(inbox + BACKLOG))
            assert lobby.submit_later(table, LeaveCommand(peer=peer, request_id=-1))
        await client.aclose()
