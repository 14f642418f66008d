"""`spades-bot register`: make a bot account on a server.

It says `hello` with `kind` `bot` and no token, then `register`: the kind of the connection that
registers is the account's for good (docs/protocol.md, "Limits and clocks"), and decides its clock
(the server's bot clock, 5 s a decision by default, against 30 s for a person). The reply carries
the token, shown this once, and the clock the account's seats play on.
"""

from __future__ import annotations

import trio

from bots.sdk.network import (
    RunnerError,
    ServerConnection,
    client_tls_context,
    open_stream,
    reason_of,
)
from engine.version import project_version
from protocol.errors import ProtocolError
from protocol.messages import PROTOCOL_VERSION_TEXT, Bye, Error, Hello, Register, Registered
from protocol.types import ClientKind

#: How long the whole registration may take (connect, handshake, answer).
REGISTER_WITHIN = 15.0


async def register_bot(
    host: str, port: int, name: str, *, tls: bool = False, ca: str | None = None
) -> Registered:
    """Register the bot account `name`; its `Registered` (token, kind, clock). Raises RunnerError
    with one sentence when the server refuses (`name_taken`, `bad_name`) or cannot be reached."""
    context = client_tls_context(ca) if tls else None
    where = f"{host}:{port}"
    try:
        with trio.fail_after(REGISTER_WITHIN):
            tcp, stream = await open_stream(host, port, context)
            try:
                return await _register(ServerConnection(stream), name)
            finally:
                await trio.aclose_forcefully(stream)
                await trio.aclose_forcefully(tcp)
    except trio.TooSlowError:
        raise RunnerError(f"the server at {where} did not answer in time") from None
    except (OSError, trio.BrokenResourceError, ProtocolError) as exc:
        raise RunnerError(
            f"cannot reach the server at {where} ({reason_of(exc)}): is it running, at that address?"
        ) from None


async def _register(conn: ServerConnection, name: str) -> Registered:
    await conn.send(
        Hello(
            protocol=PROTOCOL_VERSION_TEXT,
            client=f"spades-bot/{project_version()}",
            kind=ClientKind.BOT,
        )
    )
    asked = await conn.send(Register(name=name))
    # Bounded by the caller's time limit; the server sends `welcome`, then the answer.
    while True:
        message = await conn.receive()
        if message is None:
            raise trio.BrokenResourceError("the server closed the connection")
        if isinstance(message, Registered):
            await conn.send(Bye(reason="registered"))
            return message
        if isinstance(message, Error):
            what = f"the name {name!r}" if message.id == asked else "us"
            raise RunnerError(f"the server refused {what}: {message.message} ({message.code})")
