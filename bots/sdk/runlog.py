"""What a run did, and what the runner says about it: the counts (`RunStats`) and, at info level
or above, one line for every match start and end, every forfeit (with its reason), every clock
expiry (naming its seat) and, at exit, a one-line summary. The runner's fallbacks are logged where
they happen (`bots.sdk.runner`), and counted here.

`RunLog` follows the ladder's matches from the messages the runner hands it; it touches no socket.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from engine.actions import Action, Bid, ExchangeCards, KeepDrawn, PassCards, PlayCard
from engine.cards import card_symbol
from engine.seat_names import seat_word, side_word
from protocol.messages import ClockExpired, MatchEnded, MatchStarted, SeatLost
from protocol.types import Clock

log = logging.getLogger("bots.runner")


@dataclass
class RunStats:
    """What happened, for the caller and the tests."""

    games: list[dict[str, Any]] = field(default_factory=list)  # each `game_over` as a map
    decisions: int = 0
    fallbacks: int = 0
    connections: int = 0
    #: Each ladder match over for us: {"match", "place", "score", "rating_before",
    #: "rating_after"} from its `match_ended`, and "forfeited" (the reason) if we forfeited it.
    matches: list[dict[str, Any]] = field(default_factory=list)
    forfeits: list[dict[str, Any]] = field(default_factory=list)  # {"match", "table", "reason"}
    clock_expiries: int = 0  # the server played for one of our seats: its clock had run out
    #: Each event round we were seated for: {"event", "round", "table", "seat"} of its `event_round`.
    rounds: list[dict[str, Any]] = field(default_factory=list)
    #: The event's end as `event_ended` said it: {"event", "cancelled", "standings": [maps]}.
    event_end: dict[str, Any] | None = None

    def summary(self) -> str:
        """One line: matches, games, decisions, fallbacks, clock expiries, connections."""
        parts = []
        if self.rounds or self.event_end is not None:
            parts.append(_count(len(self.rounds), "event round"))
        if self.matches:
            lost = [f["reason"] for f in self.forfeits]
            forfeited = f" ({len(lost)} forfeited: {', '.join(lost)})" if lost else ""
            parts.append(_count(len(self.matches), "ladder match", "ladder matches") + forfeited)
        parts += [
            _count(len(self.games), "game"),
            _count(self.decisions, "decision"),
            _count(self.fallbacks, "fallback"),
            _count(self.clock_expiries, "clock expiry", "clock expiries"),
            _count(self.connections, "connection"),
        ]
        return "done: " + ", ".join(parts)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def clock_text(clock: Clock) -> str:
    """`5 s a decision`, with the bank when there is one."""
    text = f"{clock.turn_ms / 1000:g} s a decision"
    if clock.bank_ms:
        text += f", then a bank of {clock.bank_ms / 1000:g} s for the game"
    return text


@dataclass
class _Half:
    """The ladder match we are playing (at a server of the old ladder: one of its two halves)."""

    match: str
    table: str
    half: int  # its `match_started`s so far: 1 (an old ladder's second half: 2)
    seat: int | None
    expiries: int = 0  # our clock ran out this many times at this table
    forfeited: str | None = None


class RunLog:
    """Follows the runner's matches and clocks; logs and counts what happens to them."""

    def __init__(self, stats: RunStats) -> None:
        self.stats = stats
        self.user: str | None = None  # the account we play as (from `welcome`)
        self.players = 4  # seats at the table played now (the runner sets it from the ruleset)
        self._half: _Half | None = None
        self._halves: dict[str, int] = {}  # match -> halves started

    @property
    def in_match(self) -> bool:
        """Whether a ladder match of ours is under way (started, not yet ended)."""
        return self._half is not None

    def halves_started(self, match: str) -> int:
        """How many halves of `match` have started (1 during its first)."""
        return self._halves.get(match, 0)

    def match_started(self, started: MatchStarted) -> None:
        half = self._halves.get(started.match, 0) + 1
        self._halves[started.match] = half
        seat = started.players.index(self.user) if self.user in started.players else None
        self._half = _Half(started.match, started.table, half, seat)
        hands = f"{_count(started.hands, 'hand')}, " if started.hands else ""
        if seat is not None and len(started.players) == 4:
            partner = started.players[(seat + 2) % 4]
            others = " and ".join(started.players[(seat + s) % 4] for s in (1, 3))
            who = f"you are seat {seat}, partner {partner}, against {others}"
        else:
            who = "players " + ", ".join(started.players)
        # A match is one table (docs/ladder.md); an old ladder's second half is a second start.
        again = f" (its half {half})" if half > 1 else ""
        log.info(
            "match %s started%s at table %s (%s%s)",
            started.match,
            again,
            started.table,
            hands,
            who,
        )

    def seat(self, seat: int) -> str:
        """`3 (East)`: a seat by its number and where it sits, in the lines below."""
        word = seat_word(seat, self.players)
        return str(seat) if word == f"seat {seat}" else f"{seat} ({word})"

    def clock_expired(self, expired: ClockExpired, our_seat: int | None) -> None:
        """A seat's clock ran out (or its player left): the server acted for it."""
        if expired.reason == "abandoned":
            log.info(
                "seat %s at table %s was left by its player: the server's %s plays it",
                self.seat(expired.seat),
                expired.table,
                expired.fallback,
            )
            return
        if expired.seat != our_seat:
            log.info(
                "clock expired for seat %s at table %s: the server's %s acted for it",
                self.seat(expired.seat),
                expired.table,
                expired.fallback,
            )
            return
        self.stats.clock_expiries += 1
        half = self._half
        if half is not None and half.table == expired.table:
            half.expiries += 1
            log.warning(
                "clock expired for our seat %s at table %s: the server's %s acted for us"
                " (%d this match, %s; too many forfeit it, 3 by default)",
                self.seat(expired.seat),
                expired.table,
                expired.fallback,
                half.expiries,
                half.match,
            )
        else:
            log.warning(
                "clock expired for our seat %s at table %s: the server's %s acted for us",
                self.seat(expired.seat),
                expired.table,
                expired.fallback,
            )

    def seat_lost(self, lost: SeatLost) -> None:
        if lost.reason == "match_over":
            log.debug("the game at table %s is over: the seat goes back to the ladder", lost.table)
            return
        if lost.reason == "taken_over":
            log.warning(
                "another connection of this account took our seat %d at table %s: this runner"
                " no longer plays it",
                lost.seat,
                lost.table,
            )
            return
        half = self._half
        expiries = half.expiries if half is not None and half.table == lost.table else 0
        # A live connection forfeits only by timeouts: it neither dropped nor left.
        reason = "timeouts" if expiries else "forfeited"
        why = (
            f"our clock ran out {expiries} times this match (the ladder's limit)"
            if expiries
            else "the server did not say why"
        )
        self._forfeit(lost.table, reason, why)

    def connection_lost(self) -> None:
        """The line dropped: a match under way is forfeited (the ladder's rule), and over for us."""
        half = self._half
        if half is None or half.forfeited is not None:
            return
        self._forfeit(half.table, "disconnected", "our connection dropped during it")
        # No `match_ended` reaches a dropped connection: the match is over for this run.
        self._end(half.match, {"match": half.match, "forfeited": "disconnected"})

    def _forfeit(self, table: str, reason: str, why: str) -> None:
        half = self._half
        match = half.match if half is not None else "?"
        if half is not None:
            half.forfeited = reason
        self.stats.forfeits.append({"match": match, "table": table, "reason": reason})
        log.warning(
            "forfeited match %s at table %s: %s; the server's fallback bot plays the seat to the"
            " end of the match (only our rating moves, down)",
            match,
            table,
            why,
        )

    def match_ended(self, ended: MatchEnded) -> None:
        result = next((r for r in ended.results if r.name == self.user), None)
        half = self._half
        forfeited = half.forfeited if half is not None and half.match == ended.match else None
        entry: dict[str, Any] = {"match": ended.match}
        if result is not None:
            entry.update(
                place=result.place,
                score=result.score,
                rating_before=result.rating_before,
                rating_after=result.rating_after,
            )
            log.info(
                "match %s over: our team placed %d with %d points; rating %.2f -> %.2f%s",
                ended.match,
                result.place,
                result.score,
                result.rating_before,
                result.rating_after,
                f" (forfeited: {forfeited})" if forfeited else "",
            )
        else:
            log.info("match %s over", ended.match)
        if forfeited:
            entry["forfeited"] = forfeited
        self._end(ended.match, entry)

    def _end(self, match: str, entry: dict[str, Any]) -> None:
        self.stats.matches.append(entry)
        self._halves.pop(match, None)
        self._half = None


