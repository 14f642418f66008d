"""The table state follows a whole hand played by the real engine; the screen fits 80x24."""

from __future__ import annotations

import dataclasses
from io import StringIO

from rich.console import Console

from client.commands import Act, Problem, read_line
from client.render import Screen, render, seat_panel
from client.state import TableState
from client.verify import Verdict
from engine.ruleset import Ruleset
from protocol import messages as m
from protocol.schema import to_map
from tests.client.engine_table import EngineTable


def panel(state: TableState, seat: int, now: float = 0.0) -> str:
    """A seat's panel on the table as plain text, its lines joined by ` / `."""
    return " / ".join(line.plain.strip() for line in seat_panel(state, seat, 40, now))


def feed(state: TableState, table: EngineTable, now: float = 0.0) -> None:
    for message in table.take():
        state.apply(message, now)


def screen_text(state: TableState, *, color: bool = False, no_color: bool = False) -> str:
    out = StringIO()
    console = Console(
        file=out,
        width=80,
        height=24,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=no_color,
    )
    console.print(render(state, Screen(buffer="qs"), now=0.0))
    return out.getvalue()


def play_hand(ruleset: Ruleset, seed: bytes) -> tuple[TableState, EngineTable]:
    """Seat 0 types the number under its first legal card (or bids 3) until the hand is scored."""
    table = EngineTable(ruleset)
    state = TableState(ruleset=ruleset)  # the session sets it from the lobby's table info
    table.deal(seed)
    feed(state, table)
    for _ in range(60):
        if not table.others_until_mine():
            break
        feed(state, table)
        assert state.turn is not None
        kinds = state.turn.kinds()
        if "bid" in kinds:
            command = read_line("3", state)
        elif "pass" in kinds:
            command = read_line("1 2 3", state)
        else:
            legal_card = state.turn.legal[0].card
            assert legal_card is not None
            command = read_line(str(state.hand().index(legal_card) + 1), state)
        assert isinstance(command, Act), command
        assert command.version == table.game.version
        table.act(to_map(command.action))
        feed(state, table)
    feed(state, table)
    return state, table


def test_a_spades_hand_is_followed_and_verified() -> None:
    state, table = play_hand(Ruleset.from_preset("standard"), b"client-test-seed")
    assert state.scored and state.scored[0].hand_number == 1
    assert state.view["scores"] == list(table.game.scores)
    assert state.hand() == []
    assert sum(state.view["tricks"]) == 0 or sum(state.view["tricks"]) == 13
    check = state.checks[1]
    assert check.verdict is Verdict.VERIFIED, check.lines
    assert state.alarm == ""
    record = state.finished_hands[0]
    assert record["format"] == "spades-client-hand/1"
    assert len(record["plays"]) == 52 and len(record["trick_winners"]) == 13
    assert record["deal"] is not None and sorted(record["deal"][0]) == sorted(record["my_cards"])


def test_a_hearts_hand_passes_and_counts_penalty_points() -> None:
    state, table = play_hand(Ruleset.from_preset("hearts"), b"hearts-seed")
    assert state.game == "hearts"
    assert state.checks[1].verdict is Verdict.VERIFIED, state.checks[1].lines
    history = table.game.histories[-1]
    # Points the client added up trick by trick (with the engine's penalty_points) are the hand's.
    assert sum(state.view["points"]) == 26
    assert state.scored[0].after == list(history.score_after)


def test_the_screen_fits_80x24_with_and_without_colour() -> None:
    table = EngineTable(Ruleset.from_preset("standard"))
    state = TableState()
    table.deal(b"screen-seed")
    for _ in range(20):  # get to our first card play
        assert table.others_until_mine()
        feed(state, table)
        assert state.turn is not None
        if "play" in state.turn.kinds():
            break
        table.act({"kind": "bid", "tricks": 3, "blind": False})
        feed(state, table)
    plain = screen_text(state)
    lines = plain.rstrip("\n").split("\n")
    assert len(lines) <= 24
    assert max(len(line) for line in lines) <= 80
    assert "YOUR TURN" in plain and "Scores" in plain and "Hand" in plain
    assert "West" in plain and "North" in plain and "East" in plain
    assert state.turn is not None
    legal = {a.card for a in state.turn.legal if a.card is not None}
    hand = state.hand()
    hand_at = next(i for i, line in enumerate(lines) if line.startswith("Hand  "))
    numbers_line = lines[hand_at + 1]
    shown = set(numbers_line.split()) - {"·"}
    assert shown == {str(hand.index(card) + 1) for card in legal}
    coloured = screen_text(state, color=True)
    assert "\x1b[" in coloured and "31m" in coloured  # hearts and diamonds in red
    no_colour = screen_text(state, color=True, no_color=True)
    assert "31m" not in no_colour
    assert "♥" in no_colour or "♦" in no_colour or "♣" in no_colour


