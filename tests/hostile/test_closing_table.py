"""Every request gets exactly one answer, also when its table closes under it: a `spectate` and a
`join` sent right behind the `leave` of a finished game's last watcher (which closes that table) are
answered, not dropped with the table's inbox (issue 22, item 3). A real server process on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import trio

from protocol.messages import (
    CreateTable,
    Error,
    GameOver,
    Guest,
    Join,
    Joined,
    Leave,
    LoggedIn,
    Ok,
    Snapshot,
    Spectate,
    TableCreated,
)
from protocol.types import Game
from protocol.wire import encode
from tests.hostile.peer import Peer
from tests.hostile.proc import ServerProcess


async def test_requests_right_behind_the_last_leave_are_answered(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        async with await Peer.connect(server.port) as watcher:
            await watcher.hello()
            assert isinstance(await watcher.request(Guest()), LoggedIn)
            created = await watcher.request(
                CreateTable(
                    game=Game.HEARTS, preset="hearts", options={"max_hands": 1}, bots=[0, 1, 2, 3]
                )
            )
            assert isinstance(created, TableCreated)
            table = created.table
            assert isinstance(await watcher.request(Spectate(table=table)), Joined)
            await watcher.expect(GameOver)
            # The last person at the finished table leaves, and asks again at once, in one write.
            ids = [watcher.next_id() for _ in range(3)]
            batch = [
                Leave(id=ids[0], table=table),
                Spectate(id=ids[1], table=table),
                Join(id=ids[2], table=table),
            ]
            await watcher.send_raw(b"".join(encode(message) for message in batch))
            answers = [await watcher.reply_to(rid) for rid in ids]
            assert isinstance(answers[0], Ok), answers
            for answer in answers[1:]:
                # Either the table still took it (and answers as a table does), or it had closed.
                assert isinstance(answer, Joined | Error), answer
                if isinstance(answer, Error):
                    assert answer.code in ("no_such_table", "table_full"), answer


async def test_a_spectate_at_a_table_of_abandoned_seats_is_answered_while_it_plays(
    tmp_path: Path,
) -> None:
    """Item 3's second half: the only person leaves mid-game, so every seat to act is the
    server's; a `spectate` sent then is answered while the game goes on (a clock's deadline
    never holds the table's inbox), not when it ends."""
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        async with (
            await Peer.connect(server.port) as ada,
            await Peer.connect(server.port) as watcher,
        ):
            for peer in (ada, watcher):
                await peer.hello()
                assert isinstance(await peer.request(Guest()), LoggedIn)
            created = await ada.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    options={"target_score": 10_000},  # a game far longer than this test
                    bots=[1, 2, 3],
                    sit=0,
                )
            )
            assert isinstance(created, TableCreated)
            assert isinstance(await ada.request(Leave(table=created.table)), Ok)
            joined = await watcher.request(Spectate(table=created.table))
            assert isinstance(joined, Joined), joined
            snapshot = await watcher.expect(Snapshot)
            assert snapshot.view["phase"] != "game_over", snapshot.view
