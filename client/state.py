"""The client's picture of one table: the last snapshot's view, kept current by the events that follow.

Sans-IO: `TableState.apply(message, now)` takes any server message and updates the picture; the
renderer draws it and the input parser reads `turn`. The picture is the engine's own typed view
(`current`), moved on by the engine's fold of events (`engine.view_fold`, the one the bot SDK uses
too, property-tested against the engine's views), and its plain map `view` (the engine's `to_dict()`
shape, docs/protocol.md "Game views") that the screen reads. Nothing here follows a rule: legal moves
come from `your_turn`, what an event changes from the fold, deals from the engine (verify.py). What
is the client's own stays here: the table's log, the hand's check and record (the witness), the
results, clocks and seats.
"""

from __future__ import annotations

import copy
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from client import carryover
from client.cards import card_key, label, labels, sort_cards
from client.results import (
    HandResult,
    HandSummary,
    hand_result,
    meanwhile,
    minutes,
    notes_by_side,
    said_of,
)
from client.verify import DealCheck, HandEvidence, Verdict, check_hand
from engine.errors import EngineError
from engine.hearts_rules import pass_target
from engine.ruleset import Ruleset
from engine.seat_names import who
from engine.view_fold import HANDLED, fold, fold_turn, view_from_dict
from engine.views import PublicView
from protocol import messages as m
from protocol.types import Action, TableInfo
from protocol.wire import to_wire

LOG_LINES = 60
# Seats as seen from your chair: play goes clockwise, so the next seat sits on your left.
PLACES = {4: ("You", "West", "North", "East"), 3: ("You", "Left", "Right"), 2: ("You", "Opponent")}
SPECTATOR_PLACES = {4: ("South", "West", "North", "East"), 3: ("South", "Left", "Right")}

# The card helpers are client.cards's, exported here too: the screen imports `label` from here.
__all__ = [
    "LOG_LINES",
    "PLACES",
    "SPECTATOR_PLACES",
    "SeatClock",
    "TableState",
    "Turn",
    "card_key",
    "label",
    "labels",
    "sort_cards",
]


@dataclass(slots=True)
class Turn:
    """A pending `your_turn`: what we may do, at which version, until when (trio clock seconds)."""

    version: int
    legal: list[Action]
    deadline: float
    bank_ms: int

    def kinds(self) -> set[str]:
        return {action.kind.value for action in self.legal}


@dataclass(frozen=True, slots=True)
class SeatClock:
    """Another seat's (or our) clock from `turn`: its decision's deadline (trio clock seconds), then
    the bank it has left after that."""

    deadline: float
    bank_ms: int

    def seconds_left(self, now: float) -> int:
        """Whole seconds left, bank included (the bank drains once the deadline has passed)."""
        return max(0, math.ceil(self.deadline + self.bank_ms / 1000 - now))