def test_a_tampered_commitment_is_shown_loudly() -> None:
    table = EngineTable(Ruleset.from_preset("hearts", hearts_pass_cycle=["none"]))
    state = TableState()
    table.deal(b"honest-seed")
    messages = table.take()
    for index, message in enumerate(messages):
        if isinstance(message, m.DealCommitment):
            messages[index] = dataclasses.replace(message, commitment="0" * 64)
    for message in messages:
        state.apply(message, 0.0)
    for _ in range(60):
        if not table.others_until_mine():
            break
        feed(state, table)
        assert state.turn is not None
        table.act(to_map(state.turn.legal[0]))
        feed(state, table)
    feed(state, table)
    assert state.checks[1].verdict is Verdict.MISMATCH
    assert "DEAL CHECK FAILED" in state.alarm
    assert "DEAL CHECK FAILED" in screen_text(state)


def test_reconnect_snapshot_says_what_happened_meanwhile() -> None:
    # Seat 0 deals (the first dealer is otherwise drawn from the seed): our seat leads the 2C.
    table = EngineTable(Ruleset.from_preset("standard", first_dealer=0))
    state = TableState()
    table.deal(b"away-seed")
    feed(state, table)
    state.went_away()  # the connection dropped (the session says so)
    for _ in range(6):
        assert table.others_until_mine()
        table.act(to_map(table.legal()[0]))  # our seat's moves: the server's fallback's
    table.take()  # all of it lost while we were away
    view = table.game.view(0).to_dict()
    state.apply(m.Snapshot(table="t1", version=table.game.version, seat=0, view=view), 1.0)
    away = [line for line in state.log if line.startswith(("While you were away", "Meanwhile"))]
    assert away and "the server's bot bid nil for you" in away[0], away  # legal()[0] is nil
    assert "the server's bot played 2♣" in away[0] and away[1].startswith("Meanwhile: "), away
    assert state.hand() == view["hand"]
    # A second snapshot while we are here all along (a `join` of a seat the hello gave back
    # already) says nothing: before, it said "nothing happened" over what the first one told.
    lines = len(state.log)
    state.apply(m.Snapshot(table="t1", version=table.game.version, seat=0, view=view), 2.0)
    assert len(state.log) == lines


def test_not_your_turn_and_watching_are_said_plainly() -> None:
    state = TableState(table="t1", seat=0)
    assert read_line("qs", state) == Problem("it is not your turn yet")
    watcher = TableState(table="t1", seat=None)
    problem = read_line("qs", watcher)
    assert isinstance(problem, Problem) and "watching" in problem.message


def test_who_is_to_act_is_only_shown_while_known() -> None:
    # A server without `turn`: the snapshot's to_act holds until the next event.
    table = EngineTable(Ruleset.from_preset("standard"), seat=None)
    state = TableState()
    table.deal(b"watch-seed")
    for message in table.take():
        state.apply(message, 0.0)
    snapshot = m.Snapshot(
        table="t1",
        version=table.game.version,
        seat=None,
        view=table.game.spectator_view().to_dict(),
    )
    state.apply(snapshot, 0.0)
    acting = table.game.to_act()[0]
    assert state.view["to_act"] == [acting]
    assert "◆" in panel(state, acting) and "◆" in screen_text(state)
    table._tell(table.game.apply(table.game.legal_actions(acting)[0]))
    for message in table.take():
        if not isinstance(message, m.Turn):
            state.apply(message, 0.0)
    assert state.view["to_act"] == []
    assert "◆" not in screen_text(state)


