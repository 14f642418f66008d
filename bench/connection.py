"""What the server's protocol path costs per message, before and after `protocol.connection.Connection`,
and what the load generators' lean reader (bench/_load/wire.py) saves a client.

Per message, best of five runs (microseconds: the machine is shared, so read the call counts beside
them, which do not depend on the load) and function calls (cProfile, builtins included):

- server, sending. "today": the server's current path (`Session.deliver`, `server.connection`):
  `to_wire` + `pack_body` + `frame` for a reply; `game_event` (which validates the engine's map
  again), one `EventFrames` and a spliced frame per recipient for an event. "now": `Connection.send`
  (the phase table, no validation) and `Connection.send_event` (the same spliced frame, the seq
  stamped by the connection), with `game_event_frames` (the engine's map straight to bytes). Cases:
  an `ok`; a `card_played` from the engine's map to the four seats of a table (per action); a
  `your_turn` with 13 legal plays (`your_turn_frames` from the engine's action maps, as
  `server/turns.py` does); a `turn` to the four seats; one
  `card_played` alone; and their sum for one card (`one_card`);
- server, receiving an `act`: today `MessageDecoder`; now `Connection.next_event` (the phase, too) and
  `answers_turn` (the rate limit's question, which the session asks today in its own code);
- client, receiving one card's traffic (`card_played`, `turn`, `your_turn`, `ok`): `Connection`,
  `MessageDecoder`, and bench/_load/wire.py's `FrameReader` (msgpack only, nothing checked).

"today" runs on this tree's protocol/ unless `--baseline DIR` names a checkout of the code to compare
against (its protocol/ and engine/ are imported in a child process), e.g. the commit before:
`git archive 65d5485 protocol engine | tar -x -C /tmp/base`. Prints one JSON object on its last line.

    .venv/bin/python bench/connection.py [--baseline /tmp/base]
"""

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 5
NUMBER = 2_000
SEATS = 4
HAND = ["2C", "5C", "7C", "8C", "AC", "7D", "8D", "TD", "3H", "QH", "KH", "9S", "KS"]
PLAYED = {"kind": "card_played", "seat": 3, "card": "QS", "trick_number": 7}


def per_call_us(func: Callable[[], object], number: int = NUMBER) -> float:
    """Best of REPEATS runs, microseconds per call (the least disturbed run)."""
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - start) / number)
    return round(best * 1e6, 2)


def calls_per_call(func: Callable[[], object], number: int = 200) -> float:
    """Function calls per call of `func` (Python and builtin, less `func` itself), by cProfile."""
    func()  # caches warm, schemas compiled
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(number):
        func()
    profile.disable()
    total: int = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return round(total / number - 1, 1)


def figures_of(cases: dict[str, Callable[[], object]]) -> dict[str, dict[str, float]]:
    return {
        name: {"us": per_call_us(func), "calls": calls_per_call(func)}
        for name, func in cases.items()
    }


# ---- the server's path today: only what the protocol had before `Connection` ----------------------


def today_cases() -> dict[str, Callable[[], object]]:
    from protocol.codec import pack_body
    from protocol.framing import frame
    from protocol.messages import Act, Ok, Sender, Turn, YourTurn
    from protocol.types import Action, ActionKind
    from protocol.wire import EventFrames, MessageDecoder, encode, game_event, to_wire

    legal = [Action(kind=ActionKind.PLAY, card=card) for card in HAND]
    seqs = [0] * SEATS
    ok = Ok(id=7)

    def ok_reply() -> bytes:
        return frame(pack_body(to_wire(ok)))

    def played_to_4() -> list[bytes]:
        frames = EventFrames(game_event("t7", 18, PLAYED))
        out = []
        for i in range(SEATS):
            seqs[i] += 1
            out.append(frames.frame(seqs[i]))
        return out

    def your_turn() -> bytes:
        seqs[0] += 1
        message = YourTurn(
            table="t7", version=17, seat=0, legal=list(legal), deadline_ms=30000, bank_ms=0
        )
        return EventFrames(message).frame(seqs[0])

    def played_alone() -> bytes:
        seqs[0] += 1
        return EventFrames(game_event("t7", 18, PLAYED)).frame(seqs[0])

    def turn_to_4() -> list[bytes]:
        message = Turn(table="t7", version=17, to_act=[0], deadline_ms=[30000], bank_ms=[0])
        frames = EventFrames(message)
        out = []
        for i in range(SEATS):
            seqs[i] += 1
            out.append(frames.frame(seqs[i]))
        return out

    act = encode(Act(id=12, table="t7", version=17, action=legal[0]))
    decoder = MessageDecoder(Sender.CLIENT)

    def receive_act() -> object:
        decoder.receive_data(act)
        return decoder.next_message()

    return {
        "ok": ok_reply,
        "card_played_to_4": played_to_4,
        "turn_to_4": turn_to_4,
        "your_turn_13_legal": your_turn,
        "card_played_alone": played_alone,
        "receive_act": receive_act,
    }