@dataclass
class TableState:
    """Everything the play screen shows about one table."""

    table: str = ""
    seat: int | None = None
    view: dict[str, Any] = field(
        default_factory=dict
    )  # `current`'s plain map: what the screen reads
    # The engine's view of our seat (a spectator's: PublicView), kept by the engine's fold; None
    # before the first snapshot, or when a snapshot's view was not a whole one (then events change
    # nothing until the next snapshot).
    current: PublicView | None = None
    names: dict[int, str] = field(default_factory=dict)
    info: TableInfo | None = None
    ruleset: Ruleset | None = None
    turn: Turn | None = None
    clocks: dict[int, SeatClock] = field(default_factory=dict)  # from `turn`: every seat to act
    log: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    notice: str = ""  # the last refusal or warning, shown above the prompt until the next action
    alarm: str = ""  # a deal that did not verify: shown loudly until the game ends
    status: str = ""  # connection status ("reconnecting…")
    scored: list[HandSummary] = field(default_factory=list)
    checks: dict[int, DealCheck] = field(default_factory=dict)
    game_over: m.GameOver | None = None
    witness: carryover.HandWitness = field(default_factory=carryover.HandWitness)
    finished_hands: list[dict[str, Any]] = field(default_factory=list)  # for the local journal
    result: HandResult | None = None  # the last hand's result, shown until the next is under way
    # Seats whose player's connection dropped: seat -> when the server stops holding it (trio
    # clock seconds; None when only the lobby's listing said so, without the hold left).
    away: dict[int, float | None] = field(default_factory=dict)
    moved_myself: bool = False  # an action of ours was sent and not yet answered
    # While the server has paused play (`service_paused`): when it began (trio clock seconds).
    # The screen shows every clock as it stood then; the `turn` after the pause resets them.
    paused_at: float | None = None
    _away_view: dict[str, Any] | None = None  # the view when we went away (see `went_away`)

    # ---------------------------------------------------------------- facts for the screen

    @property
    def players(self) -> int:
        return int(self.view.get("players") or (len(self.info.seats) if self.info else 4))

    @property
    def game(self) -> str:
        return str(self.view.get("game") or (self.info.game.value if self.info else "spades"))

    def name(self, seat: int) -> str:
        """A seat as the log and the panels name it: where it sits and who sits there, `West
        (heuristic)`, `North (alice)`; ours is `You`; just `West` while the lobby has not said."""
        place = self.place(seat)
        if seat == self.seat:
            return place
        player = who(self.names.get(seat))
        return f"{place} ({player})" if player else place

    def place(self, seat: int) -> str:
        """Where a seat sits as seen from ours: You, West, North, East (Left/Right at three)."""
        n = self.players
        if not 0 <= seat < n:
            return f"seat {seat}"
        places = PLACES.get(n, tuple(f"seat {s}" for s in range(n)))
        if self.seat is None:
            return SPECTATOR_PLACES.get(n, places)[seat]
        return places[(seat - self.seat) % n]

    def player(self, seat: int) -> str:
        """The account in a seat, if the lobby told us."""
        return self.names.get(seat, "")

    def hand(self) -> list[str]:
        cards = self.view.get("hand")
        return list(cards) if isinstance(cards, list) else []

    def sides(self) -> list[list[int]]:
        sides = self.view.get("sides")
        if isinstance(sides, list) and sides:
            return [list(side) for side in sides]
        return [[seat] for seat in range(self.players)]

    def acting(self) -> list[int]:
        """The seats that must act now (from `turn`, or the snapshot until one comes)."""
        to_act = self.view.get("to_act")
        return [int(seat) for seat in to_act] if isinstance(to_act, list) else []

    def pass_receiver(self) -> int | None:
        """Hearts: the seat our pass goes to this hand (the engine's pass_target), if known."""
        direction = self.view.get("pass_direction")
        if self.seat is None or not direction or direction == "none":
            return None
        try:
            return pass_target(self.seat, str(direction), self.players)
        except KeyError:
            return None

    # ---------------------------------------------------------------- table facts from the lobby

    def set_info(self, info: TableInfo) -> None:
        """Seat names and the ruleset (for re-dealing) from the lobby's description of the table."""
        self.info = info
        for seat in info.seats:
            if seat.player:
                self.names[seat.seat] = seat.player
            if seat.seat == self.seat or seat.bot or not seat.player or seat.connected:
                self.away.pop(seat.seat, None)
            else:
                self.away.setdefault(seat.seat, None)  # away; `seat_status` says for how long
        try:
            self.ruleset = Ruleset.from_preset(info.preset, **dict(info.options))
        except EngineError:
            self.ruleset = None

    # ---------------------------------------------------------------- applying messages

    @property
    def bags_shown(self) -> bool:
        """Spades with bags counted (not three-handed 003's `bags: off`; unknown rules: shown)."""
        return self.game == "spades" and (self.ruleset is None or self.ruleset.bags != "off")

    def say(self, line: str) -> None:
        self.log.append(line)

    def went_away(self) -> None:
        """The connection dropped (or the client stopped): the next snapshot says what changed
        since this view. A snapshot that comes while we were here all along says nothing."""
        if self.view and self._away_view is None:
            self._away_view = copy.deepcopy(self.view)

    def apply(self, message: m.Message, now: float) -> None:
        """Update the picture from one server message (others' tables are ignored)."""
        table = getattr(message, "table", None)
        if isinstance(message, m.TableChanged):
            if message.table.table == self.table:
                self.set_info(message.table)
            return
        if isinstance(message, m.ChatMessage):
            if message.table in (None, self.table):
                self.say(f"<{message.name}> {message.text}")
            return
        if isinstance(message, m.Announcement):  # the server's operator, to everyone
            self.say(f"operator: {message.text}")
            return
        if isinstance(table, str) and self.table and table != self.table:
            return
        handler = _handler(type(message))
        if handler is not None:
            handler(self, message, now)

    def _snapshot(self, msg: m.Snapshot, now: float) -> None:
        before, self._away_view = self._away_view, None
        # A resync at our turn's own version (a `join` right after the login gave the seat back)
        # leaves that decision open: nothing happened since, and its `your_turn` follows. Blanking
        # it would refuse a move typed in between ("not your turn yet") though it is ours.
        still_open = (
            self.turn is not None
            and msg.table == self.table
            and msg.seat == self.seat
            and msg.version == self.turn.version
        )
        self.table = msg.table
        self.seat = msg.seat
        self.view = copy.deepcopy(msg.view)
        try:
            self.current = view_from_dict(msg.view)
        except (EngineError, KeyError, ValueError, TypeError):
            self.current = None  # not a whole view: shown as it is, not followed
        if not still_open:
            self.turn = None
        self.clocks = {}
        if before:
            for line in meanwhile(
                before,
                self.view,
                self.seat,
                name=self.name,
                side_name=self.side_name,
                moved_myself=self.moved_myself,
            ):
                self.say(line)
        self.moved_myself = False
        self._note_unseen_hands()
        hand_number = int(self.view.get("hand_number") or 0)
        if msg.commitment is not None and hand_number:
            # Joined or resumed during a hand: the snapshot carries the deal's commitment, so the
            # hand can still be checked when its seed is revealed (the cards as dealt are unknown
            # unless we saw the deal ourselves; every card seen played from now on is checked).
            dealer = int(self.view.get("dealer") or 0)
            transfers = self._possible_transfers()
            self.witness.joined(hand_number, dealer, self.seat, msg.commitment, transfers)

    def _note_unseen_hands(self) -> None:
        """Hands scored while we were away (or before we came) as one row of the scores, so the
        totals add up: the server's snapshot has the scores, not each hand's."""
        scores = self.view.get("scores")
        if not isinstance(scores, list) or not scores:
            return
        last = self.scored[-1] if self.scored else None
        known = list(last.after) if last is not None else [0] * len(scores)
        if [int(x) for x in scores] == known:
            return
        hand = int(self.view.get("hand_number") or 0)
        between = str(self.view.get("phase")) in ("dealing", "game_over")
        upto = hand if between else hand - 1
        first = (last.last_hand or last.hand_number) + 1 if last is not None else 1
        if upto < first:
            return
        self.scored.append(
            HandSummary(
                hand_number=first,
                sides=self.sides(),
                delta=[int(x) - k for x, k in zip(scores, known, strict=False)],
                after=[int(x) for x in scores],
                bags_after=[int(x) for x in self.view.get("bags") or []],
                notes=["not seen: played while you were away"],
                last_hand=upto,
            )
        )

    def _seat_status(self, msg: m.SeatStatus, now: float) -> None:
        if msg.seat == self.seat:
            return
        who = self.name(msg.seat)
        if msg.connected:
            if msg.seat in self.away:
                del self.away[msg.seat]
                self.say(f"{who} is back.")
            return
        hold = (msg.hold_ms or 0) / 1000
        self.away[msg.seat] = now + hold
        self.say(f"{who} disconnected (seat held for {minutes(hold)}).")

    def _service_paused(self, msg: m.ServicePaused, now: float) -> None:
        if msg.paused:
            if self.paused_at is None:
                self.paused_at = now
            self.status = (
                "Play is paused: the server cannot reach its database (it resumes by itself)."
            )
            self.say("Play paused: the server cannot reach its database; clocks are stopped.")
            return
        if self.paused_at is not None:
            self.status = ""
        self.paused_at = None
        lasted = f" after {(msg.paused_ms or 0) / 1000:.1f} s" if msg.paused_ms else ""
        self.say(f"Play resumed{lasted}.")

    def _possible_transfers(self) -> list[tuple[int, int]]:
        """Cards that may have changed hands before we joined: the Hearts pass (its direction is in
        the view) and partners' exchanges (Spades), so a card played after one is no false alarm."""
        n = self.players
        direction = str(self.view.get("pass_direction") or "none")
        if self.game == "hearts":
            if direction == "none":
                return []
            try:
                return [(giver, pass_target(giver, direction, n)) for giver in range(n)]
            except KeyError:
                return [(giver, receiver) for giver in range(n) for receiver in range(n)]
        pairs = [side for side in self.sides() if len(side) == 2]
        return [(a, b) for a, b in pairs] + [(b, a) for a, b in pairs]

    def _turn_for_all(self, msg: m.Turn, now: float) -> None:
        self._moved_on(msg.version, list(msg.to_act))
        if self.turn is not None and self.seat not in msg.to_act:
            self.turn = None  # our decision is over: made, or played for us
            self.notice = ""
        self.clocks = {
            seat: SeatClock(now + deadline / 1000, bank)
            for seat, deadline, bank in zip(msg.to_act, msg.deadline_ms, msg.bank_ms, strict=True)
        }

    def _moved_on(self, version: int, to_act: list[int]) -> None:
        """Who must act now, at which version (a `turn`, or a `your_turn` without one)."""
        self.view["version"] = version
        self.view["to_act"] = to_act
        if self.current is not None:
            self.current = fold_turn(self.current, version, to_act)
            self.view["leader"] = self.current.leader  # before a trick's first card: its leader

    def _clock_expired(self, msg: m.ClockExpired, now: float) -> None:
        who = "Your" if msg.seat == self.seat else f"{self.name(msg.seat)}'s"
        if msg.reason == "abandoned":
            self.say(f"{self.name(msg.seat)} left the game; the server plays the {msg.fallback}.")
        else:
            self.say(f"{who} clock ran out; the server played the {msg.fallback}.")
        self.clocks.pop(msg.seat, None)

    def _your_turn(self, msg: m.YourTurn, now: float) -> None:
        if self.seat is not None and msg.seat != self.seat:
            return
        self.turn = Turn(msg.version, list(msg.legal), now + msg.deadline_ms / 1000, msg.bank_ms)
        acting = self.acting()
        # A server without `turn`: at least we are to act.
        self._moved_on(msg.version, acting if msg.seat in acting else [*acting, msg.seat])

    # ---------------------------------------------------------------- the game's events

    def _event(self, msg: m.GameEvent, now: float) -> None:
        """A game event: the engine's fold moves the picture on; then what is the client's own (the
        log, the hand's witness, the results) is kept by the event's handler in `_OWN`."""
        # Events do not say who acts next (the `turn` that follows them does), so the clocks stop.
        # Our turn stays ours while we must act: in a simultaneous phase (a Hearts pass) another
        # seat's action raises the version, and the server does not send the same choices again.
        # The `turn` that follows says when our decision is over.
        self.clocks = {}
        if self.current is not None:
            try:
                self.current = fold(self.current, to_wire(msg), self._rules())
            except (EngineError, KeyError, ValueError, TypeError) as exc:
                self.current = None
                self.say(
                    f"(the table is shown as it was: {exc}; it is brought up to date on rejoining)"
                )
            else:
                self._show()
        if self.current is None:
            self.view["version"] = msg.version
            self.view["to_act"] = []
        if (
            self.turn is not None
            and isinstance(msg, _OUR_ACTS)
            and msg.seat == self.seat
            and msg.version > self.turn.version
        ):
            # The event of our own action: our decision is over, even if the reader got here before
            # the task that sent the action read its `ok` (no "YOUR TURN" over a hand it has left).
            self.turn = None
        own = _OWN.get(type(msg))
        if own is not None:
            own(self, msg)

    def _show(self) -> None:
        assert self.current is not None
        self.view = self.current.to_dict()

    def _rules(self) -> Ruleset:
        """The table's rules (the lobby's listing says them); until it has, the default rules of
        this game and number of seats."""
        if self.ruleset is not None:
            return self.ruleset
        players = self.players
        if self.game == "hearts":
            base = Ruleset.from_preset("hearts")
            return base if players == 4 else base.with_options(players=players)
        return Ruleset.from_preset({3: "three-player", 2: "two-player"}.get(players, "standard"))

    def _commitment(self, msg: m.DealCommitment, now: float) -> None:
        self.witness.commitments[msg.hand_number] = msg.commitment

    def _hand_dealt(self, msg: m.HandDealt) -> None:
        cards = sort_cards(list(msg.cards)) if msg.cards is not None else None
        self.witness.dealt(msg.hand_number, msg.dealer, self.seat, msg.commitment, cards)
        self.say(f"Hand {msg.hand_number}: {self.name(msg.dealer)} dealt.")

    def _hand_looked(self, msg: m.HandLooked) -> None:
        if msg.seat == self.seat and msg.cards is not None:
            self.witness.looked(list(msg.cards))
        self.say(f"{self.name(msg.seat)} looked at the cards.")

    def _bid_made(self, msg: m.BidMade) -> None:
        self.witness.bid(msg.seat, msg.text)
        self.say(f"{self.name(msg.seat)} bid {msg.text}.")

    def _cards_given(self, msg: m.CardsGiven) -> None:
        if msg.seat == self.seat and msg.cards is not None:
            self.say(f"You passed {labels(msg.cards)} to {self.name(msg.receiver)}.")
        else:
            count = len(msg.cards) if msg.cards is not None else (msg.count or 0)
            self.say(f"{self.name(msg.seat)} passed {count} cards.")

    def _cards_moved(self, msg: m.CardsPassed | m.CardsExchanged) -> None:
        self.witness.moved(msg.giver, msg.receiver, msg.cards)
        if msg.receiver == self.seat and msg.cards is not None:
            self.say(f"You received {labels(msg.cards)} from {self.name(msg.giver)}.")

    def _card_played(self, msg: m.CardPlayed) -> None:
        if self.result is not None and self.result.hand_number < int(
            self.view.get("hand_number") or 0
        ):
            self.result = None  # the next hand is under way
        self.witness.played(msg.seat, msg.card)

    def _trick_won(self, msg: m.TrickWon) -> None:
        self.witness.trick(msg.trick_number, [list(p) for p in msg.plays], msg.seat)
        cards = " ".join(label(card) for _, card in msg.plays)
        self.say(f"{self.name(msg.seat)} won trick {msg.trick_number} ({cards}).")

    def _spades_broken(self, msg: m.SpadesBroken) -> None:
        self.say("Hearts are broken." if self.game == "hearts" else "Spades are broken.")

    def _claim(self, msg: m.ClaimMade) -> None:
        held = "and it held" if msg.held else f"and it failed ({msg.penalty})"
        self.say(f"{self.name(msg.seat)} claimed the rest with {' '.join(msg.cards)} {held}.")

    def _dead_deal(self, msg: m.DealDeclaredDead) -> None:
        self.say(f"{self.name(msg.seat)} showed a deficient hand ({msg.reason}); redeal.")

    def _hand_scored(self, msg: m.HandScored) -> None:
        summary = HandSummary(
            msg.hand_number,
            [list(s) for s in msg.sides],
            list(msg.delta),
            list(msg.after),
            list(msg.bags_after),
            list(msg.notes),
        )
        self.scored = [row for row in self.scored if row.hand_number != msg.hand_number]
        self.scored.append(summary)
        self.result = hand_result(
            summary,
            list(msg.tricks),
            list(self.view.get("bids") or []),
            game=self.game,
            bags_shown=self.bags_shown,
            name=self.name,
            side_name=self.side_name,
        )
        parts = [f"{self.side_name(i)} {d:+d}" for i, d in enumerate(msg.delta)]
        self.say(f"Hand {msg.hand_number} scored: {', '.join(parts)}.")
        for index, notes in enumerate(notes_by_side(msg.notes, msg.sides)):
            for note in notes[:3]:
                self.say(f"  {said_of(note, self.side_name(index), self.name)}")
        self._verify(msg.hand_number, msg.seed, msg)

    def _deal_seed(self, msg: m.DealSeed, now: float) -> None:
        if msg.hand_number not in self.checks:
            self._verify(msg.hand_number, msg.seed, None)

    def _game_over(self, msg: m.GameOver) -> None:
        self.game_over = msg
        self.turn = None
        winners = ", ".join(self.name(s) for s in msg.winners)
        self.say(f"Game over: {winners} won ({msg.reason}).")

    # ---------------------------------------------------------------- across runs (journal.py)

    def progress(self) -> dict[str, Any]:
        """What this client has seen of the hand in play, for the journal's progress file."""
        return self.witness.progress(self.table, self.seat, self.view)

    def restore(self, records: list[dict[str, Any]], saved: object | None) -> None:
        """Take back what an earlier run of the client saw at this table, before the first
        snapshot: the hands it saw scored (the journal) and the hand it was following (the
        progress file). That snapshot then says what changed while we were away."""
        rows, checks = carryover.seen_hands(records)
        known = {row.hand_number for row in rows}
        self.scored = sorted(
            [*rows, *(row for row in self.scored if row.hand_number not in known)],
            key=lambda row: row.hand_number,
        )
        self.checks.update(checks)
        found = carryover.read_progress(saved, self.table)
        if found is None:
            return
        self.seat = found.seat
        self._away_view = found.view
        self.witness.take_back(found)

    # ---------------------------------------------------------------- helpers

    def side_name(self, index: int) -> str:
        sides = self.sides()
        if index >= len(sides):
            return f"side {index}"
        seats = sides[index]
        if self.seat is not None and self.seat in seats and len(seats) > 1:
            return "Us"
        if len(seats) == 1:
            return self.place(seats[0])
        if self.seat is not None and len(seats) > 1:
            return "Them"
        return "+".join(self.place(s) for s in seats)

    def _verify(self, hand_number: int, seed: str, scored: m.HandScored | None) -> None:
        evidence = self.witness.evidence_of(hand_number, self.seat)
        result = check_hand(evidence, seed, self.ruleset)
        self.checks[hand_number] = result
        if result.verdict is Verdict.MISMATCH:
            self.alarm = f"DEAL CHECK FAILED for hand {hand_number}: {result.lines[-1]}"
            self.say(f"!!! {self.alarm}")
        elif result.verdict is Verdict.VERIFIED:
            self.say(f"Hand {hand_number}: deal verified against the commitment (/verify).")
        if scored is not None:
            self._journal(evidence, seed, scored, result)

    def _journal(
        self, evidence: HandEvidence, seed: str, scored: m.HandScored, result: DealCheck
    ) -> None:
        """Keep the finished hand for the local history (client/journal.py)."""
        facts = carryover.TableFacts(
            table=self.table,
            game=self.game,
            info=self.info,
            ruleset=self.ruleset,
            players=self.players,
            names=[self.names.get(s) for s in range(self.players)],
            seat=self.seat,
        )
        self.finished_hands.append(
            carryover.hand_record(
                facts, evidence, self.witness.pending, seed=seed, scored=scored, result=result
            )
        )


