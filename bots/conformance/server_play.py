"""Server scenarios about play: a whole hand, `act`'s refusals in the document's order, a dropped
connection resumed, and a Hearts pass sent while another seat passes."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

from bots.conformance import claims
from bots.conformance.report import Failed, Findings, check
from bots.conformance.target import Player, Target, shown
from bots.conformance.wire import ServerSilent
from engine.game import new_game
from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import (
    Act,
    ClockExpired,
    DealCommitment,
    DealSeed,
    Error,
    GameEvent,
    GameOver,
    HandDealt,
    HandScored,
    Join,
    Joined,
    Message,
    Ok,
    Reply,
    SeatStatus,
    Snapshot,
    Spectate,
    Turn,
    YourTurn,
)
from protocol.types import Action, ActionKind, Game, Options

ONE_HAND_HEARTS: Options = {
    "max_hands": 1,
    "target_score": 0,
    "hearts_pass_cycle": ["none"],
    "first_dealer": 0,
}


def category(message: Message, order: Sequence[str]) -> str | None:
    """Where `message` stands in the document's order of what follows an applied act."""
    if isinstance(message, Ok):
        return "ok"
    if isinstance(message, YourTurn):
        return "your_turn"
    if isinstance(message, Turn):
        return "turn"
    if isinstance(message, GameEvent) and not isinstance(message, Snapshot | ClockExpired):
        return "events"
    return None


async def full_hand(
    target: Target, notes: Findings, order: Sequence[str] = claims.AFTER_ACT
) -> None:
    """A one-hand Hearts game with three built-in bots: the snapshot first, the seed committed
    before the deal and revealed after it (and the deal is the engine's from that seed), each act
    answered `ok` before its events, each version's events before its `turn` and that before the
    `your_turn`s, and `game_over` with a documented reason. (`seq` and reply ids are checked on
    every message by the connection.)"""
    async with target.session() as visit:
        player = await visit.player()
        created = await player.create(Game.HEARTS, "hearts", ONE_HAND_HEARTS, bots=[1, 2, 3], sit=0)
        table = created.table
        client = player.client
        stream: list[Message] = []  # every message from table_created on, acts' replies included
        commitment: str | None = None
        dealt: HandDealt | None = None
        over: GameOver | None = None
        acts: list[tuple[int, int]] = []  # (position in stream of the act's reply, act version)
        for _ in range(5000):
            try:
                message = await client.next_message(30)
            except ServerSilent as exc:
                raise Failed(f"the hand stopped: {exc}", claims.PLAYING) from None
            if message is None:
                raise Failed("the server closed the connection mid-hand", claims.PLAYING)
            stream.append(message)
            if isinstance(message, DealCommitment):
                commitment = message.commitment
            elif isinstance(message, HandDealt):
                check(
                    commitment is not None and message.commitment == commitment,
                    "hand_dealt came without the deal_commitment before it (or with another one)",
                    claims.FAIR_DEALS,
                )
                dealt = message
            elif isinstance(message, GameOver):
                over = message
                break
            elif isinstance(message, YourTurn) and message.table == table:
                rid = await client.send(
                    Act(table=table, version=message.version, action=message.legal[0])
                )
                try:
                    reply = await client.reply_to(rid)
                except ServerSilent as exc:
                    raise Failed(f"act: {exc}", claims.ACT) from None
                check(isinstance(reply, Ok), f"a legal act was answered {shown(reply)}", claims.ACT)
                # What came before the reply goes into the stream ahead of it (and is read off
                # the queue here: the rest of the queue came after it).
                ahead = client.before
                for _ in ahead:
                    client.pending.popleft()
                stream.extend(ahead)
                acts.append((len(stream), message.version))
                stream.append(reply)
        check(over is not None, "no game_over", claims.GAME_OVER)
        assert over is not None and dealt is not None and commitment is not None
        first = next((m for m in stream if isinstance(m, GameEvent)), None)
        check(
            isinstance(first, Snapshot) and first.seat == 0,
            f"the first event after table_created with sit was {first and first.TYPE}, not the "
            "seat's snapshot",
            claims.LOBBY,
        )
        for position, version in acts:
            early = [
                m
                for m in stream[:position]
                if isinstance(m, GameEvent)
                and m.version > version
                and category(m, order) == "events"
            ]
            check(
                not early,
                f"the events of an act at version {version} ({[m.TYPE for m in early]}) came "
                "before its ok: the document says ok, then the events",
                claims.PLAYING,
            )
        _check_version_order(stream, order)
        seed = next((m.seed for m in stream if isinstance(m, DealSeed)), None)
        check(seed is not None, "no deal_seed after the hand", claims.FAIR_DEALS)
        assert seed is not None
        check(
            hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment,
            "SHA-256 of the revealed seed is not the commitment",
            claims.FAIR_DEALS,
        )
        scored = next((m for m in stream if isinstance(m, HandScored)), None)
        check(
            scored is not None and scored.seed == seed,
            "hand_scored's seed is not deal_seed's",
            claims.FAIR_DEALS,
        )
        game = new_game(Ruleset.from_preset("hearts", **ONE_HAND_HEARTS))
        seen = game.deal(bytes.fromhex(seed))[0].for_seat(0)
        check(
            seen is not None and seen.get("cards") == dealt.cards,
            "the hand dealt is not the one the seed deals (Fair deals' recipe)",
            claims.FAIR_DEALS,
        )
        check(
            over.reason in claims.GAME_OVER_REASONS,
            f"game_over.reason is {over.reason!r}, not one of {', '.join(claims.GAME_OVER_REASONS)}",
            claims.GAME_OVER,
        )
        check(
            over.reason == "hands",
            f"a one-hand game ended with reason {over.reason!r}",
            claims.GAME_OVER,
        )
        check(
            client.fatal is None and not client.problems,
            str(client.fatal or client.problems),
            claims.REQUESTS,
        )


