"""Telling a table's audience: engine events and notices to the right message for each recipient.

Pure (no trio, no clock): a table hands over the audience (who sits where, who watches) and what
happened; this module decides who may see what and delivers. Every engine event redacts itself per
recipient (`event.for_seat(seat)`, spectators `for_seat(None)`), so no seat and no spectator ever
receives a card it may not know. Recipients who may see the same thing get the same `SharedEvent`:
the engine's map packed once into bytes (`protocol.wire.game_event_frames`), never built into a
message object, each session splicing in its own `seq`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.events import Event as EngineEvent
from protocol.messages import DealSeed, Event
from protocol.wire import game_event_frames
from server.peers import Peer, SharedEvent

# Who hears a table: (seat, peer) for seated connections, (None, peer) for spectators.
Audience = Sequence[tuple[int | None, Peer]]

# The deal's seed is revealed to everyone once the deal is over: scored, or declared dead.
DEAL_OVER = frozenset({"hand_scored", "deal_declared_dead"})


def tell_same(audience: Audience, message: Event) -> None:
    """The same message to everyone (encoded once)."""
    shared = SharedEvent(message)
    for _seat, peer in audience:
        peer.deliver_shared(shared)


@dataclass
class DealInPlay:
    """The seed of the deal in play and its hand number, kept secret until the deal is over."""

    seed: bytes = b""
    hand_number: int = 0


def tell_events(
    table_id: str,
    version: int,
    events: Iterable[EngineEvent],
    audience: Audience,
    *,
    deal: DealInPlay,
) -> None:
    """Each engine event to each recipient as that recipient may see it; after the event that ends
    a deal, that deal's seed (and `deal` is cleared: its secret is out)."""
    for event in events:
        # One message per distinct view of the event (most read the same for every seat).
        built: list[tuple[dict[str, Any], SharedEvent]] = []
        for seat, peer in audience:
            shown = event.for_seat(seat)
            if shown is None:
                continue
            shared = None
            for seen, made in built:  # a plain loop: a generator per recipient costs more
                if seen == shown:
                    shared = made
                    break
            if shared is None:
                # The engine's own map, straight to bytes (no message object, no check again).
                shared = SharedEvent(game_event_frames(table_id, version, shown))
                built.append((shown, shared))
            peer.deliver_shared(shared)
        if event.kind in DEAL_OVER and deal.seed:
            tell_same(
                audience,
                DealSeed(
                    table=table_id,
                    version=version,
                    hand_number=deal.hand_number,
                    seed=deal.seed.hex(),
                ),
            )
            deal.seed = b""
