"""Typed input is read forgivingly, and only the legal list (from `your_turn`) decides what is legal."""

from __future__ import annotations

import pytest

from client.commands import Act, Problem, Slash, read_line
from client.state import TableState, Turn
from protocol.types import Action, ActionKind

HAND = ["2C", "5C", "TD", "3H", "QH", "QS", "AS"]


def state_with(legal: list[Action]) -> TableState:
    state = TableState(table="t1", seat=0)
    state.view = {"hand": list(HAND), "players": 4, "game": "spades"}
    state.turn = Turn(version=7, legal=legal, deadline=30.0, bank_ms=0)
    return state


def plays(*cards: str) -> list[Action]:
    return [Action(kind=ActionKind.PLAY, card=card) for card in cards]


@pytest.mark.parametrize("typed", ["QS", "qs", " q s ", "Q♠", "q♤", "6"])
def test_a_card_many_ways(typed: str) -> None:
    command = read_line(typed, state_with(plays("QS", "AS")))
    assert command == Act(Action(kind=ActionKind.PLAY, card="QS"), 7)


def test_ten_written_as_10() -> None:
    command = read_line("10d", state_with(plays("TD")))
    assert command == Act(Action(kind=ActionKind.PLAY, card="TD"), 7)


def test_an_illegal_card_is_still_sent_so_the_engine_can_say_why() -> None:
    command = read_line("2c", state_with(plays("QS", "AS")))
    assert command == Act(Action(kind=ActionKind.PLAY, card="2C"), 7)


def test_nonsense_and_bad_numbers_are_problems_not_actions() -> None:
    state = state_with(plays("QS"))
    assert isinstance(read_line("zz", state), Problem)
    problem = read_line("42", state)
    assert isinstance(problem, Problem) and "1 to 7" in problem.message


def bids(blind_nil: bool) -> list[Action]:
    out = [Action(kind=ActionKind.BID, tricks=n, blind=False) for n in range(14)]
    if blind_nil:
        out.append(Action(kind=ActionKind.BID, tricks=0, blind=True))
    return out


@pytest.mark.parametrize(
    ("typed", "tricks", "blind"),
    [("3", 3, False), ("nil", 0, False), ("0", 0, False), ("Blind Nil", 0, True), ("bn", 0, True)],
)
def test_bids(typed: str, tricks: int, blind: bool) -> None:
    command = read_line(typed, state_with(bids(blind_nil=True)))
    assert command == Act(Action(kind=ActionKind.BID, tricks=tricks, blind=blind), 7)


def test_a_bid_not_offered_goes_to_the_engine() -> None:
    command = read_line("blind nil", state_with(bids(blind_nil=False)))
    assert command == Act(Action(kind=ActionKind.BID, tricks=0, blind=True), 7)
    assert isinstance(read_line("lots", state_with(bids(False))), Problem)


def test_passing_three_cards_by_name_or_number() -> None:
    legal = [
        Action(kind=ActionKind.PASS, cards=["2C", "5C", "QS"]),
        Action(kind=ActionKind.PASS, cards=["3H", "QH", "AS"]),
    ]
    state = state_with(legal)
    assert read_line("qh, as 3h", state) == Act(legal[1], 7)
    assert read_line("1 2 6", state) == Act(legal[0], 7)
    problem = read_line("qh as", state)
    assert isinstance(problem, Problem) and "3 different cards" in problem.message


def test_slash_commands() -> None:
    state = state_with(plays("QS"))
    assert read_line("/say good luck all", state) == Slash("say", "good luck all")
    assert read_line("/q", state) == Slash("quit")
    for name in ("last", "scores", "help", "verify"):
        assert read_line(f"/{name}", state) == Slash(name)
    assert isinstance(read_line("/dance", state), Problem)
    assert isinstance(read_line("/say", state), Problem)
    assert read_line("   ", state) is None