def _check_version_order(stream: Sequence[Message], order: Sequence[str]) -> None:
    """At each version, the events, the `turn` and the `your_turn`s come in the document's order."""
    rank = {name: i for i, name in enumerate(order)}
    last: dict[int, tuple[int, str]] = {}
    for message in stream:
        kind = category(message, order)
        if kind is None or kind == "ok" or not isinstance(message, GameEvent):
            continue
        seen = last.get(message.version)
        if seen is not None and rank[kind] < seen[0]:
            raise Failed(
                f"at version {message.version} a {message.TYPE} came after a {seen[1]}: the "
                f"document's order is {', '.join(order[1:])}",
                claims.PLAYING,
            )
        last[message.version] = (rank[kind], message.TYPE)


async def act_refusals(
    target: Target, notes: Findings, order: Sequence[str] = claims.ACT_REFUSALS
) -> None:
    """An `act` to which several refusals apply is answered with the one `order` (the document's
    list) names first; nothing is applied on a refusal; a repeat of an applied act is
    not_your_turn."""
    async with target.session() as visit:
        first, partner, outsider = [await visit.player() for _ in range(3)]
        table = (
            await first.create(Game.SPADES, "standard", {"first_dealer": 3}, bots=[1, 3], sit=0)
        ).table
        await partner.join(table, seat=2)
        turn = await first.turn(table)
        illegal = Action(kind=ActionKind.PLAY, card="2C")  # a card, while the seat is to bid
        legal = turn.legal[0]
        missing = f"zz{turn.version}nosuchtable"

        async def send(faults: frozenset[str]) -> Reply:
            sender = (
                outsider
                if "not_seated" in faults
                else partner
                if "not_your_turn" in faults
                else first
            )
            return await sender.request(
                Act(
                    table=missing if "no_such_table" in faults else table,
                    version=turn.version + 7 if "stale_version" in faults else turn.version,
                    action=illegal if "illegal_action" in faults else legal,
                )
            )

        combos = [frozenset({c}) for c in order] + [
            frozenset(p) for p in itertools.combinations(order, 2)
        ]
        combos += [frozenset(order[i:]) for i in range(len(order) - 2)]
        for faults in combos:
            expected = next(code for code in order if code in faults)
            reply = await send(faults)
            got = reply.code if isinstance(reply, Error) else reply.TYPE
            held = notes.expect(
                got == expected,
                f"an act that is {' and '.join(f for f in order if f in faults)} was answered "
                f"{shown(reply)}; the document's order says {expected}",
                claims.ACT_ORDER,
            )
            if held and expected == "illegal_action":
                assert isinstance(reply, Error)
                notes.expect(
                    reply.detail,
                    "illegal_action carries no detail (the engine's code)",
                    claims.ERRORS,
                )
        if turn.version > 0:
            reply = await first.request(Act(table=table, version=turn.version - 1, action=legal))
            check(
                isinstance(reply, Error) and reply.code == ErrorCode.STALE_VERSION,
                f"an act for a version before its decision began was answered {shown(reply)}, "
                "not stale_version",
                claims.DECISIONS,
            )
        moved = [
            m
            for m in await first.client.barrier()
            if isinstance(m, GameEvent) and m.version > turn.version
        ]
        check(
            not moved,
            f"a refused act changed the game ({[m.TYPE for m in moved]})",
            claims.ACT_ORDER,
        )
        reply = await first.act(turn, legal)
        check(
            isinstance(reply, Ok),
            f"the legal act after the refusals was answered {shown(reply)}",
            claims.ACT,
        )
        reply = await first.act(turn, legal)
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NOT_YOUR_TURN,
            f"a repeat of an act already applied was answered {shown(reply)}, not not_your_turn",
            claims.ACT_ORDER,
        )


