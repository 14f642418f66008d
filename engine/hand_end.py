"""A finished Spades hand's raw facts, kept cheaply and turned into a HandHistory only when asked for
(playouts finish hands by the thousand; histories and scoring remarks are for people and records)."""

from operator import sub
from typing import TYPE_CHECKING

from engine import scoring
from engine.actions import Action, Bid
from engine.events import HandScored
from engine.history import HandHistory
from engine.spades_tables import PLAY_ACTIONS

if TYPE_CHECKING:
    from engine.spades import SpadesGame

NO_SEATS: frozenset[int] = frozenset()


class FinishedHand:
    """A finished hand's raw facts, turned into a HandHistory on demand. It keeps references to the
    game's lists: they are never changed after the hand ends (the next deal makes new ones)."""

    __slots__ = (
        "actions",
        "bags_after",
        "bags_before",
        "before",
        "bid_order",
        "bids",
        "claim",
        "dead",
        "dealer",
        "dealt",
        "discarded",
        "explained",
        "face_up",
        "forfeit",
        "hand_number",
        "hand_type",
        "play_actions",
        "players",
        "plays",
        "ruleset",
        "score_after",
        "seed",
        "set_aside",
        "sides",
        "spade_winners",
        "transfers",
        "tricks",
        "winners",
    )

    def __init__(
        self,
        game: "SpadesGame",
        before: tuple[int, ...],
        bags_before: tuple[int, ...],
        spade_winners: frozenset[int],
        explained: tuple[str, ...] | None = None,
    ) -> None:
        self.explained = explained  # the notes, when the scoring that ended the hand wrote them
        self.hand_number = game._hand_number
        self.dealer = game._dealer
        self.seed = game._seed
        self.players = game._n
        self.hand_type = game._hand_type
        self.dealt = game._dealt
        self.face_up = tuple(game._face_up)
        self.set_aside = game._set_aside
        self.discarded = game._discarded
        self.bid_order = game._bid_order
        self.transfers = game._transfers
        self.plays = game._plays
        self.winners = game._winners
        self.tricks = tuple(game._tricks)
        self.sides = game._sides
        self.score_after = tuple(game._scores)
        self.bags_after = tuple(game._bags)
        self.actions = game._actions
        self.play_actions = game._play_actions
        self.dead = tuple(game._dead) if game._dead else ()
        self.claim = game._claim
        self.bids: list[Bid] = game._bids  # type: ignore[assignment]  # every seat has bid
        self.ruleset = game._ruleset
        self.before = before
        self.bags_before = bags_before
        self.spade_winners = spade_winners
        self.forfeit = frozenset(game._forfeit) if game._forfeit else NO_SEATS

    def build(self) -> HandHistory:
        actions: list[Action] = list(self.actions)
        extra = sorted(self.play_actions, key=lambda item: item[0])
        position = 0
        for index, p in enumerate(self.plays):
            while position < len(extra) and extra[position][0] == index:
                actions.append(extra[position][1])
                position += 1
            actions.append(PLAY_ACTIONS[p >> 6][p & 63])
        actions.extend(action for _, action in extra[position:])
        return HandHistory(
            hand_number=self.hand_number,
            dealer=self.dealer,
            seed=self.seed,
            players=self.players,
            hand_type=self.hand_type,
            deal=self.dealt,
            face_up=self.face_up,
            set_aside=self.set_aside,
            discarded=self.discarded,
            bids=tuple(self.bid_order),
            transfers=tuple(self.transfers),
            plays=tuple((p >> 6, p & 63) for p in self.plays),
            trick_winners=tuple(self.winners),
            tricks=self.tricks,
            sides=self.sides,
            score_before=self.before,
            score_delta=self.delta(),
            score_after=self.score_after,
            bags_after=self.bags_after,
            actions=tuple(actions),
            dead_deals=self.dead,
            claim=self.claim,
            notes=self.notes(),
        )

    def delta(self) -> tuple[int, ...]:
        return tuple(map(sub, self.score_after, self.before))

    def notes(self) -> tuple[str, ...]:
        """The scoring remarks for people: written when the hand was scored for `apply`, else by
        scoring the hand again with explanations."""
        if self.explained is not None:
            return self.explained
        notes: list[str] = []
        for index, seats in enumerate(self.sides):
            notes.extend(
                scoring.score_side(
                    self.ruleset,
                    seats,
                    self.bids,
                    self.tricks,
                    self.winners,
                    score=self.before[index],
                    bags=self.bags_before[index],
                    spade_winners=self.spade_winners,
                    forfeit=index in self.forfeit,
                    explain=True,
                ).notes
            )
        return tuple(notes)

    def scored_event(self) -> HandScored:
        """The HandScored event, without building the whole history."""
        return HandScored(
            hand_number=self.hand_number,
            sides=self.sides,
            tricks=self.tricks,
            before=self.before,
            delta=self.delta(),
            after=self.score_after,
            bags_after=self.bags_after,
            seed=self.seed.hex(),
            notes=self.notes(),
        )
