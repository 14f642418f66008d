"""One fold of events into a seat's view: what each event tells a seat (or a spectator), as the engine
knows it.

A seat that is not in the game's process (the bot SDK's tracker, the terminal client) starts from a
`snapshot` (the engine's `SeatView`, or `PublicView` for a spectator, as a plain map: `view_from_dict`)
and then receives, in order, the redacted events (`Event.for_seat`, or their wire maps, which name the
kind as `t` and add `version`) and the `turn` messages saying who must act. `fold(view, event, ruleset)`
applies one event; `fold_turn(view, version, to_act)` applies a `turn`. Pure: no IO, no state but the
view; the view is frozen, so each step returns a new one.

After the events of one action and the `turn` that follows them, the folded view equals
`game.view(seat)` (or `game.spectator_view()`) but for `legal` and `choose_cards`, which only `your_turn`
gives, and for what no event tells a seat (see `UNTOLD`). tests/engine/test_view_fold.py checks this
for every preset after every action of random games; the page's reducer is checked against the same
engine (tests/web/test_page_logic.py). Where the fold needs a rule (how many cards a deal gives, the
phase an event leads to, a trick's Hearts points) it asks the engine's own functions and tables, so
a rule is written once.

A new event kind must be handled here: `fold` raises `UnknownEvent` for a kind it does not know, and a
test checks that every kind in `engine.events` is in `HANDLED`.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, Final, TypeVar

from engine import events as ev
from engine.actions import Action, Bid, action_from_dict
from engine.cards import Card, CardMask, mask_of, parse_card
from engine.claims import claim_award
from engine.dealing import next_dealer
from engine.errors import EngineError
from engine.hearts_rules import penalty_points
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView

View = TypeVar("View", PublicView, SeatView)
EventMap = Mapping[str, Any]

#: Where the folded view differs from the engine's, and why (tests/engine/test_view_fold.py allows
#: exactly these): the engine's view shows no hand while its seat has not looked, but a two-handed
#: seat that declared double nil draws its cards unseen and is told each one (`draw_resolved`), and no
#: event says when it may look at them (the draw's end), so the fold keeps them in `hand` meanwhile;
#: and after a two-handed double nil redraw, which three cards left the face-up discard pile (the
#: redrawing seat learns them; the other seat and spectators do not, until the next snapshot), and
#: in which order the redrawing seat drew them (its `received` is in card order here).
UNTOLD: Final = (
    "hand: a two-handed double nil seat's cards drawn before it may look",
    "discards: after a two-handed double nil redraw, but for the redrawing seat",
    "received: the order of a two-handed double nil redraw",
)


class UnknownEvent(EngineError):
    """An event kind the fold does not know (a new event without its fold). The view is unchanged."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"unknown_event: the view fold does not know the event {kind!r}")
        self.code = "unknown_event"
        self.kind = kind


def event_kind(event: EventMap) -> str:
    """The kind of an event map: `kind` (the engine's `for_seat`) or `t` (the wire's)."""
    return str(event.get("t") or event.get("kind"))


def fold(view: View, event: EventMap, ruleset: Ruleset) -> View:
    """The view after `event` (redacted, as `view`'s seat receives it). Raises UnknownEvent for a kind
    not in `HANDLED`, NotationError or KeyError for a malformed event; `view` itself never changes.

    Events do not say who acts next: `to_act` becomes empty until the `turn` (`fold_turn`); `legal`
    and `choose_cards` likewise wait for `your_turn`. A wire map's `version` is taken."""
    kind = event_kind(event)
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise UnknownEvent(kind)
    changes: dict[str, Any] = {"to_act": ()}
    if isinstance(view, SeatView):
        changes["legal"] = ()
        changes["choose_cards"] = ()
    version = event.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        changes["version"] = version
    handler(_Step(view, event, ruleset, changes))
    return _replace(view, changes)


def fold_all(view: View, events: Iterable[EventMap], ruleset: Ruleset) -> View:
    """`fold` over several events, in order."""
    for event in events:
        view = fold(view, event, ruleset)
    return view


def fold_turn(view: View, version: int, to_act: Sequence[int]) -> View:
    """The view after a `turn`: who must act now, at which version (in the order given: the server's
    `turn` lists them in seat order, where the engine's own view may order a simultaneous phase's
    seats otherwise). In play, before a trick's first card, the one seat to act is the trick's
    leader (which no event names before the first lead)."""
    changes: dict[str, Any] = {"version": version, "to_act": tuple(to_act)}
    if view.phase == "playing" and not view.trick and len(to_act) == 1:
        changes["leader"] = to_act[0]
    return _replace(view, changes)


