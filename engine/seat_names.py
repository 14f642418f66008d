"""Seats and sides in words, for people: `West (heuristic)`, `North (alice)`, `North-South`.

A seat number means nothing to a reader, and an account name alone does not say where it sat (three
built-in bots are all `bot:heuristic`): every place a person reads a seat (the play screen's log, a
replay, the history, a hand's summary, a bot's log) names it by its direction and who sat there. The
one spelling lives here so the client and the bot SDK say it alike. Pure: no project imports.
"""

from __future__ import annotations

from collections.abc import Sequence

# The engine's seat order: seat 0 deals first in the record's frame and sits South.
DIRECTIONS = ("South", "West", "North", "East")
# A built-in bot's account is `bot:KIND`; a seat the server's fallback took over is `fallback:KIND`.
BOT_PREFIX = "bot:"
FALLBACK_PREFIX = "fallback:"


def seat_word(seat: int, players: int) -> str:
    """`West` at four seats; `seat 1` where compass points mean nothing (three seats)."""
    if players == len(DIRECTIONS) and 0 <= seat < players:
        return DIRECTIONS[seat]
    return f"seat {seat}"


def who(player: str | None) -> str:
    """Who sat there, shortly: a built-in bot by its kind (`heuristic`), the fallback as
    `heuristic, fallback`, an account or an arena entrant as it is named; empty when unknown."""
    if not player:
        return ""
    if player.startswith(BOT_PREFIX):
        return player[len(BOT_PREFIX) :]
    if player.startswith(FALLBACK_PREFIX):
        return f"{player[len(FALLBACK_PREFIX) :]}, fallback"
    return player


def seat_label(seat: int, players: int, player: str | None, *, mark: str = "") -> str:
    """`West (heuristic)`, `North (alice)`, `South (my_bot:MyBot)*` (with `mark`), or `West`."""
    word = seat_word(seat, players)
    shown = who(player)
    return (f"{word} ({shown})" if shown else word) + mark


def side_word(seats: Sequence[int], players: int) -> str:
    """A side as people say it: `North-South`, `East-West`; a lone seat by its direction;
    anything else by its seats joined (`seat 0+seat 1`)."""
    ordered = sorted(seats)
    if players == len(DIRECTIONS) and ordered == [0, 2]:
        return "North-South"
    if players == len(DIRECTIONS) and ordered == [1, 3]:
        return "East-West"
    return "+".join(seat_word(s, players) for s in ordered)
