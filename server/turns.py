"""Whose turn it is, as messages: `turn` for everyone and `your_turn` for each seat that must act.

Pure: the table gives the game, its seats and `now`; this module begins and ends the seats'
decisions on their clocks (`server.clocks`) and says what to send. A seat is sent `your_turn` once
per decision: when it begins, or again only if what the seat may do changed. In a simultaneous phase
(a Hearts pass) another seat's action raises the version but leaves a waiting seat's choices alone,
so it is not sent again: the `your_turn` it has, and an `act` it already sent for it, stay good
(`Table._act` accepts any version since the decision began).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.actions import action_to_dict
from engine.game import Game
from protocol.messages import Turn
from protocol.wire import your_turn_frames
from server import clocks
from server.peers import Peer, SharedEvent
from server.seating import SeatState


def begin_decisions(
    table_id: str,
    game: Game,
    seats: Sequence[SeatState],
    now: float,
    turn_ms: Callable[[SeatState], int],
) -> list[tuple[Peer, SharedEvent]]:
    """Begin (or carry on) the decision of every seat that must act, end the others', and return
    the `your_turn`s due: one per holder whose decision just began or whose choices changed.

    Each `your_turn` goes from the engine's legal actions to bytes (`your_turn_frames`): their maps
    are the engine's own wire shape, never built into the protocol's `Action`s nor checked again."""
    version = game.version
    acting = set(game.to_act())
    due: list[tuple[Peer, SharedEvent]] = []
    for seat, state in enumerate(seats):
        if seat not in acting:
            clocks.end(state.clock, now)
            state.told_legal = None
            continue
        clocks.begin(state.clock, now, version, turn_ms(state))
        if state.holder is None:
            continue  # dropped: its clock runs, and it is told when it comes back
        legal = game.legal_actions(seat)
        key = tuple(legal)
        if key == state.told_legal:
            continue  # the same decision, still open: the your_turn it was sent stands
        state.told_legal = key
        deadline_ms, bank_ms = clocks.left_ms(state.clock, now)
        maps = [action_to_dict(action, with_seat=False) for action in legal]
        frames = your_turn_frames(
            table_id, version, seat=seat, legal=maps, deadline_ms=deadline_ms, bank_ms=bank_ms
        )
        due.append((state.holder, SharedEvent(frames)))
    return due


def turn_message(table_id: str, game: Game, seats: Sequence[SeatState], now: float) -> Turn | None:
    """Who must act now and their clocks (nothing else: no cards, no legal actions)."""
    acting = sorted(set(game.to_act()))
    if not acting:
        return None
    times = [clocks.left_ms(seats[seat].clock, now) for seat in acting]
    return Turn(
        table=table_id,
        version=game.version,
        to_act=acting,
        deadline_ms=[deadline for deadline, _ in times],
        bank_ms=[bank for _, bank in times],
    )