def action_words(action: Action) -> str:
    """A decision as a bot's author reads it in a `-v` log: `play Q♠`, `bid nil`, `pass A♥ K♥ 2♣`,
    not the dataclass's `PlayCard(seat=3, card=32)`."""
    if isinstance(action, PlayCard):
        return f"play {card_symbol(action.card)}"
    if isinstance(action, Bid):
        return f"bid {action.describe()}"
    if isinstance(action, PassCards | ExchangeCards):
        verb = "pass" if isinstance(action, PassCards) else "exchange"
        return f"{verb} {' '.join(card_symbol(c) for c in action.cards)}"
    if isinstance(action, KeepDrawn):
        return "keep the drawn card" if action.keep else "discard the drawn card"
    # The rest (look at the hand, claim, declare deficient, discard) say it by their kind.
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in type(action).__name__)
    return words.strip()


def seat_line(table: str, seat: int, players: int) -> str:
    """`took seat 2 (North) at table t1`: where the runner's bot sits, said once it is known."""
    word = seat_word(seat, players)
    where = f"seat {seat}" if word == f"seat {seat}" else f"seat {seat} ({word})"
    return f"took {where} at table {table}"


def game_over_line(game: dict[str, Any]) -> str:
    """A finished game for `spades-bot run`: who won by side and seat, which seat was ours, each
    side's score (`game over at table t1: North-South won (you sat North, seat 2); North-South
    520, East-West 310`). `game` is the `game_over` event with `seat`, `players` and `sides`
    added by the runner; without them (an old caller), the seats as numbers."""
    winners = [int(s) for s in game.get("winners") or []]
    scores = [int(s) for s in game.get("scores") or []]
    seat, players = game.get("seat"), int(game.get("players") or 4)
    sides = [[int(s) for s in side] for side in game.get("sides") or []]
    if not sides:
        sides = [[s] for s in range(len(scores))] if len(scores) == players else []
    won = [side for side in sides if set(side) & set(winners)]
    winner_words = " and ".join(side_word(side, players) for side in won) or (
        ", ".join(seat_word(s, players) for s in winners) or "nobody"
    )
    text = f"game over at table {game.get('table', '?')}: {winner_words} won"
    if isinstance(seat, int):
        mine = "you won" if seat in winners else "you lost"
        text += f" ({mine}; you sat {seat_word(seat, players)}, seat {seat})"
    if sides and len(sides) == len(scores):
        text += "; " + ", ".join(
            f"{side_word(side, players)} {score}" for side, score in zip(sides, scores, strict=True)
        )
    elif scores:
        text += f"; scores {scores}"
    return text


def event_end_line(end: dict[str, Any], user: str | None) -> str:
    """An event's end as the run saw it: `E1 is over: place 2 (57.3%)`, or cancelled."""
    if end.get("cancelled"):
        return f"{end['event']} was cancelled"
    lines = end.get("standings") or []
    mine = next((s for s in lines if user is not None and user in (s.get("names") or [])), None)
    where = (
        f"place {mine['place']} ({mine['percent']:.1f}%)"
        if mine is not None
        else "not among the first 16 (`spades event` shows them all)"
    )
    return f"{end['event']} is over: {where}"