# ---- now: through `Connection` --------------------------------------------------------------------


def _limits() -> Any:
    from protocol.types import Clock, ServerLimits

    return ServerLimits(
        max_frame_size=65536,
        max_str_len=4096,
        max_array_len=1024,
        max_map_len=256,
        max_depth=16,
        rate_per_second=20,
        rate_burst=40,
        handshake_timeout_ms=10000,
        idle_timeout_ms=60000,
        clock=Clock(turn_ms=30000, bank_ms=0),
    )


def _pair() -> tuple[Any, Any]:
    """A server and a client connection past the handshake."""
    from protocol.connection import Connection
    from protocol.messages import Hello, Sender, Welcome
    from protocol.types import ClientKind

    server, client = Connection(Sender.SERVER), Connection(Sender.CLIENT)
    server.receive_data(client.send(Hello(protocol="1.0", client="bench", kind=ClientKind.BOT)))
    server.next_event()
    welcome = Welcome(
        id=1, server="s", server_version="0", protocol="1.0", session="s", limits=_limits()
    )
    client.receive_data(server.send(welcome))
    client.next_event()
    return server, client


def now_cases() -> dict[str, Callable[[], object]]:
    from engine.actions import PlayCard, action_to_dict
    from engine.cards import parse_card
    from protocol.messages import Act, Ok, Turn
    from protocol.types import Action, ActionKind
    from protocol.wire import EventFrames, encode, game_event_frames, your_turn_frames

    legal = [Action(kind=ActionKind.PLAY, card=card) for card in HAND]
    engine_legal = [PlayCard(0, parse_card(card)) for card in HAND]
    conns = [_pair()[0] for _ in range(SEATS)]
    ok = Ok(id=7)

    def ok_reply() -> bytes:
        data: bytes = conns[0].send(ok)
        return data

    def played_to_4() -> list[bytes]:
        frames = game_event_frames("t7", 18, PLAYED)
        return [conn.send_event(frames) for conn in conns]

    def your_turn() -> bytes:
        maps = [action_to_dict(action, with_seat=False) for action in engine_legal]
        frames = your_turn_frames("t7", 17, seat=0, legal=maps, deadline_ms=30000, bank_ms=0)
        data: bytes = conns[0].send_event(frames)
        return data

    def played_alone() -> bytes:
        data: bytes = conns[0].send_event(game_event_frames("t7", 18, PLAYED))
        return data

    def turn_to_4() -> list[bytes]:
        message = Turn(table="t7", version=17, to_act=[0], deadline_ms=[30000], bank_ms=[0])
        frames = EventFrames(message)
        return [conn.send_event(frames) for conn in conns]

    act = encode(Act(id=12, table="t7", version=17, action=legal[0]))

    def receive_act() -> object:
        conn = conns[0]
        conn.receive_data(act)
        message = conn.next_event()
        conn.answers_turn(message)
        return message

    return {
        "ok": ok_reply,
        "card_played_to_4": played_to_4,
        "turn_to_4": turn_to_4,
        "your_turn_13_legal": your_turn,
        "card_played_alone": played_alone,
        "receive_act": receive_act,
    }


# ---- a client reading one card's traffic ----------------------------------------------------------


def card_rounds(rounds: int) -> tuple[Any, list[bytes]]:
    """A seated client's connection and the server's traffic for `rounds` cards: each round a
    `card_played`, a `turn`, a `your_turn` and the `ok` to the client's own `act`."""
    from protocol.messages import Act, Ok, Turn, YourTurn
    from protocol.types import Action, ActionKind
    from protocol.wire import EventFrames, encode, game_event_frames

    legal = [Action(kind=ActionKind.PLAY, card=card) for card in HAND]
    server, client = _pair()
    chunks = []
    for _ in range(rounds):
        act = client.numbered(Act(table="t7", version=17, action=legal[0]))
        client.send(act)
        server.receive_data(encode(act))
        server.next_event()
        turn = Turn(table="t7", version=17, to_act=[0], deadline_ms=[30000], bank_ms=[0])
        mine = YourTurn(table="t7", version=17, seat=0, legal=legal, deadline_ms=30000)
        played = game_event_frames("t7", 18, PLAYED)
        chunks.append(
            b"".join(
                [
                    server.send_event(played),
                    server.send_event(EventFrames(turn)),
                    server.send_event(EventFrames(mine)),
                    server.send(Ok(id=act.id)),
                ]
            )
        )
    return client, chunks


