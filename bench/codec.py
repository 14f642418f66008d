"""How fast the protocol codec is, and what msgspec's typed conversion would buy instead.

Measures, per message, on typical traffic: a client's `act`, a `card_played` event, a `your_turn` with
13 legal plays and a `snapshot` with a full seat view: encoding (message -> frame), decoding (frame body
-> validated message, through msgpack and our generic validator) and validation alone. If msgspec is
installed it measures the same for `act` and `card_played` declared as msgspec Structs with the same
constraints: msgspec.convert (validation of an already unpacked map) and msgspec's own typed msgpack
decoder. Prints one JSON object on its last line (bench/report.py). Run: .venv/bin/python bench/codec.py
"""

import importlib
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from protocol import Act, Action, ActionKind, Sender, Snapshot, YourTurn, encode
from protocol.codec import unpack_body
from protocol.game_events import CardPlayed
from protocol.wire import decode, from_wire

REPEATS = 5
NUMBER = 5_000


def per_call_us(func: Callable[[], object], number: int = NUMBER) -> float:
    """Best of REPEATS runs, in microseconds per call (the minimum is the least disturbed run)."""
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - start) / number)
    return round(best * 1e6, 2)


def sample_messages() -> dict[str, Any]:
    hand = ["2C", "5C", "7C", "8C", "AC", "7D", "8D", "TD", "3H", "QH", "KH", "9S", "KS"]
    legal = [Action(kind=ActionKind.PLAY, card=card) for card in hand]
    view: dict[str, Any] = {
        "game": "hearts",
        "players": 4,
        "phase": "playing",
        "version": 17,
        "hand_number": 1,
        "dealer": 0,
        "to_act": [0],
        "sides": [[0], [1], [2], [3]],
        "scores": [0, 0, 0, 0],
        "hand_sizes": [13, 12, 12, 12],
        "trick": [[1, "3C"], [2, "9C"], [3, "TC"]],
        "tricks": [0, 0, 0, 0],
        "played": ["3C", "9C", "TC"],
        "broken": False,
        "seat": 0,
        "hand": hand,
        "legal": [{"kind": "play", "card": card} for card in hand],
    }
    return {
        "act": Act(id=12, table="t7", version=17, action=legal[0]),
        "card_played": CardPlayed(
            seq=40, table="t7", version=18, seat=0, card="2C", trick_number=1
        ),
        "your_turn": YourTurn(
            seq=39, table="t7", version=17, seat=0, legal=legal, deadline_ms=30000, bank_ms=60000
        ),
        "snapshot": Snapshot(seq=1, table="t7", version=17, seat=0, view=view),
    }


def measure_ours(messages: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, message in messages.items():
        frame = encode(message)
        body = frame[4:]
        unpacked = unpack_body(body)
        sender = Sender.CLIENT if name == "act" else Sender.SERVER
        assert decode(body, sender) == message
        figures[name] = {
            "frame_bytes": len(frame),
            "encode_us": per_call_us(partial(encode, message)),
            "decode_us": per_call_us(partial(decode, body, sender)),
            "unpack_only_us": per_call_us(partial(unpack_body, body)),
            "validate_only_us": per_call_us(partial(from_wire, unpacked, sender)),
        }
    return figures


def measure_msgspec(messages: dict[str, Any]) -> dict[str, Any] | None:
    try:
        msgspec: Any = importlib.import_module("msgspec")
    except ImportError:
        return None
    # Built as runtime values (msgspec reads them; mypy need not).
    meta = msgspec.Meta
    literal: Any = Literal
    annotated: Any = Annotated
    list_of: Any = list
    cards: Any = literal[(*(f"{r}{s}" for r in "23456789TJQKA" for s in "CDHS"), "BJ", "LJ")]
    table_id = annotated[str, meta(pattern=r"^[A-Za-z0-9_-]{1,32}$")]
    version = annotated[int, meta(ge=0, le=2**53 - 1)]
    seat = annotated[int, meta(ge=0, le=3)]
    kinds = literal[tuple(kind.value for kind in ActionKind)]
    action = msgspec.defstruct(
        "Action",
        [
            ("kind", kinds),
            ("tricks", annotated[int, meta(ge=0, le=18)] | None, None),
            ("blind", bool | None, None),
            ("card", cards | None, None),
            ("cards", list_of[cards] | None, None),
        ],
        omit_defaults=True,
    )
    act = msgspec.defstruct(
        "Act",
        [
            ("id", annotated[int, meta(ge=0, le=2**32 - 1)] | None, None),
            ("table", table_id),
            ("version", version),
            ("action", action),
        ],
        tag_field="t",
        tag="act",
        omit_defaults=True,
        kw_only=True,
    )
    played = msgspec.defstruct(
        "CardPlayed",
        [
            ("seq", version, 0),
            ("table", table_id),
            ("version", version),
            ("seat", seat),
            ("card", cards),
            ("trick_number", annotated[int, meta(ge=1, le=18)]),
        ],
        tag_field="t",
        tag="card_played",
        kw_only=True,
    )
    either = msgspec.msgpack.Decoder(act | played)
    figures: dict[str, Any] = {}
    for name in ("act", "card_played"):
        body = encode(messages[name])[4:]
        unpacked = unpack_body(body)
        target = act if name == "act" else played
        msgspec.convert(unpacked, type=target)
        either.decode(body)
        figures[name] = {
            "convert_only_us": per_call_us(partial(msgspec.convert, unpacked, type=target)),
            "typed_decode_us": per_call_us(partial(either.decode, body)),
            "version": msgspec.__version__,
        }
    return figures


def main() -> None:
    messages = sample_messages()
    ours = measure_ours(messages)
    theirs = measure_msgspec(messages)
    for name, figures in ours.items():
        print(f"ours    {name:12} {figures}")
    for name, figures in (theirs or {}).items():
        print(f"msgspec {name:12} {figures}")
    emit(
        {"benchmark": "codec", "unit": "microseconds per message", "ours": ours, "msgspec": theirs}
    )


if __name__ == "__main__":
    main()