_FIELDS: Final = {cls: tuple(f.name for f in fields(cls)) for cls in (PublicView, SeatView)}
_SET = object.__setattr__


def _replace(view: View, changes: Mapping[str, Any]) -> View:
    """`dataclasses.replace(view, **changes)` for the views, which have no `__post_init__`: filling
    the new frozen instance's slots directly halves the cost of a fold step (a bot's tracker folds
    every event of a game)."""
    cls = type(view)
    names = _FIELDS.get(cls)
    if names is None:  # a subclass of the engine's views: the general way
        return replace(view, **changes)
    new = object.__new__(cls)
    for name in names:
        _SET(new, name, changes[name] if name in changes else getattr(view, name))
    return new


# -- parsing a snapshot's view ---------------------------------------------------------------------------


def _mask(cards: Iterable[str] | None) -> CardMask:
    return mask_of(parse_card(card) for card in cards or ())


def _cards(cards: Iterable[str] | None) -> tuple[Card, ...]:
    return tuple(parse_card(card) for card in cards or ())


def _plays(plays: Iterable[Sequence[Any]]) -> tuple[tuple[int, Card], ...]:
    return tuple((int(seat), parse_card(str(card))) for seat, card in plays)


def parse_bid(seat: int, shape: Mapping[str, Any] | None) -> Bid | None:
    """A bid of a view or a `bid_made` event (its wire shape, `text` and absent fields ignored)."""
    if shape is None:
        return None
    clean = {k: v for k, v in shape.items() if v is not None and k not in ("text", "kind")}
    bid = action_from_dict({"kind": "bid", **clean}, seat)
    assert isinstance(bid, Bid)
    return bid


def view_from_dict(data: Mapping[str, Any]) -> PublicView | SeatView:
    """The typed view of a snapshot's plain map (`to_dict()`'s form): a `SeatView` when it names a
    seat, else a `PublicView`. Raises KeyError, ValueError or an EngineError for a malformed map."""
    n = int(data["players"])
    public: dict[str, Any] = {
        "game": str(data["game"]),
        "players": n,
        "phase": str(data["phase"]),
        "version": int(data["version"]),
        "hand_number": int(data["hand_number"]),
        "dealer": int(data["dealer"]),
        "hand_type": str(data.get("hand_type", "")),
        "to_act": tuple(int(s) for s in data.get("to_act", ())),
        "sides": tuple(tuple(int(s) for s in side) for side in data["sides"]),
        "scores": tuple(int(s) for s in data["scores"]),
        "bags": tuple(int(b) for b in data["bags"]),
        "bids": tuple(parse_bid(seat, bid) for seat, bid in enumerate(data["bids"])),
        "hand_sizes": tuple(int(s) for s in data["hand_sizes"]),
        "face_up": tuple(_mask(cards) for cards in data["face_up"]),
        "exposed": tuple(_mask(cards) for cards in data["exposed"]),
        "looked": tuple(bool(x) for x in data["looked"]),
        "leader": int(data["leader"]),
        "trick": _plays(data["trick"]),
        "trick_number": int(data["trick_number"]),
        "last_trick": _plays(data["last_trick"]),
        "last_winner": int(data["last_winner"]),
        "tricks": tuple(int(t) for t in data["tricks"]),
        "played": _mask(data["played"]),
        "broken": bool(data["broken"]),
        "discards": _mask(data.get("discards")),
        "pass_direction": str(data.get("pass_direction", "")),
        "points": tuple(int(p) for p in data.get("points", ())),
        "winners": tuple(int(w) for w in data.get("winners", ())),
    }
    if data.get("seat") is None:
        return PublicView(**public)
    seat = int(data["seat"])
    hand = data.get("hand")
    drawn = data.get("drawn")
    legal: tuple[Action, ...] = tuple(
        action_from_dict({k: v for k, v in shape.items() if v is not None}, seat)
        for shape in data.get("legal", ())
    )
    return SeatView(
        **public,
        seat=seat,
        hand=None if hand is None else _mask(hand),
        given=_cards(data.get("given")),
        received=_cards(data.get("received")),
        drawn=None if drawn is None else parse_card(str(drawn)),
        legal=legal,
        choose_cards=tuple(int(c) for c in data.get("choose_cards", ())),
    )


