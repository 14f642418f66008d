"""`ViewTracker`: a seat's view kept up to date from the server's stream, a snapshot then events.

The server sends a full `snapshot` when a seat joins (or rejoins after a drop), then one event per thing
that happens, and `your_turn` with the legal actions when the seat must act (lichess's bot stream works
the same way). This applies each event to the snapshot's `view` map, so that at `your_turn` the bot
gets the same `to_dict()` form the engine would give in-process. Only facts an event states are
applied; anything the stream cannot tell (another seat's cards) stays as the snapshot had it. A test
plays whole games in-process, feeds the engine's per-seat events here, and compares with the engine's
own views after every event.
"""

import bisect
import copy
from collections.abc import Mapping
from typing import Any

from engine.cards import mask_of, mask_text, parse_card
from engine.hearts_rules import pass_direction, penalty_points
from engine.ruleset import Ruleset

#: The phase a `your_turn` is about, from the kinds of its legal actions.
PHASE_OF_KIND: dict[str, str] = {
    "bid": "bidding",
    "look": "bidding",
    "deficient": "bidding",
    "play": "playing",
    "claim": "playing",
    "pass": "passing",
    "exchange": "exchanging",
    "discard": "discarding",
    "keep_drawn": "drawing",
}


def _sorted(cards: set[str]) -> list[str]:
    return mask_text(mask_of(parse_card(c) for c in cards))


_CARD_NUMBER: dict[str, int] = {mask_text(1 << card)[0]: card for card in range(54)}


def _card_number(text: str) -> int:
    number = _CARD_NUMBER.get(text)
    return parse_card(text) if number is None else number  # parse_card raises on bad text


def _with_card(cards: list[str], card: str) -> list[str]:
    """A new list: `cards` (in card order, as `mask_text` gives them) with `card` in its place.

    Once per card played: cheaper than re-sorting the whole hand's play each time."""
    if card not in _CARD_NUMBER:
        card = mask_text(1 << parse_card(card))[0]  # the notation mask_text writes (raises if bad)
    if card in cards:
        return list(cards)
    out = list(cards)
    bisect.insort(out, card, key=_card_number)
    return out


