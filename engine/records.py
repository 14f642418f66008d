"""Hand records: each finished hand as one `spades-hand/1` JSON object (docs/hand-records.md), and replay.

`hand_to_record(history, ruleset, game_id=...)` makes the object; `record_to_hand(record)` reads it back
(raising RecordError, NotationError or RulesetError on bad input, never KeyError or TypeError);
`replay(records)` re-deals every hand from its seed, re-applies its actions through the engine, checks
that the deal and the scores come out as recorded, and returns the final scores per side.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from engine.actions import Action, Bid, action_from_dict, action_to_dict
from engine.cards import Card, CardMask, card_text, mask_of, mask_text, parse_card
from engine.deal import commitment
from engine.errors import EngineError, RecordError
from engine.game import Phase, new_game
from engine.history import DeadDeal, HandHistory, Transfer
from engine.ruleset import Ruleset

FORMAT: Final = "spades-hand/1"


def _bid_dict(bid: Bid) -> dict[str, Any]:
    out = action_to_dict(bid)
    del out["kind"]
    out["bid"] = out.pop("tricks")
    return out


def hand_to_record(history: HandHistory, ruleset: Ruleset, *, game_id: str = "") -> dict[str, Any]:
    """The `spades-hand/1` object for a finished hand (plain JSON types, cards in notation)."""
    transfers = [
        {"giver": t.giver, "receiver": t.receiver, "cards": [card_text(c) for c in t.cards]}
        for t in history.transfers
    ]
    return {
        "format": FORMAT,
        "game_id": game_id,
        "game": ruleset.game,
        "hand_number": history.hand_number,
        "ruleset": ruleset.to_dict(),
        "players": history.players,
        "dealer": history.dealer,
        "seed": history.seed.hex(),
        "commitment": commitment(history.seed),
        "hand_type": history.hand_type,
        "deal": [mask_text(hand) for hand in history.deal],
        "face_up": [mask_text(mask) for mask in history.face_up],
        "set_aside": mask_text(history.set_aside),
        "discarded": mask_text(history.discarded),
        "bids": [_bid_dict(bid) for bid in history.bids],
        "exchanges": transfers if ruleset.game == "spades" else [],
        "passes": transfers if ruleset.game != "spades" else [],
        "plays": [[seat, card_text(card)] for seat, card in history.plays],
        "trick_winners": list(history.trick_winners),
        "tricks": list(history.tricks),
        "claim": None
        if history.claim is None
        else {"seat": history.claim[0], "held": history.claim[1]},
        "dead_deals": [
            {"dealer": d.dealer, "seed": d.seed.hex(), "seat": d.seat} for d in history.dead_deals
        ],
        "actions": [action_to_dict(action) for action in history.actions],
        "score": {
            "sides": [list(side) for side in history.sides],
            "before": list(history.score_before),
            "delta": list(history.score_delta),
            "after": list(history.score_after),
            "bags_after": list(history.bags_after),
        },
        "notes": list(history.notes),
    }


def game_records(game: Any, *, game_id: str = "") -> list[dict[str, Any]]:
    """Every finished hand of a game as records, oldest first."""
    return [hand_to_record(h, game.ruleset, game_id=game_id) for h in game.histories]


# -- reading ----------------------------------------------------------------------------------------
def _get(data: Mapping[str, Any], name: str, kind: type) -> Any:
    if name not in data:
        raise RecordError(f"the record has no {name!r}")
    value = data[name]
    if kind is int and isinstance(value, bool):
        raise RecordError(f"{name!r} must be a whole number")
    if not isinstance(value, kind):
        raise RecordError(f"{name!r} must be {kind.__name__}")
    return value


def _ints(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise RecordError(f"{name!r} must be a list of whole numbers")
    return tuple(value)


def _cards(value: Any, name: str) -> tuple[Card, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(f"{name!r} must be a list of cards like 'QS'")
    return tuple(parse_card(v) for v in value)


def _mask(value: Any, name: str) -> CardMask:
    return mask_of(_cards(value, name))


def _seed(value: Any, name: str) -> bytes:
    if not isinstance(value, str):
        raise RecordError(f"{name!r} must be hex text")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise RecordError(f"{name!r} must be hex text") from None


def record_to_hand(record: object) -> tuple[HandHistory, Ruleset]:
    """Read a record back into a HandHistory and its Ruleset. Raises RecordError (or NotationError /
    RulesetError / IllegalAction for a bad card, option or action)."""
    if not isinstance(record, Mapping):
        raise RecordError("a hand record is a JSON object")
    if record.get("format") != FORMAT:
        raise RecordError(f"the format must be {FORMAT!r}")
    ruleset = Ruleset.from_stored(_get(record, "ruleset", Mapping))
    players = _get(record, "players", int)
    if players != ruleset.players:
        raise RecordError("'players' does not match the ruleset")
    actions: list[Action] = [action_from_dict(a) for a in _get(record, "actions", list)]
    bids = tuple(a for a in actions if isinstance(a, Bid))
    transfers_raw = _get(record, "exchanges", list) + _get(record, "passes", list)
    transfers = []
    for t in transfers_raw:
        if not isinstance(t, Mapping):
            raise RecordError("an exchange is an object")
        transfers.append(
            Transfer(
                _get(t, "giver", int), _get(t, "receiver", int), _cards(t.get("cards"), "cards")
            )
        )
    plays = []
    for item in _get(record, "plays", list):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
            raise RecordError("a play is [seat, card]")
        plays.append((item[0], parse_card(item[1]) if isinstance(item[1], str) else -1))
    if any(card < 0 for _, card in plays):
        raise RecordError("a play is [seat, card]")
    score = _get(record, "score", Mapping)
    claim_raw = record.get("claim")
    claim = None
    if claim_raw is not None:
        if not isinstance(claim_raw, Mapping):
            raise RecordError("'claim' must be an object or null")
        claim = (_get(claim_raw, "seat", int), bool(_get(claim_raw, "held", bool)))
    dead = []
    for d in _get(record, "dead_deals", list):
        if not isinstance(d, Mapping):
            raise RecordError("a dead deal is an object")
        dead.append(
            DeadDeal(_get(d, "dealer", int), _seed(d.get("seed"), "seed"), _get(d, "seat", int))
        )
    sides = _get(score, "sides", list)
    history = HandHistory(
        hand_number=_get(record, "hand_number", int),
        dealer=_get(record, "dealer", int),
        seed=_seed(record.get("seed"), "seed"),
        players=players,
        hand_type=_get(record, "hand_type", str),
        deal=tuple(_mask(h, "deal") for h in _get(record, "deal", list)),
        face_up=tuple(_mask(h, "face_up") for h in _get(record, "face_up", list)),
        set_aside=_mask(record.get("set_aside", []), "set_aside"),
        bids=bids,
        transfers=tuple(transfers),
        plays=tuple(plays),
        trick_winners=_ints(record.get("trick_winners"), "trick_winners"),
        tricks=_ints(record.get("tricks"), "tricks"),
        sides=tuple(_ints(side, "sides") for side in sides),
        score_before=_ints(score.get("before"), "before"),
        score_delta=_ints(score.get("delta"), "delta"),
        score_after=_ints(score.get("after"), "after"),
        bags_after=_ints(score.get("bags_after"), "bags_after"),
        actions=tuple(actions),
        dead_deals=tuple(dead),
        claim=claim,
        discarded=_mask(record.get("discarded", []), "discarded"),
        notes=tuple(str(n) for n in record.get("notes", [])),
    )
    return history, ruleset


def replay(records: Sequence[object]) -> tuple[int, ...]:
    """Re-run a game's records (oldest first, from its first hand) through the engine and return the
    final scores per side. Raises RecordError when a deal, an action or a score does not reproduce."""
    if not records:
        raise RecordError("there are no records to replay")
    hands = [record_to_hand(record) for record in records]
    ruleset = hands[0][1]
    first = hands[0][0]
    if any(first.score_before):
        raise RecordError("a replay starts from the game's first hand (scores 0)")
    first_dealer = first.dead_deals[0].dealer if first.dead_deals else first.dealer
    game = new_game(ruleset, dealer=first_dealer)
    for history, hand_ruleset in hands:
        if hand_ruleset != ruleset:
            raise RecordError(f"hand {history.hand_number} has a different ruleset")
        try:
            _replay_hand(game, history)
        except RecordError:
            raise
        except EngineError as exc:
            raise RecordError(f"hand {history.hand_number}: {exc.message}") from exc
    return tuple(game.scores)


def _replay_hand(game: Any, history: HandHistory) -> None:
    from engine.actions import DeclareDeficient

    for dead in history.dead_deals:
        if game.dealer != dead.dealer:
            raise RecordError(f"hand {history.hand_number}: a dead deal by the wrong dealer")
        game.deal(dead.seed)
        game.apply(DeclareDeficient(dead.seat))
    if game.phase is not Phase.DEALING or game.dealer != history.dealer:
        raise RecordError(f"hand {history.hand_number}: the engine expected another dealer")
    game.deal(history.seed)
    if history.players != 2 and not _deal_matches(game, history):
        raise RecordError(f"hand {history.hand_number}: the seed does not give the recorded deal")
    for action in history.actions:
        game.apply(action)
    if game.phase not in (Phase.DEALING, Phase.GAME_OVER):
        raise RecordError(f"hand {history.hand_number}: the actions do not finish the hand")
    done = game.histories[-1]
    if done.deal != history.deal:
        raise RecordError(f"hand {history.hand_number}: the deal does not match")
    if done.score_after != history.score_after or done.score_delta != history.score_delta:
        raise RecordError(
            f"hand {history.hand_number}: replay scores {list(done.score_after)},"
            f" the record says {list(history.score_after)}"
        )


def _deal_matches(game: Any, history: HandHistory) -> bool:
    histories_deal = tuple(game.hand(seat) for seat in range(history.players))
    return bool(histories_deal == history.deal) if hasattr(game, "hand") else True
