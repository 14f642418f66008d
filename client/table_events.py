"""How the deal's and the game's events change the client's picture of a table (client/state.py).

Each handler moves cards between the view's fields the way its event says (a `card_played` moves the
card from the hand to the trick), never by a rule of our own, writes the event's line in the table's
log, and hands the deal's facts to the witness that checks the deal at the end of the hand. They are
the bulk of `TableState` and change nothing else about it, so they live here: `TableEvents` is a mixin
of `TableState`, whose message table (`_HANDLERS`) names them. The messages that are not the game's
events (snapshots, turns, clocks, seats) and the end of the game stay in client/state.py.
"""

from __future__ import annotations

from typing import Any, Protocol

from client import carryover
from client.cards import label, labels, sort_cards
from client.results import HandResult, HandSummary, hand_result, notes_by_side, said_of
from client.verify import DealCheck, dealt_sizes
from engine.cards import mask_of, parse_card
from engine.hearts_rules import penalty_points
from engine.ruleset import Ruleset
from protocol import messages as m


class _Table(Protocol):
    """What the handlers read and change of TableState (its fields and the methods they call)."""

    view: dict[str, Any]
    seat: int | None
    ruleset: Ruleset | None
    result: HandResult | None
    scored: list[HandSummary]
    checks: dict[int, DealCheck]
    witness: carryover.HandWitness

    @property
    def players(self) -> int: ...

    @property
    def game(self) -> str: ...

    @property
    def bags_shown(self) -> bool: ...

    def say(self, line: str) -> None: ...

    def name(self, seat: int) -> str: ...

    def side_name(self, index: int) -> str: ...

    def hand(self) -> list[str]: ...

    def _game_event(self, msg: m.GameEvent) -> None: ...

    def _verify(self, hand_number: int, seed: str, scored: m.HandScored | None) -> None: ...

    def _resize(self, seat: int, delta: int) -> None: ...

    def _remove(self, cards: list[str]) -> None: ...


