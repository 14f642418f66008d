"""The client's picture of one table: the last snapshot's view, kept current by the events that follow.

Sans-IO: `TableState.apply(message, now)` takes any server message and updates the picture; the
renderer draws it and the input parser reads `turn`. The view is the engine's `to_dict()` shape
(docs/protocol.md, "Game views"); events move cards between the fields the way the event says (a
`card_played` moves the card from the hand to the trick), never by a rule of our own: legal moves come
from `your_turn`, Hearts points from the engine's `penalty_points`, deals from the engine (verify.py).
"""

from __future__ import annotations

import copy
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from client.verify import DealCheck, HandEvidence, Verdict, check_hand
from engine.cards import SUIT_LETTERS, SUIT_SYMBOLS, mask_of, parse_card
from engine.errors import EngineError
from engine.hearts_rules import pass_target, penalty_points
from engine.ruleset import Ruleset
from protocol import messages as m
from protocol.types import Action, TableInfo

LOG_LINES = 60
# Seats as seen from your chair: play goes clockwise, so the next seat sits on your left.
PLACES = {4: ("You", "West", "North", "East"), 3: ("You", "Left", "Right"), 2: ("You", "Opponent")}
SPECTATOR_PLACES = {4: ("South", "West", "North", "East"), 3: ("South", "Left", "Right")}


def card_key(card: str) -> int:
    """Sort key: the engine's card number (clubs, diamonds, hearts, spades, then jokers)."""
    try:
        return parse_card(card)
    except EngineError:
        return 99


def label(card: str) -> str:
    """`QS` -> `Q♠`, `TD` -> `10♦`; jokers (`BJ`, `LJ`) and anything unknown as they are."""
    if len(card) != 2 or card in ("BJ", "LJ") or card[1] not in SUIT_LETTERS:
        return card
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_SYMBOLS[SUIT_LETTERS.index(card[1])]


def labels(cards: list[str]) -> str:
    return " ".join(label(card) for card in cards)


def sort_cards(cards: list[str]) -> list[str]:
    return sorted(cards, key=card_key)


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


@dataclass(slots=True)
class HandSummary:
    """What `hand_scored` said, kept for the scores panel and `/scores`."""

    hand_number: int
    sides: list[list[int]]
    delta: list[int]
    after: list[int]
    bags_after: list[int]
    notes: list[str]


