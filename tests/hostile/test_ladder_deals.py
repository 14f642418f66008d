"""A bot that remembers every deal gains nothing on the ladder (issue 22, item 10): over match after
match it is never shown a deal it has seen before. A real server process on 127.0.0.1 with the house
bots entered; the hostile bot keeps every deal commitment it is shown and every seed revealed to it.

The ladder used to replay each match's deals for its second half, the teams swapped: every deal's
commitment came round again, and a bot that kept the first half's seeds knew all four hands of the
second half before they were dealt.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import trio

from protocol.messages import (
    Act,
    DealCommitment,
    DealSeed,
    LadderEnter,
    MatchEnded,
    MatchStarted,
    Ok,
    Snapshot,
    YourTurn,
)
from protocol.types import ClientKind
from server.ladder.house import add_house_bots_command
from tests.hostile.peer import Peer
from tests.hostile.proc import ServerProcess

MATCHES = 2
MAX_MESSAGES = 20_000


async def test_a_bot_that_remembers_every_deal_never_meets_one_again(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    # The host's house bots, entered before the server starts: a lone bot always has a match.
    add_house_bots_command(db, ["random", "heuristic", "search,worlds=1"])
    with ServerProcess(db) as server:
        with trio.fail_after(180):
            peer = await Peer.connect(server.port)
            await peer.hello(kind=ClientKind.BOT)
            await peer.register("memory")
            assert isinstance(await peer.request(LadderEnter()), Ok)
            shown: list[str] = []  # every deal's commitment, in the order shown
            revealed: set[str] = set()  # SHA-256 of every seed revealed so far: deals it knows
            matches = 0
            for _ in range(MAX_MESSAGES):
                message = await peer.receive()
                assert message is not None, "the server closed the connection"
                # The deal in play's commitment: told before each deal, and in a snapshot.
                commitment = (
                    message.commitment if isinstance(message, DealCommitment | Snapshot) else None
                )
                if commitment is not None and commitment not in shown[-1:]:
                    # A deal it is about to play: it must know nothing of it.
                    assert commitment not in revealed, "a deal whose seed it had seen came again"
                    assert commitment not in shown, "a deal it had been shown came again"
                    shown.append(commitment)
                elif isinstance(message, DealSeed):
                    revealed.add(hashlib.sha256(bytes.fromhex(message.seed)).hexdigest())
                elif isinstance(message, YourTurn):
                    await peer.send(
                        Act(table=message.table, version=message.version, action=message.legal[0])
                    )
                elif isinstance(message, MatchStarted):
                    assert message.hands is not None and message.hands > 0
                elif isinstance(message, MatchEnded):
                    matches += 1
                    if matches == MATCHES:
                        break
            assert matches == MATCHES
            # It played every deal of both matches, and saw each one's seed afterwards.
            assert len(shown) >= 2 * MATCHES and revealed >= set(shown)
            await peer.aclose()