class ViewTracker:
    """One seat's view of one table, as the plain map of `engine.views.SeatView.to_dict()`."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.view: dict[str, Any] = {}
        self._pending: set[int] = set()  # seats whose given cards have left their hand already

    @property
    def ready(self) -> bool:
        return bool(self.view)

    def snapshot(self, view: Mapping[str, Any]) -> None:
        """Start again from a full view."""
        self.view = copy.deepcopy(dict(view))
        # In a pass, the seats no longer to act have given their cards (already out of their hands).
        passing = self.view.get("phase") == "passing"
        players = range(int(self.view.get("players", 0)))
        self._pending = {s for s in players if passing and s not in self.view.get("to_act", ())}

    def for_turn(self, seat: int, version: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The view to decide on at a `your_turn`: phase, turn and legal actions from the message."""
        view = dict(self.view)
        kinds = {str(action.get("kind")) for action in legal}
        phase = next((PHASE_OF_KIND[k] for k in PHASE_OF_KIND if k in kinds), view.get("phase"))
        if view.get("phase") == "drawing" and "look" in kinds:
            phase = "drawing"  # two-handed: double nil is declared (or not) before the draw
        view.update(seat=seat, version=version, legal=legal, phase=phase)
        if seat not in view.get("to_act", ()):
            view["to_act"] = [seat]
        return view

    # -- events --------------------------------------------------------------------------------------
    def apply(self, event: Mapping[str, Any]) -> None:
        """Apply one game event (its map, `t` or `kind` naming it); unknown kinds are ignored."""
        if not self.view:
            return
        kind = str(event.get("t") or event.get("kind"))
        handler = getattr(self, "_on_" + kind, None)
        if handler is not None:
            handler(event)
        if "version" in event and isinstance(event["version"], int):
            self.view["version"] = event["version"]

    def _me(self) -> int:
        return int(self.view.get("seat", -1))

    def _hand(self) -> set[str]:
        return set(self.view.get("hand") or ())

    def _set_hand(self, cards: set[str]) -> None:
        self.view["hand"] = _sorted(cards)
        self.view["hand_sizes"][self._me()] = len(cards)

    def _on_hand_dealt(self, e: Mapping[str, Any]) -> None:
        v = self.view
        r = self.ruleset
        n = int(v["players"])
        me = self._me()
        hidden = set(e.get("hidden", ()))
        self._pending = set()
        number = int(e["hand_number"])
        v.update(
            phase="passing" if r.game == "hearts" else "drawing" if r.players == 2 else "bidding",
            hand_number=number,
            dealer=int(e["dealer"]),
            hand_type=str(e.get("hand_type", "")),
            bids=[None] * n,
            face_up=[list(cards) for cards in e.get("face_up", [[]] * n)],
            exposed=[[] for _ in range(n)],
            looked=[seat not in hidden for seat in range(n)],
            trick=[],
            trick_number=1,
            last_trick=[],
            last_winner=-1,
            tricks=[0] * n,
            played=[],
            broken=False,
            discards=[],
            points=[0] * n if r.game == "hearts" else v.get("points", []),
            given=[],
            received=[],
            drawn=None,
            legal=[],
        )
        cards = e.get("cards")
        size = r.tricks_per_hand if r.players != 2 else 0
        v["hand_sizes"] = [size] * n
        if r.deck == "jokers":
            v["hand_sizes"][int(e["dealer"])] += 2
        if r.game == "hearts":
            v["pass_direction"] = pass_direction(number - 1, r.hearts_pass_cycle)
        if me >= 0:
            v["hand"] = None if me in hidden else list(cards or [])
            if cards is not None:
                v["hand_sizes"][me] = len(cards)

    def _on_hand_looked(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        self.view["looked"][seat] = True
        if seat == self._me() and e.get("cards") is not None:
            self._set_hand(set(e["cards"]))

    def _on_card_drawn(self, e: Mapping[str, Any]) -> None:
        if int(e["seat"]) == self._me():
            self.view["drawn"] = e.get("card")

    def _on_draw_resolved(self, e: Mapping[str, Any]) -> None:
        v = self.view
        seat = int(e["seat"])
        v["hand_sizes"][seat] += 1
        v["discards"] = _sorted({*v.get("discards", ()), str(e["discarded"])})
        if seat == self._me():
            v["drawn"] = None
            if e.get("taken") is not None:
                self._set_hand(self._hand() | {str(e["taken"])})

    def _on_cards_discarded(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        cards = e.get("cards")
        if seat == self._me() and cards is not None:
            self._set_hand(self._hand() - set(cards))
        else:
            self.view["hand_sizes"][seat] -= int(e.get("count") or 0)

    def _on_bid_made(self, e: Mapping[str, Any]) -> None:
        bid = dict(e["bid"])
        bid.setdefault("blind", False)
        bid["text"] = e.get("text", "")
        self.view["bids"][int(e["seat"])] = bid

    def _on_cards_given(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        cards = e.get("cards")
        count = len(cards) if cards is not None else int(e.get("count") or 0)
        self.view["hand_sizes"][seat] -= count
        self._pending.add(seat)
        if seat == self._me() and e.get("cards") is not None:
            self.view["given"] = list(e["cards"])
            # Given cards lie face down, out of the hand, until they change hands.
            self.view["hand"] = _sorted(self._hand() - set(e["cards"]))

    def _on_cards_passed(self, e: Mapping[str, Any]) -> None:
        self._transfer(e)

    def _on_cards_exchanged(self, e: Mapping[str, Any]) -> None:
        self._transfer(e)

    def _transfer(self, e: Mapping[str, Any]) -> None:
        v = self.view
        giver, receiver = int(e["giver"]), int(e["receiver"])
        cards = e.get("cards")
        count = len(cards) if cards is not None else int(e.get("count") or 0)
        me = self._me()
        if giver == me and cards is not None:
            v["given"] = list(cards)
            v["hand"] = _sorted(self._hand() - set(cards))
        if receiver == me and cards is not None:
            v["received"] = _sorted(set(cards))
            v["hand"] = _sorted(self._hand() | set(cards))
        if giver != receiver:
            if giver in self._pending:
                self._pending.discard(giver)
            else:
                v["hand_sizes"][giver] -= count
            v["hand_sizes"][receiver] += count
        if me >= 0 and v.get("hand") is not None:
            v["hand_sizes"][me] = len(v["hand"])

    def _on_card_played(self, e: Mapping[str, Any]) -> None:
        v = self.view
        seat, card = int(e["seat"]), str(e["card"])
        if not v["trick"]:
            v["leader"] = seat
        v["trick"] = [*v["trick"], [seat, card]]
        v["trick_number"] = int(e.get("trick_number", v.get("trick_number", 1)))
        v["played"] = _with_card(v["played"], card)
        v["hand_sizes"][seat] -= 1
        v["phase"] = "playing"
        for key in ("face_up", "exposed"):
            if v.get(key) and card in v[key][seat]:
                v[key][seat] = [c for c in v[key][seat] if c != card]
        if seat == self._me() and v.get("hand") is not None:
            v["hand"] = [c for c in v["hand"] if c != card]

    def _on_spades_broken(self, e: Mapping[str, Any]) -> None:
        self.view["broken"] = True

    def _on_trick_won(self, e: Mapping[str, Any]) -> None:
        v = self.view
        seat = int(e["seat"])
        plays = [[int(s), str(c)] for s, c in e["plays"]]
        v["last_trick"] = plays
        v["last_winner"] = seat
        v["tricks"][seat] += 1
        v["trick"] = []
        v["leader"] = seat
        v["trick_number"] = min(int(e["trick_number"]) + 1, self.ruleset.tricks_per_hand)
        if self.ruleset.game == "hearts":
            taken = mask_of(parse_card(str(c)) for _, c in plays)
            v["points"][seat] += penalty_points(taken, self.ruleset.hearts_jack_of_diamonds)

    def _on_claim_made(self, e: Mapping[str, Any]) -> None:
        if not e.get("held", True) and self.ruleset.tram_penalty == "exposed":
            self.view["exposed"][int(e["seat"])] = list(e.get("cards", ()))

    def _on_deal_declared_dead(self, e: Mapping[str, Any]) -> None:
        self.view.update(phase="dealing", dealer=int(e["next_dealer"]), legal=[])

    def _on_hand_scored(self, e: Mapping[str, Any]) -> None:
        self.view.update(
            phase="dealing", scores=list(e["after"]), bags=list(e["bags_after"]), legal=[]
        )

    def _on_game_over(self, e: Mapping[str, Any]) -> None:
        self.view.update(phase="game_over", winners=list(e["winners"]), legal=[], to_act=[])
