"""The ruleset: one frozen, validated value holding every option of every variant, and the named presets.

Where the rules sources disagree (../shared/rules-sources/, summarised in docs/rules.md) the point is an
option here and each preset picks a side. A `Ruleset` is built only through validation: the constructor,
`Ruleset.from_preset(name, **overrides)`, `ruleset.with_options(**overrides)` and `Ruleset.from_dict(d)`
all raise `RulesetError` naming the offending option, and nothing else is created or changed.

Variants that change a rule (bidding constraints, play constraints, Crazy Spades hand types) are data:
a name here, an implementation looked up by that name (engine/bidding.py, engine/spades.py).
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Final, TypeAlias

from engine.errors import RulesetError

OptionValue: TypeAlias = bool | int | str | list[str]

GAMES: Final = ("spades", "hearts")
DECKS: Final = ("standard", "jokers", "deuces_high")
#: counted (000, 003), last_digit (001), off (not tracked; overtricks still score `overtrick_points`:
#: 003 three-handed), no_bags (003 "No Bags": overtricks neither scored nor tracked).
BAG_MODES: Final = ("counted", "last_digit", "off", "no_bags")
FIRST_LEADS: Final = ("left_of_dealer", "dealer", "lowest_club")
#: What breaks spades: `trumped` a spade played to a trick led in another suit, which it trumps (000,
#: 002, and 003 three-handed: such a trick is won by a spade); `played` any spade played to a trick, one
#: led from a hand of nothing but spades included (001, 003 two-handed). docs/rules.md cites each.
SPADES_BREAKS: Final = ("trumped", "played")
#: `first_dealer` is this word (drawn from the first deal's seed, docs/rules.md "The deal") or a seat.
RANDOM_DEALER: Final = "random"
PLAY_RULES: Final = ("normal", "pressure", "nothing_but_spades")
TRAM_PENALTIES: Final = ("exposed", "forfeit_tricks", "forfeit_bid")
EXCHANGE_ORDERS: Final = ("simultaneous", "nil_first")
DEFICIENT_CONDITIONS: Final = ("no_spades", "one_spade", "no_face_cards")
HEARTS_PASSES: Final = ("left", "right", "across", "none")
HEARTS_MOONS: Final = ("off", "add_to_others", "subtract_self")

#: Bidding constraints by name (implemented in engine/bidding.py). "free" is ordinary Spades bidding.
BID_RULES: Final = (
    "free",
    "suicide",
    "four_or_none",
    "partnership_fourteen",
    "mirror",
    "bags_for_all",
    "clubs_mirror",
    "hearts_mirror",
    "diamonds_mirror",
    "all_nil",
    "all_blind",
    "partnership_mirror",
    "crazy",
    "royalty",
)
#: Bid rules that speak of partners, so they need the four-handed partnership game.
PARTNERSHIP_BID_RULES: Final = frozenset(
    {"suicide", "four_or_none", "partnership_fourteen", "partnership_mirror"}
)

#: Crazy (progressive) Spades hand types from source 003: name -> (bid rule, play rule).
HAND_TYPES: Final[dict[str, tuple[str, str]]] = {
    "regular": ("free", "normal"),
    "four_or_none": ("four_or_none", "normal"),
    "bags_for_all": ("bags_for_all", "normal"),
    "mirror": ("mirror", "normal"),
    "pressure": ("free", "pressure"),
    "clubs_mirror": ("clubs_mirror", "normal"),
    "partnership_fourteen": ("partnership_fourteen", "normal"),
    "hearts_mirror": ("hearts_mirror", "normal"),
    "all_nil": ("all_nil", "normal"),
    "diamonds_mirror": ("diamonds_mirror", "normal"),
    "all_blind": ("all_blind", "normal"),
    "partnership_mirror": ("partnership_mirror", "normal"),
    "crazy": ("crazy", "normal"),
    "nothing_but_spades": ("free", "nothing_but_spades"),
    "royalty": ("royalty", "normal"),
}
#: The 15-hand progressive schedule in the order source 003 lists it.
CRAZY_SCHEDULE: Final = tuple(HAND_TYPES)


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every option of a game. Build with `from_preset`, `with_options` or `from_dict` (all validate).

    Construction validates too: an unknown, out-of-range or conflicting option raises `RulesetError`
    whose `option` names it.
    """

    # -- the game -----------------------------------------------------------------------------------
    game: str = "spades"
    players: int = 4
    target_score: int = 500  # 0 = no target (then max_hands ends the game)
    max_hands: int = 0  # 0 = unlimited; Crazy Spades plays 15
    losing_floor_enabled: bool = False
    losing_floor: int = -200  # a side at or below this (when enabled) ends the game and loses
    deck: str = "standard"  # standard | jokers (Joker Spades) | deuces_high (002)
    # "random" (000: drawn from the first deal's seed, so it can be checked once the seed is out) or a
    # seat that deals the first hand; `new_game(..., dealer=)` overrides it.
    first_dealer: int | str = RANDOM_DEALER
    # -- bidding ------------------------------------------------------------------------------------
    min_bid: int = 1  # smallest ordinary (non-nil) bid
    max_bid: int = 13
    nil: bool = True
    nil_value: int = 100
    nil_tricks_help_partner: bool = (
        False  # 000: a nil bidder's tricks do not help the partner's bid
    )
    nil_scored_independently: bool = (
        False  # 002: a nil bidder's tricks are neither contract nor bags
    )
    double_nil: bool = True  # both partners may bid nil (003), each scored on their own
    blind_nil: bool = False
    blind_nil_value: int = 100
    blind_nil_behind: int = 0  # the side must trail by at least this many points
    blind_nil_exchange: int = 0  # cards exchanged face down with the partner (0..3)
    blind_nil_exchange_order: str = "simultaneous"  # 003 simultaneous | 001 nil bidder first
    blind_bids: bool = False  # blind bids of 1..blind_bid_max (003)
    blind_bid_max: int = 7
    blind_bid_bonus: int = 100
    bid_rule: str = "free"
    ten_for_200: bool = False
    boston: bool = False
    moe: bool = False  # Little Moe (6 running tricks, 150) and Big Moe (8, 300)
    bemo: bool = False  # Bemo (first 6 tricks, 60) and Big Bemo (first 9, 90) on top of a bid
    no_spade_trumps: bool = False
    no_spade_trumps_value: int = 40  # 003: a made "no trumps" bid's points a trick ("(40 points)")
    two_player_double_nil: bool = False  # 003 two-handed: declared before the draw, +200 / -100
    deficient_hands: tuple[str, ...] = ()
    # -- dealing and play ---------------------------------------------------------------------------
    face_up_cards: int = 0
    first_lead: str = "left_of_dealer"
    spades_break: str = "trumped"
    play_rule: str = "normal"
    hand_schedule: tuple[str, ...] = ()  # Crazy Spades: a hand type per hand, cycling
    tram: bool = False
    tram_penalty: str = "forfeit_tricks"
    # -- scoring ------------------------------------------------------------------------------------
    bags: str = "counted"  # counted | last_digit (001) | off
    bag_limit: int = 10
    bag_penalty: int = 100
    overtrick_points: int = 1  # three-handed 003: -10 for each overtrick
    # -- Hearts (002; rules in docs/rules-hearts.md) ------------------------------------------------
    hearts_pass_cycle: tuple[str, ...] = ("left", "right", "across", "none")
    hearts_pass_count: int = 3
    # The defaults are 002's game; the `hearts-house` preset turns on what common servers add.
    hearts_no_points_first_trick: bool = False
    hearts_must_break: bool = False
    hearts_queen_breaks: bool = False
    hearts_moon: str = "off"
    hearts_jack_of_diamonds: bool = False

    def __post_init__(self) -> None:
        _validate(self)

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> "Ruleset":
        """The named preset with some options changed. Raises RulesetError (option "preset" if unknown)."""
        base = PRESETS.get(name)
        if base is None:
            raise RulesetError(
                "preset", f"unknown preset {option_name_shown(name)!r}; known: {', '.join(PRESETS)}"
            )
        return base.with_options(**overrides)

    def with_options(self, **overrides: Any) -> "Ruleset":
        """A copy with these options changed, validated. Raises RulesetError; `self` is unchanged."""
        known = {f.name for f in fields(self)}
        for name in overrides:
            if name not in known:
                raise RulesetError(option_name_shown(name), "no such option")
        coerced = {name: _coerce(name, value) for name, value in overrides.items()}
        return replace(self, **coerced)

    def to_dict(self) -> dict[str, OptionValue]:
        """Every option by name: bool, int, str or list of str (JSON and msgpack friendly)."""
        out: dict[str, OptionValue] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> "Ruleset":
        """The ruleset these options describe (missing options take the defaults). Raises RulesetError."""
        if not isinstance(data, Mapping):
            raise RulesetError("ruleset", "a ruleset is a mapping of option names to values")
        return cls().with_options(**{str(k): v for k, v in data.items()})

    @classmethod
    def from_stored(cls, data: Mapping[str, object]) -> "Ruleset":
        """The ruleset a stored `to_dict()` describes, whichever version stored it: `to_dict()` holds
        every option, so a stored one lacks only options added since, and those take the value that
        was the rule before they existed (`OPTIONS_ADDED`: seat 0 dealt first, a "no trumps" trick
        was 20), not today's default. For a game or a hand record kept across an upgrade; a table's
        overrides are `from_preset` / `with_options`. Raises RulesetError."""
        if not isinstance(data, Mapping):
            raise RulesetError("ruleset", "a ruleset is a mapping of option names to values")
        return cls.from_dict({**OPTIONS_ADDED, **data})

    # -- derived facts ------------------------------------------------------------------------------
    @property
    def partnerships(self) -> bool:
        """True for four-handed Spades, where seats {0, 2} and {1, 3} are partners."""
        return self.game == "spades" and self.players == 4

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The scoring sides: teams in partnership Spades, otherwise each seat alone."""
        if self.partnerships:
            return ((0, 2), (1, 3))
        return tuple((seat,) for seat in range(self.players))

    @property
    def tricks_per_hand(self) -> int:
        """13, except three-handed Spades (17 each from 51 cards)."""
        if self.game == "spades" and self.players == 3:
            return 17
        return 13 if self.game == "spades" else 52 // self.players

    def hand_type(self, hand_number: int) -> str:
        """The Crazy Spades hand type of hand `hand_number` (1-based), or "" when there is no schedule."""
        if not self.hand_schedule:
            return ""
        return self.hand_schedule[(hand_number - 1) % len(self.hand_schedule)]

    def rules_for_hand(self, hand_number: int) -> tuple[str, str]:
        """(bid rule, play rule) in force for this hand, following the schedule when there is one."""
        kind = self.hand_type(hand_number)
        if kind:
            return HAND_TYPES[kind]
        return self.bid_rule, self.play_rule


#: The longest list each list option takes (docs/rules.md): a table's options are echoed in every
#: listing, so none may grow without bound. Every other option is a bounded number or one of a few words.
MAX_LIST_LENGTHS: Final[dict[str, int]] = {
    "deficient_hands": len(DEFICIENT_CONDITIONS),  # each condition at most once
    "hand_schedule": 32,  # Crazy Spades has 15
    "hearts_pass_cycle": 16,  # 002 has 4
}
_TUPLE_OPTIONS: Final = frozenset(MAX_LIST_LENGTHS)
#: Three-handed Hearts passes at most this many cards: C(17, 3) = 680 choices fit a frame.
MAX_THREE_HANDED_PASS: Final = 3
#: How much of a refused value or option name an error message repeats.
_SHOWN_CHARS: Final = 40


def _shown(value: object) -> str:
    """`repr(value)`, cut short: an error message never repeats a huge value back to its sender."""
    text = repr(value) if not isinstance(value, (list, tuple)) or len(value) <= 8 else None
    if text is None:
        text = f"a list of {len(value)} items"  # type: ignore[arg-type]
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def option_name_shown(name: object) -> str:
    """An option or preset name as an error repeats it (cut short when it is too long to be one)."""
    name = str(name)
    return name if len(name) <= _SHOWN_CHARS else name[: _SHOWN_CHARS - 3] + "..."


def _coerce(name: str, value: object) -> Any:
    """Lists from the wire become tuples; everything else is checked by `_validate`."""
    if name in _TUPLE_OPTIONS and isinstance(value, list):
        return tuple(value)
    return value


def _check_type(ruleset: Ruleset) -> None:
    for f in fields(ruleset):
        value = getattr(ruleset, f.name)
        default = f.default
        if f.name == "first_dealer":
            if value != RANDOM_DEALER and (isinstance(value, bool) or not isinstance(value, int)):
                raise RulesetError(
                    f.name, f"must be 'random' or a seat number, not {_shown(value)}"
                )
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise RulesetError(f.name, f"must be true or false, not {_shown(value)}")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise RulesetError(f.name, f"must be a whole number, not {_shown(value)}")
        elif isinstance(default, str):
            if not isinstance(value, str):
                raise RulesetError(f.name, f"must be a string, not {_shown(value)}")
        elif isinstance(default, tuple):
            if not isinstance(value, tuple):
                raise RulesetError(f.name, f"must be a list of strings, not {_shown(value)}")
            longest = MAX_LIST_LENGTHS[f.name]
            if len(value) > longest:
                raise RulesetError(f.name, f"takes at most {longest} entries, not {len(value)}")
            if not all(isinstance(v, str) for v in value):
                raise RulesetError(f.name, f"must be a list of strings, not {_shown(value)}")


def _one_of(ruleset: Ruleset, name: str, allowed: tuple[str, ...]) -> None:
    value = getattr(ruleset, name)
    if value not in allowed:
        raise RulesetError(name, f"must be one of {', '.join(allowed)}, not {_shown(value)}")


def _in_range(ruleset: Ruleset, name: str, low: int, high: int) -> None:
    value = getattr(ruleset, name)
    if not low <= value <= high:
        raise RulesetError(name, f"must be from {low} to {high}, not {value}")


def _validate(r: Ruleset) -> None:
    """Raise RulesetError naming the first bad option; checks types, ranges, then conflicts."""
    _check_type(r)
    _one_of(r, "game", GAMES)
    _one_of(r, "deck", DECKS)
    _one_of(r, "bags", BAG_MODES)
    _one_of(r, "first_lead", FIRST_LEADS)
    _one_of(r, "spades_break", SPADES_BREAKS)
    _one_of(r, "play_rule", PLAY_RULES)
    _one_of(r, "tram_penalty", TRAM_PENALTIES)
    _one_of(r, "blind_nil_exchange_order", EXCHANGE_ORDERS)
    _one_of(r, "bid_rule", BID_RULES)
    _one_of(r, "hearts_moon", HEARTS_MOONS)
    if r.players not in (2, 3, 4):
        raise RulesetError("players", f"must be 2, 3 or 4, not {r.players}")
    if r.first_dealer != RANDOM_DEALER and not 0 <= int(r.first_dealer) < r.players:
        raise RulesetError(
            "first_dealer",
            f"must be 'random' or a seat from 0 to {r.players - 1}, not {r.first_dealer}",
        )
    for condition in r.deficient_hands:
        if condition not in DEFICIENT_CONDITIONS:
            raise RulesetError(
                "deficient_hands",
                f"{_shown(condition)} is not a condition; use {', '.join(DEFICIENT_CONDITIONS)}",
            )
    if len(set(r.deficient_hands)) != len(r.deficient_hands):
        raise RulesetError("deficient_hands", "names a condition twice")
    for kind in r.hand_schedule:
        if kind not in HAND_TYPES:
            raise RulesetError("hand_schedule", f"{_shown(kind)} is not a hand type")
    for direction in r.hearts_pass_cycle:
        if direction not in HEARTS_PASSES:
            raise RulesetError("hearts_pass_cycle", f"{_shown(direction)} is not a pass direction")
    if not r.hearts_pass_cycle:
        raise RulesetError("hearts_pass_cycle", "needs at least one entry (use 'none')")
    _in_range(r, "target_score", 0, 100_000)
    _in_range(r, "max_hands", 0, 1000)
    _in_range(r, "losing_floor", -100_000, 0)
    _in_range(r, "min_bid", 1, r.tricks_per_hand)
    _in_range(r, "max_bid", r.min_bid, r.tricks_per_hand)
    _in_range(r, "nil_value", 0, 1000)
    _in_range(r, "blind_nil_value", 0, 1000)
    _in_range(r, "blind_nil_behind", 0, 10_000)
    _in_range(r, "blind_nil_exchange", 0, 3)
    _in_range(r, "blind_bid_max", 1, r.tricks_per_hand)
    _in_range(r, "blind_bid_bonus", 0, 1000)
    _in_range(r, "bag_limit", 1, 100)
    _in_range(r, "bag_penalty", 0, 1000)
    _in_range(r, "overtrick_points", -100, 100)
    _in_range(r, "face_up_cards", 0, 4)
    _in_range(r, "hearts_pass_count", 1, 4)
    _in_range(r, "no_spade_trumps_value", 10, 100)
    if r.target_score == 0 and r.max_hands == 0:
        raise RulesetError("target_score", "a game needs a target score or a number of hands")
    if r.game == "hearts":
        if r.players == 2:
            raise RulesetError("players", "Hearts is played by 3 or 4")
        if r.players == 3 and "across" in r.hearts_pass_cycle:
            raise RulesetError("hearts_pass_cycle", "three players cannot pass across")
        if r.players == 3 and r.hearts_pass_count > MAX_THREE_HANDED_PASS:
            # Every choice of 4 from 17 cards is 2380 legal actions, a `your_turn` of about 71 KB:
            # more than a frame may hold (docs/protocol.md, "Limits and clocks").
            raise RulesetError(
                "hearts_pass_count",
                f"three players pass at most {MAX_THREE_HANDED_PASS} cards "
                "(the choices of 4 from 17 do not fit in one message)",
            )
        if r.deck != "standard":
            raise RulesetError("deck", "Hearts uses the standard deck")
        return
    _validate_spades(r)


def _validate_spades(r: Ruleset) -> None:
    partners = r.partnerships
    if r.nil_tricks_help_partner and r.nil_scored_independently:
        raise RulesetError(
            "nil_scored_independently",
            "a nil scored independently cannot also count its tricks for the partner",
        )
    if r.bags == "last_digit" and r.overtrick_points != 1:
        raise RulesetError("bags", "last-digit bags need overtricks worth exactly 1 point")
    if r.deck == "jokers" and r.players != 4:
        raise RulesetError("deck", "Joker Spades is four-handed")
    if not partners:
        if r.blind_nil_exchange:
            raise RulesetError("blind_nil_exchange", "exchanges are between partners")
        if r.bid_rule in PARTNERSHIP_BID_RULES:
            raise RulesetError("bid_rule", f"{r.bid_rule} needs partnerships (4 players)")
        for kind in r.hand_schedule:
            if HAND_TYPES[kind][0] in PARTNERSHIP_BID_RULES:
                raise RulesetError("hand_schedule", f"{kind} needs partnerships (4 players)")
        for name in ("boston", "moe", "bemo", "ten_for_200", "no_spade_trumps"):
            if getattr(r, name):
                raise RulesetError(name, "is a partnership bid (4 players)")
    if r.two_player_double_nil and r.players != 2:
        raise RulesetError("two_player_double_nil", "is a two-handed rule")
    if r.players == 2 and (r.blind_nil or r.blind_bids):
        raise RulesetError(
            "blind_nil" if r.blind_nil else "blind_bids", "two-handed Spades has double nil"
        )
    if r.players == 2 and r.face_up_cards:
        raise RulesetError("face_up_cards", "two-handed Spades has no deal to turn up")
    if r.blind_nil_exchange and not r.blind_nil:
        raise RulesetError("blind_nil_exchange", "needs blind_nil")
    if r.blind_nil and not r.nil:
        raise RulesetError("blind_nil", "needs nil")
    if r.ten_for_200 and r.max_bid < 10:
        raise RulesetError("ten_for_200", "needs max_bid of at least 10")


# Presets are overrides of the defaults above, kept as data; docs/rules.md explains each.
_PRESET_OPTIONS: Final[dict[str, dict[str, Any]]] = {
    # 000 (pagat): nil's tricks are bags but do not help the partner; dealer's left leads, no spade.
    "standard": {},
    # 001 (Yahoo!): nil's tricks help the partner, blind nil 200 when 100 behind with a 2-card swap,
    # bags by the score's last digit, dealer leads.
    "yahoo": {
        "nil_tricks_help_partner": True,
        "blind_nil": True,
        "blind_nil_value": 200,
        "blind_nil_behind": 100,
        "blind_nil_exchange": 2,
        "blind_nil_exchange_order": "nil_first",
        "bags": "last_digit",
        "first_lead": "dealer",
        "spades_break": "played",  # "until someone has played one on a trick"
    },
    "suicide": {
        "nil_tricks_help_partner": True,
        "bags": "last_digit",
        "first_lead": "dealer",
        "spades_break": "played",
        "bid_rule": "suicide",
    },
    "double-nil-passing": {
        "nil_tricks_help_partner": True,
        "blind_nil": True,
        "blind_nil_value": 200,
        "blind_nil_behind": 200,
        "blind_nil_exchange": 2,
        "blind_nil_exchange_order": "nil_first",
        "bags": "last_digit",
        "first_lead": "dealer",
        "spades_break": "played",  # "until someone has played one on a trick"
    },
    # 003 Joker Spades: BJ > LJ > AS, the dealer takes the last two cards and discards two.
    "joker": {"deck": "jokers"},
    # 002: deuces high, nil scored on its own, blind nil worth 100.
    "deuces-high": {
        "deck": "deuces_high",
        "nil_scored_independently": True,
        "blind_nil": True,
        "blind_nil_value": 100,
    },
    "four-or-none": {"bid_rule": "four_or_none"},
    "partnership-fourteen": {"bid_rule": "partnership_fourteen"},
    "mirror": {"bid_rule": "mirror"},
    "crazy": {
        "hand_schedule": CRAZY_SCHEDULE,
        "max_hands": 15,
        "target_score": 0,
    },
    # 003 three-handed: 17 cards each, one set aside, 2C (else 3C) leads, each overtrick -10.
    "three-player": {
        "players": 3,
        "max_bid": 17,
        "nil": False,
        "first_lead": "lowest_club",
        "spades_break": "trumped",
        "bags": "off",
        "overtrick_points": -10,
    },
    # 003 two-handed: the draw-and-discard deal; nil, and double nil declared before the draw;
    # spades may be led once "a spade has previously been played to a trick during this hand".
    "two-player": {"players": 2, "two_player_double_nil": True, "spades_break": "played"},
    # 002's Hearts as written: the Hearts options' defaults.
    "hearts": {"game": "hearts", "target_score": 100},
    # What most Hearts servers add to 002 (docs/rules-hearts.md): none of it is in the sources.
    "hearts-house": {
        "game": "hearts",
        "target_score": 100,
        "hearts_no_points_first_trick": True,
        "hearts_must_break": True,
        "hearts_moon": "add_to_others",
    },
}

#: Options added after rulesets were first stored, with the value each had before it existed: what a
#: stored ruleset without it meant (`Ruleset.from_stored`). Add to it with every new option.
OPTIONS_ADDED: Final[dict[str, OptionValue]] = {
    "first_dealer": 0,
    "no_spade_trumps_value": 20,
}

#: One line per preset, for listings and menus: what it plays and from which rules source, so a
#: player can tell the presets apart before sitting down (docs/rules.md, "Presets").
PRESET_DESCRIPTIONS: Final[dict[str, str]] = {
    "standard": "Spades as pagat gives it (source 000): nil, bags, 500 to win",
    "yahoo": "Yahoo! Spades (source 001): blind nil for 200, bags by the score's last digit",
    "suicide": "Yahoo! suicide Spades (source 001): each side must have a nil bidder",
    "double-nil-passing": "Yahoo! double-nil passing (source 001): blind nil 200 behind, 2-card swap",
    "joker": "Joker Spades (source 003): two jokers above the ace of spades",
    "deuces-high": "Deuces High Spades (source 002): the four twos are the highest spades",
    "four-or-none": "Four or None Spades (source 003): one partner nil, the other 4 or more",
    "partnership-fourteen": "Partnership Fourteen Spades (source 003): each side bids exactly 7",
    "mirror": "Mirror Spades (source 003): bid the number of spades you hold",
    "crazy": "Crazy Spades (source 003): 15 hands, each with its own bidding rule",
    "three-player": "Three-handed Spades (source 003): 17 cards each, every player alone",
    "two-player": "Two-handed Spades (source 003): draw-and-discard, no deal",
    "hearts": "Hearts exactly as source 002 plays it: no first-trick or breaking rule, no moon bonus",
    "hearts-house": "Hearts with house rules (not in the sources): clean first trick, hearts break, "
    "moon +26 to others",
}


def _build_presets() -> dict[str, Ruleset]:
    built: dict[str, Ruleset] = {}
    for name, options in _PRESET_OPTIONS.items():
        built[name] = Ruleset().with_options(**options)
    return built


PRESETS: Final[dict[str, Ruleset]] = _build_presets()


def describe_preset(name: str) -> str:
    """The preset's one-line description. Raises RulesetError("preset") for an unknown name."""
    description = PRESET_DESCRIPTIONS.get(name)
    if description is None:
        raise RulesetError(
            "preset", f"unknown preset {option_name_shown(name)!r}; known: {', '.join(PRESETS)}"
        )
    return description


def preset_name(ruleset: Ruleset) -> str | None:
    """The name of the preset equal to this ruleset, if any."""
    for name, preset in PRESETS.items():
        if preset == ruleset:
            return name
    return None
