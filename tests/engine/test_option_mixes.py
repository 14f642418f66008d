"""Random legal games under rulesets that switch many options on at once (the presets leave most off):
they finish, replay from their records, refuse what is not legal without changing anything, and no
view or event tells a seat a card it may not know."""

import contextlib
import random
from typing import Any

import pytest

from engine.actions import Bid, Claim, DeclareDeficient, PlayCard
from engine.cards import parse_card
from engine.errors import IllegalAction, NotationError
from engine.events import Event
from engine.game import Game, Phase, new_game
from engine.records import game_records, replay
from engine.ruleset import Ruleset
from tests.engine.helpers import random_action

MIXES: dict[str, dict[str, Any]] = {
    "everything": {
        "blind_nil": True,
        "blind_nil_exchange": 3,
        "blind_bids": True,
        "ten_for_200": True,
        "boston": True,
        "moe": True,
        "bemo": True,
        "no_spade_trumps": True,
        "deficient_hands": ["no_spades", "one_spade", "no_face_cards"],
        "face_up_cards": 2,
        "tram": True,
        "tram_penalty": "exposed",
        "target_score": 300,
        "losing_floor_enabled": True,
    },
    "yahoo-tram": {"tram": True, "tram_penalty": "forfeit_bid", "face_up_cards": 4},
    "joker-blind": {"deck": "jokers", "blind_nil": True, "blind_nil_exchange": 1},
    "deuces-pressure": {"deck": "deuces_high", "play_rule": "pressure", "bags": "off"},
    "three-trumped": {"players": 3, "max_bid": 17, "tram": True, "face_up_cards": 1},
    "two-draw": {"players": 2, "two_player_double_nil": True, "tram": True},
    "crazy-short": {"hand_schedule": ["all_blind", "nothing_but_spades", "royalty", "crazy"]},
}


def _cards(value: Any) -> int:
    mask = 0
    if isinstance(value, dict):
        for item in value.values():
            mask |= _cards(item)
    elif isinstance(value, list):
        for item in value:
            mask |= _cards(item)
    elif isinstance(value, str) and len(value) == 2:
        with contextlib.suppress(NotationError):
            mask |= 1 << parse_card(value)
    return mask


class Knowledge:
    def __init__(self, players: int) -> None:
        self.players = players
        self.public = 0
        self.seats = [0] * players

    def learn(self, event: Event) -> None:
        d = event.to_dict()
        kind = d["kind"]
        if kind == "hand_dealt":
            self.public = _cards(d["face_up"])
            self.seats = [
                0 if seat in d["hidden"] else _cards(hand) for seat, hand in enumerate(d["hands"])
            ]
        elif kind in ("hand_looked", "card_drawn", "cards_discarded", "cards_given"):
            self.seats[d["seat"]] |= _cards(d.get("cards") or d.get("card"))
        elif kind == "draw_resolved":
            self.seats[d["seat"]] |= _cards(d["taken"])
            self.public |= _cards(d["discarded"])
        elif kind == "cards_exchanged":
            self.seats[d["giver"]] |= _cards(d["cards"])
            self.seats[d["receiver"]] |= _cards(d["cards"])
        elif kind in ("card_played", "claim_made", "deal_declared_dead"):
            self.public |= _cards(d.get("cards") or d.get("card"))

    def check(self, game: Game, events: list[Event]) -> None:
        for seat in [*range(self.players), None]:
            known = self.public | (0 if seat is None else self.seats[seat])
            view = game.spectator_view() if seat is None else game.view(seat)
            assert not _cards(view.to_dict()) & ~known, f"view of {seat} leaks"
            for event in events:
                assert not _cards(event.for_seat(seat)) & ~known, f"{event.kind} leaks to {seat}"


def _snapshot(game: Game) -> Any:
    return (
        game.version,
        game.phase,
        game.scores,
        game.spectator_view().to_dict(),
        [game.view(s).to_dict() for s in range(game.players)],
    )


@pytest.mark.parametrize("mix", sorted(MIXES))
@pytest.mark.parametrize("seed", range(3))
def test_option_mix_games(mix: str, seed: int) -> None:
    ruleset = Ruleset.from_preset("standard", **MIXES[mix])
    rng = random.Random(f"{mix}-{seed}")
    game = new_game(ruleset, dealer=seed % ruleset.players)
    knowledge = Knowledge(ruleset.players)
    deals = 0
    while not game.is_over:
        if game.phase is Phase.DEALING:
            if deals == 4:
                break
            events = game.deal(rng.randbytes(8))
            deals += 1
        else:
            if rng.random() < 0.1:
                seat = rng.randrange(ruleset.players)
                legal = game.legal_actions(seat)
                before = _snapshot(game)
                for probe in (
                    PlayCard(seat, rng.randrange(54)),
                    Bid(seat, rng.randrange(15)),
                    Claim(seat),
                    DeclareDeficient(seat),
                ):
                    if probe in legal:
                        continue
                    with pytest.raises(IllegalAction):
                        game.apply(probe)
                    assert _snapshot(game) == before
            action = random_action(game, rng)
            if isinstance(action, DeclareDeficient) and rng.random() < 0.5:
                seat = game.to_act()[0]
                action = next(
                    a for a in game.legal_actions(seat) if not isinstance(a, DeclareDeficient)
                )
            events = game.apply(action)
        for event in events:
            knowledge.learn(event)
        knowledge.check(game, events)
    if game.histories:
        assert replay(game_records(game)) == game.scores