#: The fields of a `SeatView` that a `PublicView` lacks.
SEAT_FIELDS: Final = tuple(
    f.name for f in fields(SeatView) if f.name not in {g.name for g in fields(PublicView)}
)


# -- the events -----------------------------------------------------------------------------------------


class _Step:
    """One event being folded: the view before it, the event, the rules and the changes so far (the
    handlers read `now(field)` for a field's value with the changes applied)."""

    __slots__ = ("changes", "event", "rules", "view")

    def __init__(
        self, view: PublicView, event: EventMap, rules: Ruleset, changes: dict[str, Any]
    ) -> None:
        self.view = view
        self.event = event
        self.rules = rules
        self.changes = changes

    def now(self, name: str) -> Any:
        return self.changes[name] if name in self.changes else getattr(self.view, name)

    @property
    def me(self) -> int | None:
        """The view's seat (None for a spectator)."""
        return self.view.seat if isinstance(self.view, SeatView) else None

    @property
    def seat_view(self) -> bool:
        return isinstance(self.view, SeatView)

    def set_at(self, name: str, index: int, value: Any) -> None:
        items = list(self.now(name))
        items[index] = value
        self.changes[name] = tuple(items)

    def add_at(self, name: str, index: int, delta: int) -> None:
        self.set_at(name, index, self.now(name)[index] + delta)

    def hand(self) -> CardMask:
        hand = self.now("hand")
        return 0 if hand is None else int(hand)


def _count(e: EventMap) -> int:
    """How many cards an event moved: its `cards` when shown, else its `count`."""
    cards = e.get("cards")
    return len(cards) if cards is not None else int(e.get("count") or 0)


def _hand_dealt(s: _Step) -> None:
    e, r, n = s.event, s.rules, s.view.players
    dealer = int(e["dealer"])
    hidden = {int(seat) for seat in e.get("hidden", ())}
    direction = e.get("pass_direction")
    sizes = [0 if n == 2 else r.tricks_per_hand] * n
    if r.deck == "jokers":
        sizes[dealer] += 2  # the dealer takes the two extra cards and discards two
    if r.game == "hearts":
        phase = "passing" if direction not in (None, "none") else "playing"
    elif n == 2:
        phase = "drawing"
    elif r.deck == "jokers":
        phase = "discarding"
    else:
        phase = "bidding"
    s.changes.update(
        phase=phase,
        hand_number=int(e["hand_number"]),
        dealer=dealer,
        hand_type=str(e.get("hand_type", "")),
        bids=(None,) * n,
        hand_sizes=tuple(sizes),
        face_up=tuple(_mask(cards) for cards in e.get("face_up", ())) or (0,) * n,
        exposed=(0,) * n,
        looked=tuple(seat not in hidden for seat in range(n)),
        leader=-1,
        trick=(),
        trick_number=1,
        last_trick=(),
        last_winner=-1,
        tricks=(0,) * n,
        played=0,
        broken=False,
        discards=0,
        pass_direction=str(direction) if direction is not None else "",
        points=(0,) * n if r.game == "hearts" else (),
    )
    if s.seat_view:
        cards = e.get("cards")
        s.changes.update(
            hand=None if cards is None else _mask(cards), given=(), received=(), drawn=None
        )


def _hand_looked(s: _Step) -> None:
    seat = int(s.event["seat"])
    s.set_at("looked", seat, True)
    cards = s.event.get("cards")
    if seat == s.me and cards is not None:
        hand = _mask(cards)
        before = s.hand()
        taken = hand & ~before
        if s.rules.players == 2 and s.now("hand") is not None and taken:
            # Two-handed double nil: the redraw's cards are the new hand's cards not held before;
            # they left the face-up discard pile.
            s.changes["received"] = tuple(c for c in range(54) if taken >> c & 1)
            s.changes["discards"] = s.now("discards") & ~taken
        s.changes["hand"] = hand


def _card_drawn(s: _Step) -> None:
    card = s.event.get("card")
    if int(s.event["seat"]) == s.me and card is not None:
        s.changes["drawn"] = parse_card(str(card))


def _draw_resolved(s: _Step) -> None:
    e, seat = s.event, int(s.event["seat"])
    s.add_at("hand_sizes", seat, 1)
    s.changes["discards"] = s.now("discards") | 1 << parse_card(str(e["discarded"]))
    if seat == s.me:
        s.changes["drawn"] = None
        if e.get("taken") is not None:
            s.changes["hand"] = s.hand() | 1 << parse_card(str(e["taken"]))
    if all(size == s.rules.tricks_per_hand for size in s.now("hand_sizes")):
        # The stock is spent: a double nil is discarded for, else the bidding starts.
        doubles = any(bid is not None and bid.double_nil for bid in s.now("bids"))
        if doubles:
            s.changes["phase"] = "discarding"
        else:
            _start_bidding(s)
        s.changes["looked"] = (True,) * s.view.players


