"""The table as an actor, without sockets: who holds a seat, take-over, the fallback, and the order
of what is told. A real table task on an in-memory store; peers that record; trio's autojump clock."""

from __future__ import annotations

import trio

from protocol.messages import (
    ChatMessage,
    ClockExpired,
    Error,
    GameOver,
    Joined,
    Ok,
    SeatLost,
    Snapshot,
    Turn,
    YourTurn,
)
from protocol.types import Action, ActionKind, ChatScope
from server.table_commands import (
    ActCommand,
    ChatCommand,
    JoinCommand,
    LeaveCommand,
    Lifecycle,
    SpectateCommand,
)
from tests.server.unit.peers import RecordingPeer
from tests.server.unit.tables import ADA, BOB, running_table, settle, table_config, tell


def act_for(turn: YourTurn, peer: RecordingPeer, index: int = 0) -> ActCommand:
    return ActCommand(
        peer=peer, version=turn.version, action=turn.legal[index].engine_action(turn.seat)
    )


async def test_a_second_connection_takes_the_seat_only_when_it_asks(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with running_table(table_config()) as table:
        screen, terminal = RecordingPeer("screen"), RecordingPeer("terminal")
        await tell(table, JoinCommand(peer=screen, account=ADA, seat=0))
        turn = screen.last(YourTurn)  # the Hearts pass: the bots have passed already
        # Another connection of the same account, without asking: refused, nothing moves.
        await tell(table, JoinCommand(peer=terminal, account=ADA, request_id=5))
        refused = terminal.last(Error)
        assert refused.code == "seat_held" and refused.id == 5
        await tell(table, JoinCommand(peer=terminal, account=ADA, reattach=True))  # a login
        assert not terminal.of(Joined) and table.seats[0].holder is screen
        # Asked for: moved; the old holder is told why, and its act is refused not_seated.
        await tell(table, JoinCommand(peer=terminal, account=ADA, takeover=True, request_id=6))
        assert terminal.last(Joined).seat == 0 and terminal.last(Joined).id == 6
        assert terminal.of(Snapshot) and terminal.last(YourTurn).legal == turn.legal
        lost = screen.last(SeatLost)
        assert (lost.table, lost.seat, lost.reason) == ("t1", 0, "taken_over")
        before = table.game.version
        await tell(table, act_for(turn, screen))
        refused = screen.last(Error)
        assert refused.code == "not_seated" and "took it over" in refused.message
        assert table.game.version == before
        # The new holder plays, on the version its your_turn said.
        await tell(table, act_for(terminal.last(YourTurn), terminal))
        assert isinstance(terminal.got[-1], Ok | Turn | YourTurn) or terminal.of(Ok)
        assert table.game.version > before


async def test_an_act_is_answered_ok_before_its_events_and_turn_follows(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with running_table(table_config("spades", "standard", target_score=100)) as table:
        ada, watcher = RecordingPeer("ada"), RecordingPeer("watcher")
        await tell(table, JoinCommand(peer=ada, account=ADA, seat=0))
        await tell(table, SpectateCommand(peer=watcher))
        # Play until ada has acted a few times: every act's `ok` comes before what it caused.
        for _round in range(5):
            turn = ada.last(YourTurn)
            mark = len(ada.got)
            await tell(table, act_for(turn, ada))
            after = ada.got[mark:]
            assert isinstance(after[0], Ok), [m.TYPE for m in after]
            kinds = [m.TYPE for m in after]
            assert kinds.index("turn") > 1  # the events, then who acts next
        chat_mark = len(ada.got)
        line = ChatMessage(scope=ChatScope.TABLE, table="t1", name="ada", text="hi")
        await tell(table, ChatCommand(peer=ada, message=line, request_id=9))
        assert [m.TYPE for m in ada.got[chat_mark:]] == ["ok", "chat_message"]
        assert watcher.last(ChatMessage).text == "hi"
        # A connection not at the table may not chat there.
        stranger = RecordingPeer("stranger")
        await tell(table, ChatCommand(peer=stranger, message=line, request_id=10))
        assert stranger.last(Error).code == "not_seated"


async def test_a_player_who_leaves_mid_game_is_played_by_the_fallback_without_a_notice_a_move(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with running_table(table_config(target_score=30)) as table:
        ada, watcher = RecordingPeer("ada"), RecordingPeer("watcher")
        await tell(table, JoinCommand(peer=ada, account=ADA, seat=0))
        await tell(table, SpectateCommand(peer=watcher))
        await tell(table, act_for(ada.last(YourTurn), ada))  # ada passes, then walks away
        await tell(table, LeaveCommand(peer=ada, request_id=3))
        assert ada.last(Ok).id == 3
        with trio.fail_after(3600):  # trio time: the autojump clock runs the game out
            await table.game_over.wait()
        await settle()
        notices = watcher.of(ClockExpired)
        # One notice when the fallback takes the seat over, none for its later moves, and no
        # clock ran out (the fallback seat plays on the bots' clock).
        assert [(n.seat, n.reason) for n in notices] == [(0, "abandoned")], notices
        assert watcher.of(GameOver)
        assert table.lifecycle in (Lifecycle.FINISHED, Lifecycle.CLOSED)
        assert table.seats[0].account == ADA  # the result counts for ada's account


async def test_a_late_seat_is_played_by_the_fallback_after_a_clock_notice(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with running_table(table_config()) as table:
        ada = RecordingPeer("ada")
        await tell(table, JoinCommand(peer=ada, account=ADA, seat=0))
        turn = ada.last(YourTurn)
        mark = len(ada.got)
        await trio.sleep((turn.deadline_ms + turn.bank_ms) / 1000 + 0.001)  # trio time only
        await settle()
        after = ada.got[mark:]
        expired = [m for m in after if isinstance(m, ClockExpired)]
        assert [(e.seat, e.reason) for e in expired] == [(0, "clock")]
        first = after.index(expired[0])
        assert after[first + 1].TYPE == "cards_given"  # the fallback's pass, told after it
        # The decision was the server's: ada's own act for it now finds no decision open.
        await tell(table, act_for(turn, ada))
        assert ada.last(Error).code in ("not_your_turn", "stale_version")


async def test_requests_queued_behind_the_last_leave_are_answered(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with running_table(table_config(bots=(1, 2, 3))) as table:
        ada, late, watcher = RecordingPeer("ada"), RecordingPeer("late"), RecordingPeer("watcher")
        await tell(table, JoinCommand(peer=ada, account=ADA, seat=0))
        await tell(table, SpectateCommand(peer=watcher, request_id=1))
        assert watcher.last(Joined).id == 1
        # ada leaves; the fallback finishes the game; the watcher keeps the table open.
        await tell(table, LeaveCommand(peer=ada))
        with trio.fail_after(3600):
            await table.game_over.wait()
        await settle()
        assert table.lifecycle is Lifecycle.FINISHED
        # The last person goes, and requests already queued behind that leave still get answers.
        table.send_inbox.send_nowait(LeaveCommand(peer=watcher, request_id=2))
        table.send_inbox.send_nowait(JoinCommand(peer=late, account=BOB, request_id=3))
        table.send_inbox.send_nowait(SpectateCommand(peer=late, request_id=4))
        await settle()
        assert watcher.last(Ok).id == 2
        answers = {m.id: m.code for m in late.of(Error)}
        assert answers == {3: "no_such_table", 4: "no_such_table"}, late.got
        with trio.fail_after(1):
            await table.ended.wait()


async def test_an_act_listing_a_card_twice_is_the_rules_to_refuse(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The action was checked once, as it was decoded; a pass naming one card twice reaches the
    rules, which refuse it (`illegal_action` with their code), and nothing is applied."""
    async with running_table(table_config()) as table:
        ada = RecordingPeer("ada")
        await tell(table, JoinCommand(peer=ada, account=ADA, seat=0))
        turn = ada.last(YourTurn)  # the Hearts pass
        cards = turn.legal[0].cards
        assert cards is not None
        twice = Action(kind=ActionKind.PASS, cards=[cards[0], cards[0], cards[1]])
        before = table.game.version
        command = ActCommand(
            peer=ada, version=turn.version, action=twice.engine_action(0), request_id=8
        )
        await tell(table, command)
        refused = ada.last(Error)
        assert (refused.code, refused.detail, refused.id) == (
            "illegal_action",
            "wrong_pass_count",
            8,
        )
        assert table.game.version == before
        await tell(table, act_for(turn, ada))  # the decision is still open
        assert ada.last(Ok) and table.game.version > before