@dataclass
class TableState:
    """Everything the play screen shows about one table."""

    table: str = ""
    seat: int | None = None
    view: dict[str, Any] = field(default_factory=dict)
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
    evidence: HandEvidence | None = None
    finished_hands: list[dict[str, Any]] = field(default_factory=list)  # for the local journal
    _commitments: dict[int, str] = field(default_factory=dict)
    _pending_hand: dict[str, Any] | None = None

    # ---------------------------------------------------------------- facts for the screen

    @property
    def players(self) -> int:
        return int(self.view.get("players") or (len(self.info.seats) if self.info else 4))

    @property
    def game(self) -> str:
        return str(self.view.get("game") or (self.info.game.value if self.info else "spades"))

    def name(self, seat: int) -> str:
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
        try:
            self.ruleset = Ruleset.from_preset(info.preset, **dict(info.options))
        except EngineError:
            self.ruleset = None

    # ---------------------------------------------------------------- applying messages

    def say(self, line: str) -> None:
        self.log.append(line)

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
        if isinstance(table, str) and self.table and table != self.table:
            return
        handler = _HANDLERS.get(type(message))
        if handler is not None:
            handler(self, message, now)

    def _snapshot(self, msg: m.Snapshot, now: float) -> None:
        before = self.view
        self.table = msg.table
        self.seat = msg.seat
        self.view = copy.deepcopy(msg.view)
        self.turn = None
        self.clocks = {}
        if before:
            for line in meanwhile(before, self.view):
                self.say(line)
        hand_number = int(self.view.get("hand_number") or 0)
        if msg.commitment is not None and hand_number:
            # Joined or resumed during a hand: the snapshot carries the deal's commitment, so the
            # hand can still be checked when its seed is revealed (the cards as dealt are unknown
            # unless we saw the deal ourselves; every card seen played from now on is checked).
            self._commitments.setdefault(hand_number, msg.commitment)
            evidence = self.evidence
            if evidence is None or evidence.hand_number != hand_number:
                self.evidence = HandEvidence(
                    hand_number=hand_number,
                    dealer=int(self.view.get("dealer") or 0),
                    seat=self.seat,
                    commitment=msg.commitment,
                    transfers=self._possible_transfers(),
                    joined_midway=True,
                )
                self._pending_hand = {"bids": [], "passes": [], "tricks": []}
            elif evidence.commitment is None:
                evidence.commitment = msg.commitment

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
        self.view["version"] = msg.version
        self.view["to_act"] = list(msg.to_act)
        if self.turn is not None and self.seat not in msg.to_act:
            self.turn = None  # our decision is over: made, or played for us
            self.notice = ""
        self.clocks = {
            seat: SeatClock(now + deadline / 1000, bank)
            for seat, deadline, bank in zip(msg.to_act, msg.deadline_ms, msg.bank_ms, strict=True)
        }

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
        self.view["version"] = msg.version
        acting = self.acting()
        if msg.seat not in acting:  # a server without `turn`: at least we are to act
            self.view["to_act"] = [*acting, msg.seat]

    def _game_event(self, msg: m.GameEvent) -> None:
        self.view["version"] = msg.version
        # Events do not say who acts next: the `turn` that follows them does.
        self.view["to_act"] = []
        self.clocks = {}
        # Our turn stays ours while we must act: in a simultaneous phase (a Hearts pass) another
        # seat's action raises the version, and the server does not send the same choices again.
        # The `turn` that follows says when our decision is over.

    def _commitment(self, msg: m.DealCommitment, now: float) -> None:
        self._commitments[msg.hand_number] = msg.commitment

    def _hand_dealt(self, msg: m.HandDealt, now: float) -> None:
        self._game_event(msg)
        v = self.view
        n = self.players
        cards = sort_cards(list(msg.cards)) if msg.cards is not None else None
        v.update(
            hand_number=msg.hand_number,
            dealer=msg.dealer,
            hand_type=msg.hand_type,
            face_up=[list(x) for x in msg.face_up],
            looked=[seat not in msg.hidden for seat in range(n)],
            trick=[],
            last_trick=[],
            last_winner=-1,
            leader=-1,
            trick_number=1,
            tricks=[0] * n,
            played=[],
            bids=[None] * n,
            points=[0] * n,
            broken=False,
            given=[],
            received=[],
        )
        if msg.pass_direction is not None:
            v["pass_direction"] = (
                msg.pass_direction
            )  # Hearts: the server says where this hand passes
        if self.seat is not None:
            v["hand"] = cards
        if cards is not None:
            v["hand_sizes"] = [len(cards)] * n
        self._commitments.setdefault(msg.hand_number, msg.commitment)
        self.evidence = HandEvidence(
            hand_number=msg.hand_number,
            dealer=msg.dealer,
            seat=self.seat,
            commitment=self._commitments.get(msg.hand_number),
            my_cards=tuple(cards) if cards is not None else None,
        )
        self._pending_hand = {"bids": [], "passes": [], "tricks": []}
        self.say(f"Hand {msg.hand_number}: {self.name(msg.dealer)} dealt.")

    def _hand_looked(self, msg: m.HandLooked, now: float) -> None:
        self._game_event(msg)
        looked = self.view.setdefault("looked", [True] * self.players)
        if msg.seat < len(looked):
            looked[msg.seat] = True
        if msg.seat == self.seat and msg.cards is not None:
            self.view["hand"] = sort_cards(list(msg.cards))
            if self.evidence is not None and self.evidence.my_cards is None:
                self.evidence.my_cards = tuple(msg.cards)
        self.say(f"{self.name(msg.seat)} looked at the cards.")

    def _bid_made(self, msg: m.BidMade, now: float) -> None:
        self._game_event(msg)
        bids = self.view.setdefault("bids", [None] * self.players)
        shape: dict[str, Any] = {k: v for k, v in _fields(msg.bid).items() if v is not None}
        shape["text"] = msg.text
        if msg.seat < len(bids):
            bids[msg.seat] = shape
        if self._pending_hand is not None:
            self._pending_hand["bids"].append({"seat": msg.seat, "text": msg.text})
        self.say(f"{self.name(msg.seat)} bid {msg.text}.")

    def _cards_given(self, msg: m.CardsGiven, now: float) -> None:
        self._game_event(msg)
        count = len(msg.cards) if msg.cards is not None else (msg.count or 0)
        self._resize(msg.seat, -count)
        if msg.seat == self.seat and msg.cards is not None:
            self._remove(msg.cards)
            self.view["given"] = list(msg.cards)
            self.say(f"You passed {labels(msg.cards)} to {self.name(msg.receiver)}.")
        else:
            self.say(f"{self.name(msg.seat)} passed {count} cards.")

    def _cards_moved(self, msg: m.CardsPassed | m.CardsExchanged, now: float) -> None:
        self._game_event(msg)
        count = len(msg.cards) if msg.cards is not None else (msg.count or 0)
        self._resize(msg.receiver, count)
        if self.evidence is not None:
            self.evidence.transfers.append((msg.giver, msg.receiver))
        if self._pending_hand is not None:
            self._pending_hand["passes"].append(
                {"giver": msg.giver, "receiver": msg.receiver, "cards": msg.cards}
            )
        if msg.receiver == self.seat and msg.cards is not None:
            self.view["hand"] = sort_cards(self.hand() + list(msg.cards))
            self.view["received"] = list(msg.cards)
            self.say(f"You received {labels(msg.cards)} from {self.name(msg.giver)}.")

    def _card_played(self, msg: m.CardPlayed, now: float) -> None:
        self._game_event(msg)
        v = self.view
        v.setdefault("trick", []).append([msg.seat, msg.card])
        v.setdefault("played", []).append(msg.card)
        v["trick_number"] = msg.trick_number
        self._resize(msg.seat, -1)
        if msg.seat == self.seat:
            self._remove([msg.card])
        if self.evidence is not None:
            self.evidence.plays.append((msg.seat, msg.card))

    def _trick_won(self, msg: m.TrickWon, now: float) -> None:
        self._game_event(msg)
        v = self.view
        v["last_trick"] = [list(p) for p in msg.plays]
        v["last_winner"] = msg.seat
        v["trick"] = []
        v["leader"] = msg.seat
        tricks = v.setdefault("tricks", [0] * self.players)
        if msg.seat < len(tricks):
            tricks[msg.seat] += 1
        if self.game == "hearts":
            points = v.setdefault("points", [0] * self.players)
            jd = self.ruleset.hearts_jack_of_diamonds if self.ruleset else False
            taken = mask_of(parse_card(card) for _, card in msg.plays)
            if msg.seat < len(points):
                points[msg.seat] += penalty_points(taken, jd)
        if self._pending_hand is not None:
            # Each trick_won carries its whole trick, so the record survives missed card_played.
            self._pending_hand["tricks"].append(
                {
                    "number": msg.trick_number,
                    "plays": [list(p) for p in msg.plays],
                    "winner": msg.seat,
                }
            )
        cards = " ".join(label(card) for _, card in msg.plays)
        self.say(f"{self.name(msg.seat)} won trick {msg.trick_number} ({cards}).")

    def _spades_broken(self, msg: m.SpadesBroken, now: float) -> None:
        self._game_event(msg)
        self.view["broken"] = True
        self.say("Hearts are broken." if self.game == "hearts" else "Spades are broken.")

    def _claim(self, msg: m.ClaimMade, now: float) -> None:
        self._game_event(msg)
        held = "and it held" if msg.held else f"and it failed ({msg.penalty})"
        self.say(f"{self.name(msg.seat)} claimed the rest with {' '.join(msg.cards)} {held}.")

    def _dead_deal(self, msg: m.DealDeclaredDead, now: float) -> None:
        self._game_event(msg)
        self.say(f"{self.name(msg.seat)} showed a deficient hand ({msg.reason}); redeal.")

    def _drawn(self, msg: m.CardDrawn | m.DrawResolved | m.CardsDiscarded, now: float) -> None:
        self._game_event(msg)
        if isinstance(msg, m.DrawResolved):
            self._resize(msg.seat, 1)
            if msg.seat == self.seat and msg.taken is not None:
                self.view["hand"] = sort_cards([*self.hand(), msg.taken])
            self.view.setdefault("discards", []).append(msg.discarded)
            self.view["drawn"] = None
        elif isinstance(msg, m.CardDrawn) and msg.seat == self.seat:
            self.view["drawn"] = msg.card
        elif isinstance(msg, m.CardsDiscarded) and msg.seat == self.seat and msg.cards:
            self._remove(msg.cards)

    def _hand_scored(self, msg: m.HandScored, now: float) -> None:
        self._game_event(msg)
        v = self.view
        side_scores = list(msg.after)
        v["scores"] = side_scores
        v["bags"] = list(msg.bags_after)
        summary = HandSummary(
            msg.hand_number,
            [list(s) for s in msg.sides],
            list(msg.delta),
            side_scores,
            list(msg.bags_after),
            list(msg.notes),
        )
        self.scored.append(summary)
        parts = [f"{self.side_name(i)} {d:+d}" for i, d in enumerate(msg.delta)]
        self.say(f"Hand {msg.hand_number} scored: {', '.join(parts)}.")
        for note in msg.notes[:4]:
            self.say(f"  {note}")
        self._verify(msg.hand_number, msg.seed, msg)

    def _deal_seed(self, msg: m.DealSeed, now: float) -> None:
        if msg.hand_number not in self.checks:
            self._verify(msg.hand_number, msg.seed, None)

    def _game_over(self, msg: m.GameOver, now: float) -> None:
        self._game_event(msg)
        self.game_over = msg
        self.turn = None
        self.clocks = {}
        winners = ", ".join(self.name(s) for s in msg.winners)
        self.say(f"Game over: {winners} won ({msg.reason}).")

    # ---------------------------------------------------------------- helpers

    def side_name(self, index: int) -> str:
        sides = self.sides()
        if index >= len(sides):
            return f"side {index}"
        seats = sides[index]
        if self.seat is not None and self.seat in seats and len(seats) > 1:
            return "Us"
        if len(seats) == 1:
            return self.name(seats[0])
        if self.seat is not None and len(seats) > 1:
            return "Them"
        return "+".join(self.name(s) for s in seats)

    def _resize(self, seat: int, delta: int) -> None:
        sizes = self.view.get("hand_sizes")
        if isinstance(sizes, list) and 0 <= seat < len(sizes):
            sizes[seat] = max(0, sizes[seat] + delta)

    def _remove(self, cards: list[str]) -> None:
        hand = self.hand()
        for card in cards:
            if card in hand:
                hand.remove(card)
        self.view["hand"] = hand

    def _verify(self, hand_number: int, seed: str, scored: m.HandScored | None) -> None:
        evidence = self.evidence
        if evidence is None or evidence.hand_number != hand_number:
            evidence = HandEvidence(hand_number, 0, self.seat)
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
        """Keep the finished hand in the `spades-client-hand/1` shape (client/journal.py)."""
        pending = self._pending_hand or {"bids": [], "passes": [], "tricks": []}
        tricks = sorted(pending["tricks"], key=lambda t: int(t["number"]))
        seen = {int(t["number"]) for t in tricks}
        missed = [n for n in range(1, max(seen, default=0) + 1) if n not in seen]
        info = self.info
        self.finished_hands.append(
            {
                "format": "spades-client-hand/1",
                "game_id": self.table,
                "game": self.game,
                "preset": info.preset if info else None,
                "options": dict(info.options) if info else {},
                "ruleset": self.ruleset.to_dict() if self.ruleset else None,
                "players": self.players,
                "names": [self.names.get(s) for s in range(self.players)],
                "seat": self.seat,
                "hand_number": scored.hand_number,
                "dealer": evidence.dealer,
                "seed": seed,
                "commitment": evidence.commitment,
                "deal": [list(h) for h in result.deal] if result.deal else None,
                "my_cards": list(evidence.my_cards) if evidence.my_cards else None,
                "bids": pending["bids"],
                "passes": pending["passes"],
                "plays": [play for trick in tricks for play in trick["plays"]],
                "trick_winners": [trick["winner"] for trick in tricks],
                "tricks_seen": [trick["number"] for trick in tricks],
                "missed_tricks": missed,  # tricks played while the client was disconnected
                "tricks": list(scored.tricks),
                "score": {
                    "sides": [list(s) for s in scored.sides],
                    "before": list(scored.before),
                    "delta": list(scored.delta),
                    "after": list(scored.after),
                    "bags_after": list(scored.bags_after),
                },
                "notes": list(scored.notes),
                "verified": result.verdict.value,
            }
        )


