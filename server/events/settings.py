"""How an event plays: its format, rounds, boards, rules and clocks (a value stored as JSON).

Pure: no trio, no IO, no clock. `EventSettings.validate` says in one sentence what is wrong with a
host's choice; `to_json`/`from_json` are the stored form (the events table's settings column), and
`from_json` validates, so a stored value that no longer makes sense is refused with the same
sentences rather than half-read.

The boards of a round are a ladder `BoardSet` (`server.ladder.duplicate`) whose secret is
SHA-256(event secret || round number): every table of the round plays the same deals from the same
dealer, and a restart deals them again exactly.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.errors import EngineError
from engine.ruleset import Ruleset
from server.ladder.duplicate import BoardSet


class EventFormat(StrEnum):
    """How entrants meet. See docs/events.md ("Formats")."""

    SWISS_PAIRS = "swiss_pairs"  # fixed partnerships, N rounds, paired by standings
    SWISS_INDIVIDUAL = "swiss_individual"  # one player per entrant, partners rotate
    KNOCKOUT_PAIRS = "knockout_pairs"  # fixed partnerships in a seeded bracket


class EntryKind(StrEnum):
    """Who may register."""

    PEOPLE = "people"
    BOTS = "bots"
    BOTH = "both"


#: Bounds a host may choose within (each refusal names the bound).
MAX_ROUNDS = 20
MAX_BOARDS = 26  # a round of more than 26 deals is a day, not a round
MIN_ENTRANTS = 4
MAX_ENTRANTS = 256
MAX_TURN_MS = 600_000  # ten minutes a decision
MIN_HUMAN_TURN_MS = 1_000
MIN_BOT_TURN_MS = 100
MAX_GRACE_S = 3600.0
MAX_ROUND_GAP_S = 3600.0
#: A knockout match tied on boards won and on margin plays up to this many more boards, one at a
#: time (sudden death); still tied after them, the higher seed goes through.
MAX_EXTRA_BOARDS = 3


def knockout_rounds(entrants: int) -> int:
    """The rounds of a bracket for `entrants` pairs: log2 of the field rounded up to a power of
    two (at least one round: two pairs play a final)."""
    return max(1, math.ceil(math.log2(max(entrants, 2))))


@dataclass(frozen=True)
class EventSettings:
    """How an event plays. Build it, then `validate()` (or read it with `from_json`, which does).

    `rounds` is the number of Swiss rounds; a knockout's follow from its field (`rounds_for`), so a
    knockout is given `rounds=0`. `max_entrants` counts entrants: pairs in the pairs formats,
    players in the individual one. Clocks are the table's (`TableConfig`): `human_turn_ms` and
    `bot_turn_ms` a decision, `grace_s` a dropped seat's reconnect grace; `no_show_grace` is how
    long an entrant has to take its seat once its round's tables open, `round_gap` how long the
    pairing of a round is shown before its tables open. `registration_opens` is when registration
    opens, Unix seconds (0: as soon as the event is announced); it closes at the start.
    """

    format: EventFormat
    rounds: int
    boards: int
    preset: str = "standard"
    options: dict[str, Any] = field(default_factory=dict)
    human_turn_ms: int = 30_000
    bot_turn_ms: int = 5_000
    grace_s: float = 120.0
    no_show_grace: float = 120.0
    entry: EntryKind = EntryKind.BOTH
    max_entrants: int = 64
    round_gap: float = 10.0
    registration_opens: float = 0.0

    # ------------------------------------------------------------------ validation

    def validate(self) -> None:
        """Raise `ValueError` with one sentence naming the first mistake; return when sound."""
        if not isinstance(self.format, EventFormat):
            raise ValueError(
                f"format must be one of {', '.join(f.value for f in EventFormat)}, "
                f"not {self.format!r}"
            )
        if not isinstance(self.entry, EntryKind):
            raise ValueError(
                f"entry must be one of {', '.join(e.value for e in EntryKind)}, not {self.entry!r}"
            )
        _int("rounds", self.rounds)
        if self.format is EventFormat.KNOCKOUT_PAIRS:
            if self.rounds != 0:
                raise ValueError(
                    "a knockout's rounds follow from its field (log2 of the pairs rounded up to a "
                    f"power of two): give rounds 0, not {self.rounds}"
                )
        elif not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be 1 to {MAX_ROUNDS}, not {self.rounds}")
        _int("boards", self.boards)
        if not 1 <= self.boards <= MAX_BOARDS:
            raise ValueError(f"boards must be 1 to {MAX_BOARDS} a round, not {self.boards}")
        _int("max_entrants", self.max_entrants)
        if not MIN_ENTRANTS <= self.max_entrants <= MAX_ENTRANTS:
            raise ValueError(
                f"max_entrants must be {MIN_ENTRANTS} to {MAX_ENTRANTS}, not {self.max_entrants}"
            )
        if self.format is EventFormat.SWISS_INDIVIDUAL and self.max_entrants % 4:
            raise ValueError(
                "an individual event seats players four to a table: max_entrants must be a "
                f"multiple of 4, not {self.max_entrants}"
            )
        _int("human_turn_ms", self.human_turn_ms)
        if not MIN_HUMAN_TURN_MS <= self.human_turn_ms <= MAX_TURN_MS:
            raise ValueError(
                f"human_turn_ms must be {MIN_HUMAN_TURN_MS} to {MAX_TURN_MS}, "
                f"not {self.human_turn_ms}"
            )
        _int("bot_turn_ms", self.bot_turn_ms)
        if not MIN_BOT_TURN_MS <= self.bot_turn_ms <= MAX_TURN_MS:
            raise ValueError(
                f"bot_turn_ms must be {MIN_BOT_TURN_MS} to {MAX_TURN_MS}, not {self.bot_turn_ms}"
            )
        _seconds("grace_s", self.grace_s, MAX_GRACE_S)
        _seconds("no_show_grace", self.no_show_grace, MAX_GRACE_S)
        _seconds("round_gap", self.round_gap, MAX_ROUND_GAP_S)
        opens = self.registration_opens
        if isinstance(opens, bool) or not isinstance(opens, float) or not math.isfinite(opens):
            raise ValueError(f"registration_opens must be a time in Unix seconds, not {opens!r}")
        if opens < 0:
            raise ValueError(f"registration_opens must be 0 (at once) or a time, not {opens}")
        if not isinstance(self.preset, str) or not self.preset:
            raise ValueError("preset must name a preset (standard, for one)")
        if not isinstance(self.options, dict) or not all(isinstance(k, str) for k in self.options):
            raise ValueError("options must be a map of option names to values")
        self.ruleset()

    def ruleset(self) -> Ruleset:
        """The rules of every table of the event; raises `ValueError` (a `RulesetError` for an
        option the engine refuses) for rules an event cannot use."""
        try:
            ruleset = Ruleset.from_preset(self.preset, **self.table_options())
        except EngineError as exc:
            # RulesetError is a ValueError already; any other refusal of the engine is said the same
            # way, so a caller catches one type.
            if isinstance(exc, ValueError):
                raise
            raise ValueError(exc.message) from None
        if ruleset.players != 4 or not ruleset.partnerships:
            raise ValueError(
                f"an event needs four players in two partnerships; preset {self.preset!r} with "
                "these options seats "
                + (f"{ruleset.players} players" if ruleset.players != 4 else "no partnerships")
            )
        return ruleset

    def table_options(self) -> dict[str, Any]:
        """The preset's options with the event's boards as a fixed number of hands (no target
        score) and a fixed first dealer: a board is the same deal from the same dealer at every
        table of its round (as `LadderSettings.table_options`)."""
        return {**self.options, "target_score": 0, "max_hands": self.boards, "first_dealer": 0}

    def rounds_for(self, entrants: int) -> int:
        """How many rounds the event plays with `entrants` entrants (house ones included)."""
        if self.format is EventFormat.KNOCKOUT_PAIRS:
            return knockout_rounds(entrants)
        return self.rounds

    def board_set(self, secret: bytes, round_no: int) -> BoardSet:
        """Round `round_no`'s deals: SHA-256(event secret || round) as a `BoardSet` secret. Deal
        `i` (0-based) is board `i + 1`; a knockout's extra boards are deals `boards`, `boards + 1`,
        ... of the same set."""
        digest = hashlib.sha256(secret + round_no.to_bytes(8, "big")).digest()
        return BoardSet(self.boards, digest)

    # ------------------------------------------------------------------ stored form

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format.value,
            "rounds": self.rounds,
            "boards": self.boards,
            "preset": self.preset,
            "options": dict(self.options),
            "human_turn_ms": self.human_turn_ms,
            "bot_turn_ms": self.bot_turn_ms,
            "grace_s": self.grace_s,
            "no_show_grace": self.no_show_grace,
            "entry": self.entry.value,
            "max_entrants": self.max_entrants,
            "round_gap": self.round_gap,
            "registration_opens": self.registration_opens,
        }

    @classmethod
    def from_json(cls, data: Any) -> EventSettings:
        """Read (and validate) the stored form; raises `ValueError` with a sentence for a value
        that is not one. Keys left out take their defaults; an unknown key is refused."""
        if not isinstance(data, dict):
            raise ValueError("event settings must be a map")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ValueError(f"unknown event setting {unknown[0]!r}")
        for key in ("format", "rounds", "boards"):
            if key not in data:
                raise ValueError(f"event settings need {key!r}")
        try:
            fmt = EventFormat(data["format"])
        except ValueError:
            raise ValueError(
                f"format must be one of {', '.join(f.value for f in EventFormat)}, "
                f"not {data['format']!r}"
            ) from None
        values = dict(data, format=fmt)
        if "entry" in data:
            try:
                values["entry"] = EntryKind(data["entry"])
            except ValueError:
                raise ValueError(
                    f"entry must be one of {', '.join(e.value for e in EntryKind)}, "
                    f"not {data['entry']!r}"
                ) from None
        for key in ("grace_s", "no_show_grace", "round_gap", "registration_opens"):
            # JSON may carry a whole number of seconds as an int; the field is a float.
            if isinstance(values.get(key), int) and not isinstance(values[key], bool):
                values[key] = float(values[key])
        if "options" in values and isinstance(values["options"], dict):
            values["options"] = dict(values["options"])
        settings = cls(**values)
        settings.validate()
        return settings


def _int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")


def _seconds(name: str, value: object, most: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number of seconds, not {value!r}")
    if not (0 <= value <= most) or math.isnan(value):
        raise ValueError(f"{name} must be 0 to {most:g} seconds, not {value!r}")