# The messages that are not the game's events.
_HANDLERS: dict[type[m.Message], Any] = {
    m.Snapshot: TableState._snapshot,
    m.SeatStatus: TableState._seat_status,
    m.ServicePaused: TableState._service_paused,
    m.YourTurn: TableState._your_turn,
    m.Turn: TableState._turn_for_all,
    m.ClockExpired: TableState._clock_expired,
    m.DealCommitment: TableState._commitment,
    m.DealSeed: TableState._deal_seed,
}

# The game's events: the fold changes the view (TableState._event); these keep the client's own.
# An event of which the client keeps nothing needs no entry: every event the fold knows is routed to
# `_event` (`_handler`), so a new event needs nothing here.
_OWN: dict[type[m.GameEvent], Any] = {
    m.HandDealt: TableState._hand_dealt,
    m.HandLooked: TableState._hand_looked,
    m.BidMade: TableState._bid_made,
    m.CardsGiven: TableState._cards_given,
    m.CardsPassed: TableState._cards_moved,
    m.CardsExchanged: TableState._cards_moved,
    m.CardPlayed: TableState._card_played,
    m.TrickWon: TableState._trick_won,
    m.SpadesBroken: TableState._spades_broken,
    m.ClaimMade: TableState._claim,
    m.DealDeclaredDead: TableState._dead_deal,
    m.HandScored: TableState._hand_scored,
    m.GameOver: TableState._game_over,
}


# The events an action of a seat causes, naming that seat.
_OUR_ACTS = (
    m.BidMade,
    m.CardPlayed,
    m.CardsGiven,
    m.ClaimMade,
    m.CardsDiscarded,
    m.DrawResolved,
    m.DealDeclaredDead,
)


def _handler(kind: type[m.Message]) -> Any:
    """The handler of a message type: its own, or `_event` for a game event the fold knows."""
    handler = _HANDLERS.get(kind)
    if handler is None and issubclass(kind, m.GameEvent) and getattr(kind, "TYPE", "") in HANDLED:
        return TableState._event
    return handler