def _cards_discarded(s: _Step) -> None:
    e, seat = s.event, int(s.event["seat"])
    cards = e.get("cards")
    if s.rules.players == 2:
        # Two-handed double nil: three cards out, three redrawn from the pile (`hand_looked` follows
        # for the seat itself); the three discarded are out of play, not on the pile.
        if seat == s.me and cards:
            s.changes["hand"] = s.hand() & ~_mask(cards)
        n = s.view.players
        order = [(s.view.dealer + step) % n for step in range(1, n + 1)]
        doubles = [other for other in order if (bid := s.now("bids")[other]) and bid.double_nil]
        if not doubles or seat == doubles[-1]:
            _start_bidding(s)
        return
    s.add_at("hand_sizes", seat, -_count(e))
    if seat == s.me and cards is not None:
        s.changes["hand"] = s.hand() & ~_mask(cards)
    _start_bidding(s)


def _start_bidding(s: _Step) -> None:
    """Bidding starts, unless every seat has bid already (two-handed double nil, before the draw)."""
    s.changes["phase"] = "bidding"
    _after_bids(s)


def _after_bids(s: _Step) -> None:
    bids: tuple[Bid | None, ...] = s.now("bids")
    if None not in bids:
        s.changes["phase"] = "exchanging" if exchanges(s.rules, bids, s.view.dealer) else "playing"


def _bid_made(s: _Step) -> None:
    seat = int(s.event["seat"])
    s.set_at("bids", seat, parse_bid(seat, s.event["bid"]))
    if s.view.phase != "drawing":  # two-handed: a double nil is declared before the draw
        _after_bids(s)


def exchanges(rules: Ruleset, bids: Sequence[Bid | None], dealer: int) -> list[tuple[int, int]]:
    """The blind nil exchanges a hand's bids call for, in order: (blind nil seat, partner), one per
    side, the first blind nil bidder's (in bidding order, from the dealer's left) first."""
    if not rules.blind_nil_exchange or not rules.partnerships:
        return []
    n = len(bids)
    out: list[tuple[int, int]] = []
    for step in range(1, n + 1):
        seat = (dealer + step) % n
        bid = bids[seat]
        if bid is not None and bid.blind and bid.tricks == 0:
            partner = (seat + 2) % 4
            if not any(partner in pair for pair in out):
                out.append((seat, partner))
    return out


def _cards_given(s: _Step) -> None:
    e, seat = s.event, int(s.event["seat"])
    cards = e.get("cards")
    if seat == s.me and cards is not None:
        s.changes["given"] = _cards(cards)
    if s.view.game == "hearts":
        # A Hearts pass lies face down, out of the hand, until every seat has passed; a blind nil
        # exchange leaves the hand when it changes hands (`cards_exchanged`).
        s.add_at("hand_sizes", seat, -_count(e))
        if seat == s.me and cards is not None:
            s.changes["hand"] = s.hand() & ~_mask(cards)


def _cards_exchanged(s: _Step) -> None:
    e = s.event
    giver, receiver = int(e["giver"]), int(e["receiver"])
    cards = e.get("cards")
    count = _count(e)
    s.add_at("hand_sizes", giver, -count)
    s.add_at("hand_sizes", receiver, count)
    if cards is not None:
        if giver == s.me:
            s.changes["given"] = _cards(cards)
            s.changes["hand"] = s.hand() & ~_mask(cards)
        if receiver == s.me:
            s.changes["received"] = _cards(cards)
            s.changes["hand"] = s.hand() | _mask(cards)
    pairs = exchanges(s.rules, s.now("bids"), s.view.dealer)
    if pairs and (receiver, giver) == pairs[-1]:
        s.changes["phase"] = "playing"  # the last exchange's return: play starts


def _cards_passed(s: _Step) -> None:
    e = s.event
    giver, receiver = int(e["giver"]), int(e["receiver"])
    cards = e.get("cards")
    s.add_at("hand_sizes", receiver, _count(e))  # the giver's went when it gave (`cards_given`)
    if cards is not None and receiver == s.me:
        s.changes["received"] = tuple(sorted(_cards(cards)))
        s.changes["hand"] = s.hand() | _mask(cards)
    if cards is not None and giver == s.me:
        s.changes["given"] = _cards(cards)
    s.changes["phase"] = "playing"  # the passes change hands together, when every seat has passed


