"""A bot that breaks one rule of docs/protocol.md on purpose (ROGUE=<mode>), for the bot kit's own
tests: it plays correctly otherwise, with plain sockets and msgpack, as a third party would.

Modes: `join-first` (join before hello), `wrong-version` (each decision first answered with the
next version), `illegal` (each decision first answered with a card it does not hold), `silent`
(never pings), `no-retry` (gives up a request refused rate_limited), `talks-after-bye` (goes on
pinging after the server's bye).
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import time
from typing import Any

import msgpack

MODE = os.environ.get("ROGUE", "")


def frame(message: dict[str, Any]) -> bytes:
    body: bytes = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


class Line:
    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buffer = b""
        self.next_id = 1

    def send(self, message: dict[str, Any]) -> None:
        if message["t"] not in ("pong", "bye") and "id" not in message:
            message["id"] = self.next_id
            self.next_id += 1
        self.sock.sendall(frame(message))

    def receive(self, within: float) -> dict[str, Any] | None:
        """The next message; None after `within` seconds of quiet; raises EOFError when closed."""
        self.sock.settimeout(within)
        while True:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4 : 4 + length], self.buffer[4 + length :]
                    message: dict[str, Any] = msgpack.unpackb(body, raw=False)
                    return message
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                return None
            if not chunk:
                raise EOFError
            self.buffer += chunk


def main() -> int:
    host, _, port = os.environ["SPADES_SERVER"].rpartition(":")
    token, table = os.environ["SPADES_TOKEN"], os.environ["SPADES_TABLE"]
    line = Line(host, int(port))
    if MODE == "join-first":
        line.send({"t": "join", "table": table})
    line.send({"t": "hello", "protocol": "1.0", "client": "rogue/1", "kind": "bot", "token": token})
    tricked: set[int] = set()
    after_bye = False
    last_ping = time.monotonic()
    while True:
        try:
            message = line.receive(0.5)
        except (EOFError, OSError):
            return 0 if after_bye else 1
        now = time.monotonic()
        if MODE != "silent" and (message is None or now - last_ping > 0.5):
            try:
                line.send({"t": "ping"})
            except OSError:
                return 0 if after_bye else 1
            last_ping = now
        if message is None:
            continue
        kind = message["t"]
        if kind == "welcome":
            line.send({"t": "join", "table": table})
        elif kind == "your_turn":
            version, legal = message["version"], message["legal"]
            if version not in tricked and MODE in ("wrong-version", "illegal"):
                tricked.add(version)
                if MODE == "wrong-version":
                    line.send(
                        {"t": "act", "table": table, "version": version + 1, "action": legal[0]}
                    )
                else:
                    held = {a.get("card") for a in legal}
                    card = next(c for c in ("2C", "3D", "4H", "5S", "AS") if c not in held)
                    line.send(
                        {
                            "t": "act",
                            "table": table,
                            "version": version,
                            "action": {"kind": "play", "card": card},
                        }
                    )
            line.send({"t": "act", "table": table, "version": version, "action": legal[0]})
        elif kind == "ping":
            line.send({"t": "pong", "id": message.get("id")})
        elif kind == "error" and message.get("code") == "rate_limited" and MODE != "no-retry":
            time.sleep(message.get("retry_ms", 1000) / 1000)
            line.send({"t": "join", "table": table})
        elif kind == "bye":
            if MODE != "talks-after-bye":
                line.sock.close()
                return 0
            after_bye = True
        elif kind == "game_over":
            line.send({"t": "bye"})
            line.sock.close()
            return 0


if __name__ == "__main__":
    sys.exit(main())
