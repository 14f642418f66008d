"""`spades-bot conformance --server HOST:PORT`: a server checked against docs/protocol.md.

The scenarios run one after another, each on its own connections and accounts (fresh names, so the
kit can run again against the same server), and each is bounded in time. `SCENARIOS` lists them
in the order docs/bots.md describes them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from bots.conformance import server_handshake, server_ladder, server_lobby, server_play
from bots.conformance.report import Findings, Outcome, Scenario, run_all, select
from bots.conformance.target import Target

Check = Callable[[Target, Findings], Awaitable[None]]

#: (name, the check, one line on what it checks): docs/bots.md's table is this list.
CHECKS: tuple[tuple[str, Check, str], ...] = (
    (
        "handshake",
        server_handshake.handshake,
        "ping and refusals before hello, welcome, a second hello",
    ),
    (
        "version-mismatch",
        server_handshake.version_mismatch,
        "another major version is refused with the hello's id, then closed",
    ),
    (
        "bad-token",
        server_handshake.bad_token,
        "an unknown token: welcome without user, bad_token without id, the session goes on",
    ),
    (
        "accounts",
        server_handshake.accounts,
        "register, login, already_authenticated, name_taken, not_authenticated",
    ),
    ("guests", server_handshake.guests, "guest names, the resume token by hello and by login"),
    ("clocks", server_handshake.clocks, "the clock of a bot account and of a person, as announced"),
    (
        "lobby",
        server_lobby.lobby,
        "create_table, bad_options' detail, list_tables' filters, spectate, leave, private tables",
    ),
    ("lobby-notices", server_lobby.lobby_notices, "who hears table_changed and table_closed"),
    (
        "chat",
        server_lobby.chat,
        "table chat: ok, then chat_message to those at the table; lobby chat; leave and chat refusals",
    ),
    (
        "join-refusals",
        server_lobby.join_refusals,
        "join's refusals, first that applies in the document's order; a resync",
    ),
    (
        "second-connection",
        server_lobby.second_connection,
        "a second connection of a seated account does not take the seat; takeover",
    ),
    (
        "ladder-queries",
        server_ladder.ladder_queries,
        "standings, matches and an entrant for anyone; no entry without an account",
    ),
    (
        "full-hand",
        server_play.full_hand,
        "a whole hand: snapshot, commitments, ok before events, turn before your_turn, the deal, game_over",
    ),
    (
        "act-refusals",
        server_play.act_refusals,
        "act's refusals, first that applies in the document's order; nothing applied",
    ),
    (
        "reconnect",
        server_play.reconnect,
        "a drop at one's turn: seat_status, the resume's joined, snapshot, turn, your_turn",
    ),
    (
        "hearts-pass",
        server_play.hearts_pass,
        "a pass decided on an older version of the same decision is applied",
    ),
    (
        "limits",
        server_handshake.limits,
        "bad frames, refused messages and their detail, rate_limited with retry_ms, chat length",
    ),
    ("bye", server_handshake.bye, "a client's bye: the server closes and sends nothing after"),
)


def scenarios(host: str, port: int) -> list[Scenario]:
    target = Target(host, port)
    return [
        Scenario(name, what, partial(_bound, check, target), timeout=90.0)
        for name, check, what in CHECKS
    ]


async def _bound(check: Check, target: Target, notes: Findings) -> None:
    await check(target, notes)


async def check_server(
    host: str,
    port: int,
    only: Sequence[str] = (),
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run the scenarios (those named in `only`, or all) against the server at host:port.
    Raises ValueError for an unknown scenario name."""
    return await run_all(select(scenarios(host, port), only), on_outcome)
