"""A real table task on an in-memory store, its audience recording peers: no sockets, trio's clock.

Built-in seats and the fallback think inline (`server.seats.decide_inline`), so the table's time is
the test's: with the `autojump_clock` fixture, `settle()` (trio's `wait_all_tasks_blocked`) lets
every bot play on until a person must act, and a deadline passes only when the test waits for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from server import accounts
from server.accounts import Account
from server.seats import decide_inline
from server.storage import Tx, open_store
from server.table import Table
from server.table_commands import Command, TableConfig
from server.table_policy import TablePolicy

ADA = Account(1, "ada", False, False)
BOB = Account(2, "bob", False, False)


def table_config(
    game: str = "hearts",
    preset: str = "hearts",
    *,
    bots: tuple[int, ...] = (1, 2, 3),
    players: int = 4,
    **options: Any,
) -> TableConfig:
    return TableConfig(
        table_id="t1",
        game=game,
        preset=preset,
        options=dict(options),
        players=players,
        bots=bots,
        human_turn_ms=30_000,
        bot_turn_ms=5_000,
        grace_s=120.0,
        builtin_bot="random",
        fallback_bot="random",
    )


@asynccontextmanager
async def running_table(
    config: TableConfig, *, policy: TablePolicy | None = None
) -> AsyncIterator[Table]:
    """The table's task, running; cancelled when the block ends."""
    async with open_store(":memory:") as store, trio.open_nursery() as nursery:

        def prepare(tx: Tx) -> None:
            # What the lobby would have stored: the people's accounts and the table itself.
            for person in (ADA, BOB):
                made = tx.insert_account(person.name, None, None, is_bot=False, is_guest=False)
                assert made == person.id
            tx.insert_table(config.table_id, config.to_json())

        await store.call(prepare)

        async def bot_account(name: str) -> Account:
            return await accounts.builtin_bot(store, name)

        table = Table(config, store, bot_account, policy=policy, think=decide_inline)
        await nursery.start(table.run)
        try:
            yield table
        finally:
            nursery.cancel_scope.cancel()


async def settle() -> None:
    """Until every task waits: the table has handled what it was sent, and the bots have played."""
    await trio.testing.wait_all_tasks_blocked()


async def tell(table: Table, command: Command) -> None:
    """Hand the table a command and let it (and its bots) carry it through."""
    await table.send_inbox.send(command)
    await settle()