def screen_at(state: TableState, now: float) -> str:
    out = StringIO()
    Console(file=out, width=80, height=24).print(render(state, Screen(), now=now))
    return out.getvalue()


def test_another_seats_turn_and_clock_are_shown_to_players_and_spectators() -> None:
    for seat in (0, None):
        table = EngineTable(Ruleset.from_preset("standard"), seat=seat)
        state = TableState()
        table.deal(b"turn-seed")
        feed(state, table, now=100.0)
        acting = table.game.to_act()
        assert acting and acting[0] != 0  # the dealer is seat 0: seat 1 bids first
        other = acting[0]
        assert state.acting() == [other] and state.turn is None
        text = screen_at(state, 107.2)  # 7.2 s after the `turn` came: 23 s left of 30
        lines = text.rstrip("\n").split("\n")
        assert len(lines) <= 24 and max(len(line) for line in lines) <= 80
        assert "◆ 23s" in panel(state, other, 107.2) and "◆ 23s" in text
        waiting = "Watching. To act:" if seat is None else "Waiting for"
        assert f"{waiting} {state.name(other)} ⏱ 23s" in text
        # The next event moves play on; the `turn` after it names the next seat.
        table._tell(table.game.apply(table.game.legal_actions(other)[0]))
        feed(state, table, now=110.0)
        assert state.acting() == list(table.game.to_act())
        assert "◆" not in panel(state, other, 110.0)


def test_a_clock_run_out_and_the_bank_are_shown() -> None:
    state = TableState(table="t1", seat=0)
    state.apply(
        m.Turn(table="t1", version=3, to_act=[1, 2], deadline_ms=[0, 5000], bank_ms=[41000, 0]),
        50.0,
    )
    text = screen_at(state, 50.0)
    assert "◆ +41s" in panel(state, 1, 50.0) and "◆ 5s" in panel(state, 2, 50.0)
    assert "◆ +41s" in text and "◆ 5s" in text
    state.apply(
        m.ClockExpired(table="t1", version=3, seat=2, fallback="random bot", reason="clock"), 56.0
    )
    assert state.log[-1] == "North's clock ran out; the server played the random bot."
    state.apply(m.ClockExpired(table="t1", version=3, seat=0, fallback="random bot"), 56.0)
    assert state.log[-1] == "Your clock ran out; the server played the random bot."


def test_the_pass_direction_comes_from_hand_dealt() -> None:
    # The table's rules are unknown here (no ruleset), yet the pass target is known from the event.
    table = EngineTable(Ruleset.from_preset("hearts"))
    state = TableState()
    table.deal(b"pass-seed")
    feed(state, table)
    assert table.others_until_mine()
    feed(state, table)
    assert state.ruleset is None and state.view["pass_direction"] == "left"
    assert state.pass_receiver() == 1
    assert "pass 3 cards to West" in screen_at(state, 0.0)


def test_a_hand_joined_midway_is_verified_from_the_snapshot_commitment() -> None:
    from engine.deal import commitment

    for ruleset, seed in [
        (Ruleset.from_preset("standard"), b"midway-spades"),
        (Ruleset.from_preset("hearts"), b"midway-hearts"),
    ]:
        table = EngineTable(ruleset, seat=None)
        table.deal(seed)
        for _ in range(9):  # bids (or the pass) and a few cards, before we come
            acting = table.game.to_act()
            table._tell(table.game.apply(table.game.legal_actions(acting[0])[0]))
        table.take()
        state = TableState(ruleset=ruleset)
        view = table.game.spectator_view().to_dict()
        state.apply(
            m.Snapshot(
                table="t1",
                version=table.game.version,
                seat=None,
                view=view,
                commitment=commitment(seed),
            ),
            0.0,
        )
        for _ in range(200):
            if table.game.phase.value in ("dealing", "game_over"):
                break
            acting = table.game.to_act()
            table._tell(table.game.apply(table.game.legal_actions(acting[0])[0]))
        feed(state, table)
        check = state.checks[1]
        assert check.verdict is Verdict.VERIFIED, check.lines
        assert any("joined during the hand" in line for line in check.lines)
        assert state.alarm == ""
        # The same hand joined with another commitment in the snapshot is caught.
        liar = TableState(ruleset=ruleset)
        liar.apply(
            m.Snapshot(table="t1", version=1, seat=None, view=view, commitment="0" * 64), 0.0
        )
        liar.apply(m.DealSeed(table="t1", version=99, hand_number=1, seed=seed.hex()), 0.0)
        assert liar.checks[1].verdict is Verdict.MISMATCH


