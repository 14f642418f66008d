"""Spectators held some tricks behind the play (a table's `spectator_delay`), so a spectator can
never tell a player what the others hold while it still matters.

Pure (no trio, no clock). A delayed table's spectators are not in its audience one by one: one
`SpectatorDelay` stands for all of them (seat None: every engine event redacts itself for it as for
any spectator, `server.broadcast`). What the table tells it about the play (every `GameEvent`: the
engine's events, `turn`, `clock_expired`, the deal's commitment and seed) is held, in order, in
*segments*; anything else (chat, a seat's connection status, a closing table) passes straight on.

The table tells it where the play stands after each step (`follow`):

- a *boundary* is a position between tricks: play has begun (boundary 0, after the bids, passes,
  draws) or trick k is over and no card of the next is down (boundary k). Each boundary closes the
  segment told since the previous one, with the spectator's snapshot of that position;
- at boundary j the spectators are given everything up to boundary j - N (N the delay), in order:
  so while the players are past trick j, a spectator is at the end of trick j - N;
- once the hand is over (scored, declared dead, the game over), everything held is given: nothing
  of a finished hand can help anyone at the table, and its deal's seed (`deal_seed`) goes with it,
  after its last event. So a hand's deal and its bids reach spectators once N tricks are over.

A spectator who arrives is given the snapshot of the position the others have been given (the
boundary last released, or the hand's start), never the live one while anything is held, and then
the held segments as they are released. Memory is bounded by one hand: every segment is released
at the hand's end at the latest; chat is never held.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Set

from engine.game import Game, Phase
from protocol.envelope import GameEvent
from protocol.messages import Message, Snapshot
from server.peers import Peer, SharedEvent

Held = Message | SharedEvent

#: The phases in which no hand is in play: whatever is held is given at once.
BETWEEN_HANDS = frozenset({Phase.DEALING, Phase.GAME_OVER})


def boundary_of(game: Game) -> int | None:
    """The boundary the game is at: the tricks done this hand when play has begun and no card of
    the next trick is down, else None (the hand is being dealt, bid, passed, or a trick is open)."""
    if game.phase is not Phase.PLAYING:
        return None
    view = game.spectator_view()
    if view.trick:
        return None
    return sum(view.tricks)


class SpectatorDelay:
    """The one peer a delayed table tells for all its spectators (`spectators`, the table's own
    set, which it reads at each delivery: who watches is the table's to change)."""

    __slots__ = ("_boundary", "_held", "_open", "_released", "spectators", "tricks")

    def __init__(self, tricks: int, spectators: Set[Peer]) -> None:
        if tricks < 1:
            raise ValueError("a spectator delay is at least one trick")
        self.tricks = tricks
        self.spectators = spectators
        self._open: list[Held] = []  # told since the last boundary
        self._held: deque[tuple[list[Held], Snapshot]] = deque()  # closed, not yet released
        self._released: Snapshot | None = None  # the position given so far (None: the live one)
        self._boundary = -1  # the last boundary of this hand seen (-1: none yet)

    # ---------------------------------------------------------------- as a peer

    @property
    def peer_id(self) -> str:
        return "spectator-delay"

    @property
    def connected(self) -> bool:
        return True

    def deliver(self, message: Message) -> None:
        self._take(message, isinstance(message, GameEvent))

    def deliver_shared(self, shared: SharedEvent) -> None:
        self._take(shared, issubclass(shared.kind, GameEvent))

    def _take(self, what: Held, about_the_play: bool) -> None:
        if about_the_play:
            self._open.append(what)
        else:
            self._give([what])

    # ---------------------------------------------------------------- where the play is

    @property
    def holding(self) -> bool:
        """Whether anything is held (a spectator then starts from `snapshot`, not the live one)."""
        return bool(self._open or self._held)

    def held(self) -> list[Message]:
        """What is held, oldest first (for tests and logs)."""
        segments = [*(segment for segment, _ in self._held), self._open]
        return [w.message if isinstance(w, SharedEvent) else w for seg in segments for w in seg]

    def snapshot(self, live: Callable[[], Snapshot]) -> Snapshot:
        """What a spectator who arrives now is shown first: the position the others have been
        given. With nothing held that is the live one."""
        if not self.holding or self._released is None:
            return live()
        return self._released

    def hand_starts(self, snapshot: Snapshot) -> None:
        """A hand is about to be dealt (nothing of it told yet): `snapshot` is where it starts."""
        self._give_all(snapshot)
        self._boundary = -1

    def follow(self, game: Game, snapshot: Callable[[], Snapshot]) -> None:
        """The table has told everything of its last step: close a segment if the game is at a new
        boundary, then give what the delay allows; give everything once the hand is over."""
        if game.phase in BETWEEN_HANDS:
            if self.holding:
                self._give_all(snapshot())
            return
        boundary = boundary_of(game)
        if boundary is None or boundary <= self._boundary:
            return
        self._boundary = boundary
        self._held.append((self._open, snapshot()))
        self._open = []
        # The segments held end at consecutive boundaries, the newest at `boundary`: keep N.
        while len(self._held) > self.tricks:
            segment, self._released = self._held.popleft()
            self._give(segment)

    def _give_all(self, snapshot: Snapshot) -> None:
        while self._held:
            segment, _ = self._held.popleft()
            self._give(segment)
        self._give(self._open)
        self._open = []
        self._released = snapshot

    def _give(self, messages: list[Held]) -> None:
        for watcher in tuple(self.spectators):
            for what in messages:
                if isinstance(what, SharedEvent):
                    watcher.deliver_shared(what)
                else:
                    watcher.deliver(what)