async def reconnect(target: Target, notes: Findings, resume: Sequence[str] = claims.RESUME) -> None:
    """A seated connection drops at its turn: the others hear `seat_status` (connected false, with
    `hold_ms`); `hello` with the token gives the seat back with `joined` (no id), `snapshot`,
    `turn` and `your_turn`, in that order; the others hear it is back; the act then counts; a
    repeated `join` is a resync."""
    async with target.session() as visit:
        player = await visit.player()
        watcher = await visit.player()
        table = (
            await player.create(Game.SPADES, "standard", {"first_dealer": 3}, bots=[1, 2, 3], sit=0)
        ).table
        reply = await watcher.request(Spectate(table=table))
        check(isinstance(reply, Joined), f"spectate was answered {shown(reply)}", claims.SPECTATE)
        turn = await player.turn(table)
        await player.client.aclose()
        try:
            dropped = await watcher.client.expect(SeatStatus)
        except ServerSilent as exc:
            raise Failed(f"nobody was told the seat dropped: {exc}", claims.SEAT_STATUS) from None
        check(
            dropped.seat == 0 and not dropped.connected and (dropped.hold_ms or 0) > 0,
            f"seat_status after the drop reads {dropped}",
            claims.SEAT_STATUS,
        )
        client, welcome = await visit.welcomed(player.token)
        check(
            welcome.user == player.name,
            f"hello with the token was welcomed as {welcome.user!r}",
            claims.HANDSHAKE,
        )
        kinds = {"joined": Joined, "snapshot": Snapshot, "turn": Turn, "your_turn": YourTurn}
        try:
            last = await client.wait_for(
                lambda m: isinstance(m, YourTurn), "the resumed `your_turn`"
            )
        except ServerSilent as exc:
            raise Failed(f"the seat was not given back: {exc}", claims.HANDSHAKE) from None
        got = [*client.before, last]
        client.drain()
        positions: list[int] = []
        for name in resume:
            index = next((i for i, m in enumerate(got) if isinstance(m, kinds[name])), None)
            if index is None:
                raise Failed(f"the resume brought no {name}", claims.HANDSHAKE)
            positions.append(index)
        check(
            positions == sorted(positions),
            f"the resume came as {[m.TYPE for m in got]}; the document's order is {', '.join(resume)}",
            claims.HANDSHAKE,
        )
        joined = next(m for m in got if isinstance(m, Joined))
        check(
            joined.id is None and joined.seat == 0,
            f"the resume's joined reads {joined}",
            claims.REQUESTS,
        )
        resumed = got[-1]
        assert isinstance(resumed, YourTurn)
        check(
            resumed.version == turn.version,
            "the resumed your_turn is for another version",
            claims.HANDSHAKE,
        )
        try:
            back = await watcher.client.wait_for(
                lambda m: isinstance(m, SeatStatus) and m.connected, "seat_status connected"
            )
        except ServerSilent as exc:
            raise Failed(f"nobody was told the player is back: {exc}", claims.SEAT_STATUS) from None
        assert isinstance(back, SeatStatus)
        check(back.seat == 0, f"seat_status after the return reads {back}", claims.SEAT_STATUS)
        again = Player(client, player.name, player.token, welcome)
        reply = await again.act(resumed)
        check(
            isinstance(reply, Ok), f"the act after resuming was answered {shown(reply)}", claims.ACT
        )
        reply = await again.request(Join(table=table))
        check(
            isinstance(reply, Joined) and reply.seat == 0,
            f"a repeated join of the resumed table was answered {shown(reply)}, not a resync",
            claims.SEATS,
        )
        await again.snapshot(table)


async def hearts_pass(target: Target, notes: Findings) -> None:
    """A Hearts pass is decided by all four seats at once: a pass that carries the version its
    decision began at is applied though another seat passed meanwhile, and a seat still deciding is
    not sent the same choices again (one `your_turn` per decision)."""
    async with target.session() as visit:
        seats = [await visit.player() for _ in range(4)]
        options: Options = {
            "max_hands": 1,
            "target_score": 0,
            "first_dealer": 0,
            "hearts_pass_cycle": ["left"],
        }
        table = (await seats[0].create(Game.HEARTS, "hearts", options, sit=0)).table
        for seat, player in enumerate(seats[1:], start=1):
            await player.join(table, seat=seat)
        turns = [await player.turn(table) for player in seats]
        check(
            len({t.version for t in turns}) == 1
            and all(t.legal[0].kind is ActionKind.PASS for t in turns),
            "the four seats were not all asked to pass at one version",
            claims.DECISIONS,
        )
        reply = await seats[1].act(turns[1])
        check(isinstance(reply, Ok), f"seat 1's pass was answered {shown(reply)}", claims.ACT)
        waiting = [m for m in await seats[0].client.barrier() if isinstance(m, YourTurn)]
        reply = await seats[0].act(turns[0])
        check(
            isinstance(reply, Ok),
            f"a pass carrying the version its decision began at, sent after another seat passed, "
            f"was answered {shown(reply)}: the document says it is applied",
            claims.DECISIONS,
        )
        for seat in (2, 3):
            reply = await seats[seat].act(turns[seat])
            check(
                isinstance(reply, Ok),
                f"seat {seat}'s pass was answered {shown(reply)}",
                claims.DECISIONS,
            )
        notes.expect(
            not any(t.version > turns[0].version and t.legal == turns[0].legal for t in waiting),
            "a seat still deciding was sent its same choices again after another seat passed (one "
            "your_turn per decision)",
            claims.DECISIONS,
        )