class TableEvents:
    """Mixin of TableState: a handler for each event of the deal and of the game."""

    # TableState's field, declared with its type: mypy would otherwise take the type of the None
    # assigned below as this class's own, narrower than the field's.
    result: HandResult | None

    def _commitment(self: _Table, msg: m.DealCommitment, now: float) -> None:
        self.witness.commitments[msg.hand_number] = msg.commitment

    def _hand_dealt(self: _Table, msg: m.HandDealt, now: float) -> None:
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
        # How many cards each seat holds now: the engine's deal for these rules (the event carries
        # only our own cards); without the rules, our own count, else unknown (not shown).
        dealt = dealt_sizes(self.ruleset, msg.dealer) if self.ruleset is not None else None
        sizes = list(dealt) if dealt is not None else None
        if sizes is None and cards is not None:
            sizes = [len(cards)] * n
        v["hand_sizes"] = sizes
        self.witness.dealt(msg.hand_number, msg.dealer, self.seat, msg.commitment, cards)
        self.say(f"Hand {msg.hand_number}: {self.name(msg.dealer)} dealt.")

    def _hand_looked(self: _Table, msg: m.HandLooked, now: float) -> None:
        self._game_event(msg)
        looked = self.view.setdefault("looked", [True] * self.players)
        if msg.seat < len(looked):
            looked[msg.seat] = True
        if msg.seat == self.seat and msg.cards is not None:
            self.view["hand"] = sort_cards(list(msg.cards))
            self.witness.looked(list(msg.cards))
        self.say(f"{self.name(msg.seat)} looked at the cards.")

    def _bid_made(self: _Table, msg: m.BidMade, now: float) -> None:
        self._game_event(msg)
        bids = self.view.setdefault("bids", [None] * self.players)
        shape: dict[str, Any] = {k: v for k, v in _fields(msg.bid).items() if v is not None}
        shape["text"] = msg.text
        if msg.seat < len(bids):
            bids[msg.seat] = shape
        self.witness.bid(msg.seat, msg.text)
        self.say(f"{self.name(msg.seat)} bid {msg.text}.")

    def _cards_given(self: _Table, msg: m.CardsGiven, now: float) -> None:
        self._game_event(msg)
        count = len(msg.cards) if msg.cards is not None else (msg.count or 0)
        self._resize(msg.seat, -count)
        if msg.seat == self.seat and msg.cards is not None:
            self._remove(msg.cards)
            self.view["given"] = list(msg.cards)
            self.say(f"You passed {labels(msg.cards)} to {self.name(msg.receiver)}.")
        else:
            self.say(f"{self.name(msg.seat)} passed {count} cards.")

    def _cards_moved(self: _Table, msg: m.CardsPassed | m.CardsExchanged, now: float) -> None:
        self._game_event(msg)
        count = len(msg.cards) if msg.cards is not None else (msg.count or 0)
        self._resize(msg.receiver, count)
        self.witness.moved(msg.giver, msg.receiver, msg.cards)
        if msg.receiver == self.seat and msg.cards is not None:
            self.view["hand"] = sort_cards(self.hand() + list(msg.cards))
            self.view["received"] = list(msg.cards)
            self.say(f"You received {labels(msg.cards)} from {self.name(msg.giver)}.")

    def _card_played(self: _Table, msg: m.CardPlayed, now: float) -> None:
        self._game_event(msg)
        if self.result is not None and self.result.hand_number < int(v_hand(self.view)):
            self.result = None  # the next hand is under way
        v = self.view
        v.setdefault("trick", []).append([msg.seat, msg.card])
        v.setdefault("played", []).append(msg.card)
        v["trick_number"] = msg.trick_number
        self._resize(msg.seat, -1)
        if msg.seat == self.seat:
            self._remove([msg.card])
        self.witness.played(msg.seat, msg.card)

    def _trick_won(self: _Table, msg: m.TrickWon, now: float) -> None:
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
        self.witness.trick(msg.trick_number, [list(p) for p in msg.plays], msg.seat)
        cards = " ".join(label(card) for _, card in msg.plays)
        self.say(f"{self.name(msg.seat)} won trick {msg.trick_number} ({cards}).")

    def _spades_broken(self: _Table, msg: m.SpadesBroken, now: float) -> None:
        self._game_event(msg)
        self.view["broken"] = True
        self.say("Hearts are broken." if self.game == "hearts" else "Spades are broken.")

    def _claim(self: _Table, msg: m.ClaimMade, now: float) -> None:
        self._game_event(msg)
        held = "and it held" if msg.held else f"and it failed ({msg.penalty})"
        self.say(f"{self.name(msg.seat)} claimed the rest with {' '.join(msg.cards)} {held}.")

    def _dead_deal(self: _Table, msg: m.DealDeclaredDead, now: float) -> None:
        self._game_event(msg)
        self.say(f"{self.name(msg.seat)} showed a deficient hand ({msg.reason}); redeal.")

    def _drawn(
        self: _Table, msg: m.CardDrawn | m.DrawResolved | m.CardsDiscarded, now: float
    ) -> None:
        self._game_event(msg)
        if isinstance(msg, m.DrawResolved):
            self._resize(msg.seat, 1)
            if msg.seat == self.seat and msg.taken is not None:
                self.view["hand"] = sort_cards([*self.hand(), msg.taken])
            self.view.setdefault("discards", []).append(msg.discarded)
            self.view["drawn"] = None
        elif isinstance(msg, m.CardDrawn) and msg.seat == self.seat:
            self.view["drawn"] = msg.card
        elif isinstance(msg, m.CardsDiscarded):
            self._resize(msg.seat, -(len(msg.cards) if msg.cards else (msg.count or 0)))
            if msg.seat == self.seat and msg.cards:
                self._remove(msg.cards)

    def _hand_scored(self: _Table, msg: m.HandScored, now: float) -> None:
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
        self.scored = [row for row in self.scored if row.hand_number != msg.hand_number]
        self.scored.append(summary)
        self.result = hand_result(
            summary,
            list(msg.tricks),
            list(v.get("bids") or []),
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

    def _deal_seed(self: _Table, msg: m.DealSeed, now: float) -> None:
        if msg.hand_number not in self.checks:
            self._verify(msg.hand_number, msg.seed, None)

    def _resize(self: _Table, seat: int, delta: int) -> None:
        sizes = self.view.get("hand_sizes")
        if isinstance(sizes, list) and 0 <= seat < len(sizes):
            sizes[seat] = max(0, sizes[seat] + delta)

    def _remove(self: _Table, cards: list[str]) -> None:
        hand = self.hand()
        for card in cards:
            if card in hand:
                hand.remove(card)
        self.view["hand"] = hand


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


def v_hand(view: dict[str, Any]) -> int:
    return int(view.get("hand_number") or 0)