def client_reading() -> dict[str, Any]:
    from bench._load.wire import FrameReader
    from protocol.messages import Sender
    from protocol.wire import MessageDecoder

    def through_connection(conn: Any) -> Callable[[bytes], int]:
        def feed(chunk: bytes) -> int:
            conn.receive_data(chunk)
            count = 0
            while conn.next_event() is not None:
                count += 1
            return count

        return feed

    def through_decoder(_: Any) -> Callable[[bytes], int]:
        decoder = MessageDecoder(Sender.SERVER)

        def feed(chunk: bytes) -> int:
            decoder.receive_data(chunk)
            return len(list(decoder))

        return feed

    def through_lean_reader(_: Any) -> Callable[[bytes], int]:
        reader = FrameReader()
        return lambda chunk: len(list(reader.feed(chunk)))

    makers: dict[str, Callable[[Any], Callable[[bytes], int]]] = {
        "connection": through_connection,
        "decoder": through_decoder,
        "lean_reader": through_lean_reader,
    }
    figures: dict[str, Any] = {"messages": 4, "bytes": len(card_rounds(1)[1][0])}
    for name, make in makers.items():
        best = float("inf")
        for _ in range(REPEATS):
            client, chunks = card_rounds(NUMBER // 4)
            feed = make(client)
            start = time.perf_counter()
            for chunk in chunks:
                assert feed(chunk) == 4
            best = min(best, (time.perf_counter() - start) / len(chunks))
        client, chunks = card_rounds(201)
        feed = make(client)
        feed(chunks[0])
        profile = cProfile.Profile()
        profile.enable()
        for chunk in chunks[1:]:
            feed(chunk)
        profile.disable()
        total: int = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
        figures[name] = {"us": round(best * 1e6, 2), "calls": round(total / 200, 1)}
    return figures


def baseline_figures(directory: Path) -> dict[str, dict[str, float]]:
    """`today_cases` measured on the code in `directory`, in a child process."""
    env = {**os.environ, "PYTHONPATH": str(directory)}
    done = subprocess.run(
        [sys.executable, "-P", __file__, "--today-only"],  # -P: not bench/ first on the path
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=directory,
    )
    figures: dict[str, dict[str, float]] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout to compare with")
    parser.add_argument("--today-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.today_only:  # the child of --baseline: today's path on the code it imports
        import protocol

        assert Path(protocol.__file__).is_relative_to(Path.cwd()), protocol.__file__
        print(json.dumps(figures_of(today_cases())))
        return
    sys.path.insert(0, str(ROOT))
    from bench.report import emit

    load = os.getloadavg()
    today = (
        baseline_figures(args.baseline.resolve()) if args.baseline else figures_of(today_cases())
    )
    now = figures_of(now_cases())
    server = {name: {"today": today[name], "now": now[name]} for name in now}
    reading = client_reading()
    # One card at a four-seat table: the actor's act read and answered `ok`, `card_played` and
    # `turn` to the four seats, `your_turn` to the next (a `trick_won` every fourth card left out).
    card = ("ok", "card_played_to_4", "turn_to_4", "your_turn_13_legal", "receive_act")
    server["one_card"] = {
        side: {
            "us": round(sum(server[name][side]["us"] for name in card), 2),
            "calls": round(sum(server[name][side]["calls"] for name in card), 1),
        }
        for side in ("today", "now")
    }
    for name, row in server.items():
        print(f"server {name:20} today {row['today']}  now {row['now']}")
    print(f"client one card      {reading}")
    emit(
        {
            "benchmark": "connection",
            "unit": "microseconds and function calls per message (card_played_to_4: per action)",
            "baseline": str(args.baseline) if args.baseline else "this tree",
            "load_before": [round(x, 2) for x in load],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "server": server,
            "client_receive_one_card": reading,
        }
    )


if __name__ == "__main__":
    main()
