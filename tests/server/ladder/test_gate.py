"""Twin tables' spectators: a deal is seen only once both tables have played it.

Two real table tasks on one in-memory store, each with the ladder's `PlannedTablePolicy` and one shared
`DealGate`, seated by recording peers; trio's autojump clock, bots thinking inline (so `settle()` lets
them play until a person must act). The people act only when the test says, so the test decides
which table is ahead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from protocol.messages import (
    ChatMessage,
    DealCommitment,
    DealSeed,
    GameOver,
    Joined,
    Ok,
    Ping,
    Snapshot,
    YourTurn,
)
from protocol.types import ChatScope
from protocol.wire import game_event_frames
from server import accounts
from server.accounts import Account
from server.deal_gate import MAX_HELD_CHAT, DealGate, HeldPeer
from server.ladder.duplicate import BoardSet
from server.peers import SharedEvent
from server.planned_table import PlannedTablePolicy
from server.seats import decide_inline
from server.storage import Tx, open_store
from server.table import Table
from server.table_commands import (
    ActCommand,
    ChatCommand,
    JoinCommand,
    LeaveCommand,
    SpectateCommand,
    TableConfig,
)
from tests.server.unit.peers import RecordingPeer
from tests.server.unit.tables import tell

ADA = Account(1, "ada", False, False)  # plays seat 0 of table 0
BOB = Account(2, "bob", False, False)  # plays seat 0 of table 1
HOUSE = [Account(3 + i, f"house:r{i}", True, False) for i in range(3)]
HANDS = 2


def config(table_id: str) -> TableConfig:
    return TableConfig(
        table_id=table_id,
        game="spades",
        preset="standard",
        options={"target_score": 0, "max_hands": HANDS},
        players=4,
        bots=(1, 2, 3),
        human_turn_ms=600_000,
        bot_turn_ms=5_000,
        grace_s=120.0,
        builtin_bot="random",
        fallback_bot="random",
    )


@asynccontextmanager
async def twin_tables(gate: DealGate) -> AsyncIterator[tuple[Table, Table]]:
    """Tables 0 and 1 of one board set: a person at seat 0 of each, house bots at the others."""
    boards = BoardSet.seeded(HANDS, seed=5)
    async with open_store(":memory:") as store, trio.open_nursery() as nursery:
        ids = ("L0", "L1")

        def prepare(tx: Tx) -> None:
            for account in (ADA, BOB, *HOUSE):
                made = tx.insert_account(
                    account.name, None, None, is_bot=account.is_bot, is_guest=False
                )
                assert made == account.id
            for table_id in ids:
                tx.insert_table(table_id, config(table_id).to_json())

        await store.call(prepare)

        async def bot_account(name: str) -> Account:
            return await accounts.builtin_bot(store, name)

        tables = []
        for index, person in enumerate((ADA, BOB)):
            policy = PlannedTablePolicy(
                deal_seed=boards.deal_seed,
                house={seat: ("random", HOUSE[seat - 1]) for seat in (1, 2, 3)},
                reserved={0: person.id},
                max_timeouts=3,
                gate=gate,
                table=index,
            )
            table = Table(
                config(ids[index]), store, bot_account, policy=policy, think=decide_inline
            )
            await nursery.start(table.run)
            tables.append(table)
        try:
            yield tables[0], tables[1]
        finally:
            nursery.cancel_scope.cancel()


async def play_deal(table: Table, player: RecordingPeer) -> None:
    """The person at seat 0 plays its first legal action until the table deals the next deal
    (or the game ends). Bounded: a deal is at most a few dozen of its decisions."""
    deal = table.records.deals
    for _ in range(100):
        if table.records.deals > deal or table.game.is_over:
            return
        turn = player.last(YourTurn)
        await tell(
            table,
            ActCommand(
                peer=player, version=turn.version, action=turn.legal[0].engine_action(turn.seat)
            ),
        )
    raise AssertionError("the deal did not end")


def kinds(peer: RecordingPeer) -> list[str]:
    return [m.TYPE for m in peer.got]


def hands_told(peer: RecordingPeer) -> list[int]:
    return [m.hand_number for m in peer.of(DealCommitment)]


async def test_a_spectator_of_the_table_ahead_sees_a_deal_only_once_the_twin_has_played_it(
    autojump_clock: trio.abc.Clock,
) -> None:
    gate = DealGate(2)
    async with twin_tables(gate) as (ahead, behind):
        ada, bob = RecordingPeer("ada"), RecordingPeer("bob")
        early, late = RecordingPeer("early"), RecordingPeer("late")
        quitter = RecordingPeer("quitter")
        await tell(ahead, SpectateCommand(peer=early, request_id=1))
        # Before the first deal there is nothing to hide: the reply and the snapshot come at once.
        assert kinds(early) == ["joined", "snapshot"]
        await tell(ahead, JoinCommand(peer=ada, account=ADA, seat=0))
        await tell(ahead, SpectateCommand(peer=quitter, request_id=2))
        await tell(ahead, ChatCommand(peer=ada, message=chat("ada", "ahead"), request_id=3))
        await play_deal(ahead, ada)
        # Table 0 has played deal 0 and is dealing deal 1; table 1 has not dealt at all.
        assert ahead.records.deals == 2 and behind.records.deals == 0
        assert hands_told(ada) == [1, 2]  # a player sees its own table live
        assert kinds(early) == ["joined", "snapshot"]  # the spectator: nothing of deal 0 yet
        assert kinds(quitter) == ["joined"]  # its snapshot (of deal 0) is held too
        assert gate.held(0) > 0
        await tell(ahead, LeaveCommand(peer=quitter, request_id=4))
        assert kinds(quitter) == ["joined", "ok"]

        # Table 1 plays deal 0: table 0's spectators may now see deal 0, and no more.
        await tell(behind, SpectateCommand(peer=late, request_id=5))
        await tell(behind, JoinCommand(peer=bob, account=BOB, seat=0))
        assert hands_told(early) == []  # table 1 is dealing deal 0: deal 0 is still hidden
        await play_deal(behind, bob)
        assert behind.records.deals == 2
        assert hands_told(early) == [1] and [s.hand_number for s in early.of(DealSeed)] == [1]
        assert [c.text for c in early.of(ChatMessage)] == ["ahead"]
        # The table behind is watched live while its deals have been played at the other table
        # already: deal 0 yes, deal 1 (which table 0 is playing now) not yet.
        assert hands_told(late) == [1]

        # Table 0 finishes; its spectator still waits for table 1's deal 1.
        await play_deal(ahead, ada)
        assert ahead.game.is_over
        gate.finished(0)  # what the ladder service does when a table's game is over
        assert hands_told(early) == [1] and not early.of(GameOver)
        assert hands_told(late) == [1, 2]  # table 1 is now behind in everything: live
        await play_deal(behind, bob)
        assert behind.game.is_over
        gate.finished(1)
        assert hands_told(early) == [1, 2] and early.of(GameOver)
        assert gate.held(0) == gate.held(1) == 0
        # What the spectator saw, it saw in the table's order: each deal's commitment, its
        # events, its seed, then the next.
        order = [
            (type(m).__name__, getattr(m, "hand_number", None))
            for m in early.got
            if isinstance(m, DealCommitment | DealSeed)
        ]
        assert order == [
            ("DealCommitment", 1),
            ("DealSeed", 1),
            ("DealCommitment", 2),
            ("DealSeed", 2),
        ]
        assert quitter.got[2:] == []  # what was held for the one who left was dropped


def chat(name: str, text: str) -> ChatMessage:
    return ChatMessage(scope=ChatScope.TABLE, table="L0", name=name, text=text)


def test_a_held_peer_stands_for_its_connection_among_the_spectators() -> None:
    gate = DealGate(2)
    peer = RecordingPeer("p")
    held = gate.watcher(0, peer)
    assert gate.watcher(0, peer) is held  # the same one while it watches
    spectators: set[object] = {held}
    assert peer in spectators and held == peer and hash(held) == hash(peer)
    spectators.discard(peer)
    assert not spectators
    assert held.peer_id == "p" and held.connected
    gate.gone(0, peer)
    assert gate.watcher(0, peer) is not held


def test_held_game_events_are_held_as_bytes() -> None:
    """A game event reaches a held spectator as frames with no message object; holding it (and
    asking whether it is chat) never decodes it."""
    gate = DealGate(2)
    peer = RecordingPeer("p")
    held = gate.watcher(0, peer)
    gate.dealing(0, 0)
    played = {"kind": "card_played", "seat": 1, "card": "QS", "trick_number": 2}
    shared = SharedEvent(game_event_frames("L0", 3, played))
    held.deliver_shared(shared)
    assert gate.held(0) == 1 and peer.shared == []
    assert shared.frames()._message is None  # not decoded to be held
    gate.dealing(1, 1)  # the twin has played deal 0
    assert peer.shared == [shared]


def test_held_chat_is_bounded_and_deals_are_released_in_order() -> None:
    gate = DealGate(2)
    peer = RecordingPeer("p")
    held = gate.watcher(0, peer)
    gate.dealing(0, 0)
    held.deliver(Ping())
    for i in range(MAX_HELD_CHAT + 10):
        held.deliver_shared(SharedEvent(chat("x", f"line {i}")))
    gate.dealing(0, 1)  # table 0 moves on to deal 1: what it says now is deal 1's
    held.deliver(Ok(id=1))
    assert peer.got == [] and gate.held(0) == MAX_HELD_CHAT + 2
    gate.dealing(1, 1)  # the twin has played deal 0
    assert [m.TYPE for m in peer.got] == ["ping"] + ["chat_message"] * MAX_HELD_CHAT
    gate.finished(1)
    assert peer.got[-1] == Ok(id=1) and gate.held(0) == 0
    # Nothing left to hide: delivered at once.
    held.deliver(Joined(table="L0", seat=None))
    assert isinstance(peer.got[-1], Joined)
    assert not isinstance(peer.got[-1], Snapshot) and isinstance(held, HeldPeer)