def _card_played(s: _Step) -> None:
    e, seat = s.event, int(s.event["seat"])
    card = parse_card(str(e["card"]))
    bit = 1 << card
    trick = s.now("trick")
    if not trick:
        s.changes["leader"] = seat
    s.changes.update(
        phase="playing",
        trick=(*trick, (seat, card)),
        trick_number=int(e["trick_number"]),
        played=s.now("played") | bit,
    )
    s.add_at("hand_sizes", seat, -1)
    for name in ("face_up", "exposed"):
        masks = s.now(name)
        if seat < len(masks) and masks[seat] & bit:
            s.set_at(name, seat, masks[seat] & ~bit)
    if seat == s.me and s.now("hand") is not None:
        s.changes["hand"] = s.hand() & ~bit


def _spades_broken(s: _Step) -> None:
    s.changes["broken"] = True


def _trick_won(s: _Step) -> None:
    e, seat = s.event, int(s.event["seat"])
    plays = _plays(e["plays"])
    number = int(e["trick_number"])
    s.changes.update(
        last_trick=plays,
        last_winner=seat,
        trick=(),
        leader=seat,
        trick_number=min(number + 1, s.rules.tricks_per_hand),
    )
    s.add_at("tricks", seat, 1)
    if s.view.game == "hearts":
        taken = mask_of(card for _, card in plays)
        s.add_at("points", seat, penalty_points(taken, s.rules.hearts_jack_of_diamonds))


def _claim_made(s: _Step) -> None:
    e, seat = s.event, int(s.event["seat"])
    held, penalty = bool(e["held"]), str(e.get("penalty", ""))
    if not held and penalty == "exposed":
        s.set_at("exposed", seat, _mask(e["cards"]))
    awarded = claim_award(seat, held, penalty, s.now("bids"), s.view.sides)
    remaining = s.rules.tricks_per_hand - sum(s.now("tricks"))
    if awarded and remaining > 0:
        # The rest of the tricks go round the awarded seats; `hand_scored` (next) gives the counts.
        s.changes["last_winner"] = awarded[(remaining - 1) % len(awarded)]


def _deal_declared_dead(s: _Step) -> None:
    s.changes.update(phase="dealing", dealer=int(s.event["next_dealer"]), leader=-1)


def _hand_scored(s: _Step) -> None:
    e = s.event
    s.changes.update(
        phase="dealing",
        leader=-1,
        dealer=next_dealer(s.view.dealer, s.view.players),  # unless the game is over: `game_over`
        trick_number=s.rules.tricks_per_hand,  # a claim may have ended the hand early
        tricks=tuple(int(t) for t in e["tricks"]),
        scores=tuple(int(x) for x in e["after"]),
        bags=tuple(int(x) for x in e["bags_after"]),
    )


def _game_over(s: _Step) -> None:
    s.changes.update(phase="game_over", winners=tuple(int(w) for w in s.event["winners"]))
    if s.view.phase == "dealing":
        # The last hand's `hand_scored` passed the deal on; a game that is over keeps its dealer.
        s.changes["dealer"] = (s.view.dealer - 1) % s.view.players


_HANDLERS: dict[str, Callable[[_Step], None]] = {
    ev.HandDealt.kind: _hand_dealt,
    ev.HandLooked.kind: _hand_looked,
    ev.CardDrawn.kind: _card_drawn,
    ev.DrawResolved.kind: _draw_resolved,
    ev.CardsDiscarded.kind: _cards_discarded,
    ev.BidMade.kind: _bid_made,
    ev.CardsGiven.kind: _cards_given,
    ev.CardsExchanged.kind: _cards_exchanged,
    ev.CardsPassed.kind: _cards_passed,
    ev.CardPlayed.kind: _card_played,
    ev.SpadesBroken.kind: _spades_broken,
    ev.TrickWon.kind: _trick_won,
    ev.ClaimMade.kind: _claim_made,
    ev.DealDeclaredDead.kind: _deal_declared_dead,
    ev.HandScored.kind: _hand_scored,
    ev.GameOver.kind: _game_over,
}

#: Every event kind the fold applies (a test checks it is every kind `engine.events` defines).
HANDLED: Final = frozenset(_HANDLERS)