def _fields(bid: m.BidInfo) -> dict[str, Any]:
    return {
        "tricks": bid.tricks,
        "blind": bid.blind,
        "no_trumps": bid.no_trumps,
        "moe": bid.moe,
        "bemo": bid.bemo,
        "ten_for_200": bid.ten_for_200,
        "double_nil": bid.double_nil,
    }


def meanwhile(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed between two views, in words: shown after a reconnect."""
    lines: list[str] = []
    hand_before, hand_after = before.get("hand_number", 0), after.get("hand_number", 0)
    if hand_after != hand_before:
        lines.append(f"While you were away: play moved from hand {hand_before} to {hand_after}.")
    else:
        played = len(after.get("played", [])) - len(before.get("played", []))
        tricks = sum(after.get("tricks", [])) - sum(before.get("tricks", []))
        bids = sum(b is not None for b in after.get("bids", [])) - sum(
            b is not None for b in before.get("bids", [])
        )
        if played or tricks or bids:
            lines.append(
                f"While you were away: {bids} bids, {played} cards played, {tricks} tricks won."
            )
        else:
            lines.append("While you were away: nothing happened at the table.")
    if after.get("scores") != before.get("scores"):
        lines.append(f"Scores are now {after.get('scores')}.")
    return lines


_HANDLERS: dict[type[m.Message], Any] = {
    m.Snapshot: TableState._snapshot,
    m.YourTurn: TableState._your_turn,
    m.Turn: TableState._turn_for_all,
    m.ClockExpired: TableState._clock_expired,
    m.DealCommitment: TableState._commitment,
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
    m.CardDrawn: TableState._drawn,
    m.DrawResolved: TableState._drawn,
    m.CardsDiscarded: TableState._drawn,
    m.HandScored: TableState._hand_scored,
    m.DealSeed: TableState._deal_seed,
    m.GameOver: TableState._game_over,
}