def test_tricks_missed_while_away_are_marked_in_the_record() -> None:
    from client.replay import hand_intro, to_hand, trick_line

    ruleset = Ruleset.from_preset("standard")
    table = EngineTable(ruleset)
    state = TableState(ruleset=ruleset)
    table.deal(b"gap-seed")
    feed(state, table)
    away = False
    for _ in range(60):
        if not table.others_until_mine():
            break
        if table.game.view(0).played.bit_count() >= 8 and not away:
            table.take()  # trick 2 and the start of 3 never reach us ...
            for _ in range(2):
                table.act(to_map(table.legal()[0]))
                assert table.others_until_mine()
            table.take()
            view = table.game.view(0).to_dict()  # ... then the resync
            state.apply(m.Snapshot(table="t1", version=table.game.version, seat=0, view=view), 0)
            table.others_until_mine()
            away = True
        feed(state, table)
        assert state.turn is not None
        table.act(to_map(state.turn.legal[0]))
        feed(state, table)
    feed(state, table)
    assert away
    record = state.finished_hands[0]
    assert (
        record["missed_tricks"] and len(record["tricks_seen"]) + len(record["missed_tricks"]) == 13
    )
    hand = to_hand(record)
    assert "not seen while disconnected" in " ".join(str(line) for line in hand_intro(hand))
    numbers = [
        int(str(trick_line(hand, i)).split(":")[0].split()[-1]) for i in range(len(hand.tricks))
    ]
    assert numbers == record["tricks_seen"]
    assert state.checks[1].verdict is Verdict.VERIFIED  # what was seen still checks out


def test_a_resync_at_the_turns_own_version_leaves_the_decision_open() -> None:
    """A `join` right after the login gave the seat back resyncs (a snapshot, then `your_turn`):
    a move typed between the two is still ours to make. A snapshot at a later version ends it."""
    ruleset = Ruleset.from_preset("standard")
    table = EngineTable(ruleset)
    state = TableState(ruleset=ruleset)
    table.deal(b"resync")
    feed(state, table)
    assert table.others_until_mine()
    feed(state, table)
    assert state.turn is not None
    version = state.turn.version
    view = table.game.view(0).to_dict()
    state.apply(m.Snapshot(table="t1", version=version, seat=0, view=view), 0.0)
    assert state.turn is not None and state.turn.version == version
    assert isinstance(read_line("3", state), Act)  # a bid of 3, typed before `your_turn` again
    state.apply(m.Snapshot(table="t1", version=version + 1, seat=0, view=view), 0.0)
    assert state.turn is None
    assert read_line("3", state) == Problem("it is not your turn yet")


def test_the_operators_announcement_is_shown_on_the_screen() -> None:
    state = TableState()
    state.apply(m.Announcement(text="restart at 22:00"), 0.0)
    assert state.log[-1] == "operator: restart at 22:00"
    assert "operator: restart at 22:00" in screen_text(state)


def test_a_pause_of_the_server_is_a_status_line_and_stops_the_clocks() -> None:
    """Issue 38: `service_paused` says play is paused (the status line, where the turn line was)
    and the clocks shown stop where they were; `paused` false takes both back."""
    state = TableState(table="t1", seat=0)
    state.apply(m.Turn(table="t1", version=3, to_act=[2], deadline_ms=[20000], bank_ms=[0]), 50.0)
    state.apply(m.ServicePaused(paused=True, reason="the database is away"), 52.0)
    assert state.paused_at == 52.0
    text = screen_at(state, 70.0)  # 18 s into the pause: the clock still says 18 s
    assert "Play is paused" in text and "◆ 18s" in text
    assert state.log[-1].startswith("Play paused")
    state.apply(m.ServicePaused(paused=False, paused_ms=20000), 72.0)
    assert state.paused_at is None and state.status == ""
    assert state.log[-1] == "Play resumed after 20.0 s."
    assert "Play is paused" not in screen_at(state, 72.0)
