"""Every option of a `Ruleset` in words: what it is, which game it belongs to, when it matters, and
its values as a player reads them. One table, for every place that shows rules to people (the web
page's rules panels through `/presets.json`, the terminal client); docs/rules.md is the reference
with the sources. A test checks the table covers every field of `Ruleset`, and every word of every
enumerated option.

`rule_lines(ruleset)` is what a rules panel shows: the options of the ruleset's game that matter
under its other options (no blind nil's value when blind nil is off, no Hearts option in a Spades
game), each with its value in words.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from engine.ruleset import BID_RULES, HAND_TYPES, RANDOM_DEALER, Ruleset

SPADES: Final = ("spades",)
HEARTS: Final = ("hearts",)
BOTH: Final = ("spades", "hearts")


@dataclass(frozen=True)
class OptionDoc:
    """One option as a player reads it.

    `label`: a few words ("Nil is worth"); `about`: a sentence on what it does; `games`: the games it
    belongs to; `when`: other options and the values under which it matters (all must hold; an
    option absent from `when` does not matter); `words`: the words for particular values (every
    value of a word option, or a number's special values such as 0); `unit`: after a number
    ("points"); `omit_empty`: a list option that matters only when it lists something."""

    label: str
    about: str
    games: tuple[str, ...] = SPADES
    when: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    words: Mapping[str, str] = field(default_factory=dict)
    unit: str = ""
    omit_empty: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: how `/presets.json` carries it to the page."""
        return {
            "label": self.label,
            "about": self.about,
            "games": list(self.games),
            "when": {name: list(values) for name, values in self.when.items()},
            "words": dict(self.words),
            "unit": self.unit,
            "omit_empty": self.omit_empty,
        }


_BID_RULE_WORDS: Final[dict[str, str]] = {
    "free": "any bid",
    "suicide": "one partner of each side bids nil",
    "four_or_none": "one partner nil, the other 4 or more",
    "partnership_fourteen": "each side's bids total 7",
    "mirror": "bid the spades you hold",
    "bags_for_all": "everyone bids 1",
    "clubs_mirror": "bid the clubs you hold",
    "hearts_mirror": "bid the hearts you hold",
    "diamonds_mirror": "bid the diamonds you hold",
    "all_nil": "everyone bids nil",
    "all_blind": "everyone bids blind",
    "partnership_mirror": "the second partner bids what the first bid",
    "crazy": "the nine of spades bids nine, the rest nil",
    "royalty": "one per ace, king, queen and jack held",
}

_HAND_TYPE_WORDS: Final[dict[str, str]] = {
    "regular": "regular",
    "four_or_none": "four or none",
    "bags_for_all": "bags for all",
    "mirror": "mirror",
    "pressure": "pressure",
    "clubs_mirror": "clubs mirror",
    "partnership_fourteen": "partnership fourteen",
    "hearts_mirror": "hearts mirror",
    "all_nil": "all nil",
    "diamonds_mirror": "diamonds mirror",
    "all_blind": "all blind",
    "partnership_mirror": "partnership mirror",
    "crazy": "crazy",
    "nothing_but_spades": "nothing but spades",
    "royalty": "royalty",
}

ON: Final = (True,)

#: Every option of `Ruleset`, in its order.
OPTION_DOCS: Final[dict[str, OptionDoc]] = {
    # -- the game
    "game": OptionDoc(
        "Game", "Spades or Hearts.", BOTH, words={"spades": "Spades", "hearts": "Hearts"}
    ),
    "players": OptionDoc(
        "Players",
        "How many play; Spades is played in partnerships only four-handed.",
        BOTH,
    ),
    "target_score": OptionDoc(
        "Game to",
        "The game ends after the hand in which a side reaches this score; the higher score wins.",
        BOTH,
        words={"0": "no target"},
        unit="points",
    ),
    "max_hands": OptionDoc(
        "Hands",
        "The game is this many hands long at most; then the higher score wins.",
        BOTH,
        words={"0": "no limit"},
        unit="hands",
    ),
    "losing_floor_enabled": OptionDoc(
        "Losing floor", "A side whose score falls to the floor ends the game and loses.", BOTH
    ),
    "losing_floor": OptionDoc(
        "Floor",
        "The score at or below which a side loses.",
        BOTH,
        when={"losing_floor_enabled": ON},
        unit="points",
    ),
    "deck": OptionDoc(
        "Deck",
        "The cards dealt and the order of the trumps.",
        words={
            "standard": "52 cards, the ace of spades highest",
            "jokers": "54 cards: two jokers above the ace of spades",
            "deuces_high": "the four twos are the highest spades",
        },
    ),
    "first_dealer": OptionDoc(
        "First dealer",
        "Who deals the first hand; the deal then passes to the left.",
        BOTH,
        words={RANDOM_DEALER: "drawn from the first deal's seed"},
    ),
    # -- bidding
    "min_bid": OptionDoc("Lowest bid", "The smallest bid other than nil.", unit="tricks"),
    "max_bid": OptionDoc("Highest bid", "The largest bid.", unit="tricks"),
    "nil": OptionDoc("Nil", "A player may bid to take no trick at all."),
    "nil_value": OptionDoc(
        "Nil is worth",
        "Won by a nil bidder who takes no trick, lost by one who takes any.",
        when={"nil": ON},
        unit="points",
    ),
    "nil_tricks_help_partner": OptionDoc(
        "A nil bidder's tricks help the partner",
        "The tricks a nil bidder takes count toward the partner's bid (else they are bags only).",
        when={"nil": ON},
    ),
    "nil_scored_independently": OptionDoc(
        "A nil bidder's tricks count for nothing",
        "The tricks a nil bidder takes are neither the partner's contract nor bags.",
        when={"nil": ON},
    ),
    "double_nil": OptionDoc(
        "Both partners may bid nil", "Each nil is scored on its own.", when={"nil": ON}
    ),
    "blind_nil": OptionDoc("Blind nil", "A player may bid nil before looking at the cards."),
    "blind_nil_value": OptionDoc(
        "Blind nil is worth",
        "Won by a blind nil bidder who takes no trick, lost by one who takes any.",
        when={"blind_nil": ON},
        unit="points",
    ),
    "blind_nil_behind": OptionDoc(
        "Blind nil only when behind by",
        "The bidder's side must trail the best other side by at least this much.",
        when={"blind_nil": ON},
        words={"0": "allowed at any score"},
        unit="points",
    ),
    "blind_nil_exchange": OptionDoc(
        "Cards passed after a blind nil",
        "The blind nil bidder and the partner then swap this many cards face down.",
        when={"blind_nil": ON},
        words={"0": "none"},
        unit="cards",
    ),
    "blind_nil_exchange_order": OptionDoc(
        "Who passes first after a blind nil",
        "How the cards of that swap change hands.",
        when={"blind_nil": ON},
        words={
            "simultaneous": "both at once",
            "nil_first": "the nil bidder first, then the partner chooses what to return",
        },
    ),
    "blind_bids": OptionDoc(
        "Blind bids", "A player may bid a number of tricks before looking at the cards."
    ),
    "blind_bid_max": OptionDoc(
        "Highest blind bid", "The largest blind bid.", when={"blind_bids": ON}, unit="tricks"
    ),
    "blind_bid_bonus": OptionDoc(
        "Blind bid bonus",
        "Added to an exact blind bid, lost by one that falls short.",
        when={"blind_bids": ON},
        unit="points",
    ),
    "bid_rule": OptionDoc(
        "Bidding",
        "What each player may or must bid.",
        words={name: _BID_RULE_WORDS[name] for name in BID_RULES},
    ),
    "ten_for_200": OptionDoc(
        "10 for 200", "A side may bid to take 10 tricks for 200 points, or lose 200."
    ),
    "boston": OptionDoc(
        "Boston", "A side that bids all 13 tricks and takes them wins the game at once."
    ),
    "moe": OptionDoc(
        "Little and Big Moe",
        "Bids to win 6 tricks in a row (150 points) or 8 (300), made or lost.",
    ),
    "bemo": OptionDoc(
        "Bemo and Big Bemo",
        "Added to a bid: win the first 6 tricks (60 points) or the first 9 (90).",
    ),
    "no_spade_trumps": OptionDoc(
        "No trumps bids",
        'A bid may add "no trumps": its tricks are worth more, but winning one with a spade'
        " sets it.",
    ),
    "no_spade_trumps_value": OptionDoc(
        "A no-trumps trick is worth",
        "Points a trick of a no-trumps bid, made or set.",
        when={"no_spade_trumps": ON},
        unit="points",
    ),
    "two_player_double_nil": OptionDoc(
        "Two-handed double nil",
        "Declared before the draw: 200 points made, 100 lost.",
        when={"players": (2,)},
    ),
    "deficient_hands": OptionDoc(
        "Misdeals a player may call",
        "Hands a player may show before the side bids: the deal is dead and redealt.",
        words={
            "no_spades": "no spades",
            "one_spade": "one spade",
            "no_face_cards": "no face cards",
        },
    ),
    # -- dealing and play
    "face_up_cards": OptionDoc(
        "Cards dealt face up",
        "Cards of each hand everyone sees until they are played.",
        words={"0": "none"},
        unit="cards",
    ),
    "first_lead": OptionDoc(
        "First lead",
        "Who leads the hand's first trick.",
        words={
            "left_of_dealer": "the player on the dealer's left",
            "dealer": "the dealer",
            "lowest_club": "the lowest club, by whoever holds it",
        },
    ),
    "spades_break": OptionDoc(
        "Spades are broken",
        "Spades may not be led until they are broken (unless the leader holds only spades).",
        words={
            "trumped": "when a spade trumps another suit",
            "played": "when any spade is played",
        },
    ),
    "play_rule": OptionDoc(
        "Playing",
        "What a player must play beyond following suit.",
        words={
            "normal": "follow suit, else any card",
            "pressure": "a player out of the suit led must trump if able",
            "nothing_but_spades": "no spade while holding another suit",
        },
    ),
    "hand_schedule": OptionDoc(
        "Hand by hand",
        "Each hand's bidding and playing rule, in turn, over and over.",
        words={name: _HAND_TYPE_WORDS[name] for name in HAND_TYPES},
        omit_empty=True,
    ),
    "tram": OptionDoc("Claims", 'A player may claim the rest of the tricks ("the rest are mine").'),
    "tram_penalty": OptionDoc(
        "A wrong claim",
        "What a claim that does not hold costs.",
        when={"tram": ON},
        words={
            "exposed": "the claimer plays on with the cards face up",
            "forfeit_tricks": "the remaining tricks go to the other side",
            "forfeit_bid": "the claimer's side is set",
        },
    ),
    # -- scoring
    "bags": OptionDoc(
        "Bags",
        "Tricks taken over the bid.",
        words={
            "counted": "counted: enough of them cost a penalty",
            "last_digit": "counted in the score's last digit",
            "off": "not counted",
            "no_bags": "worth nothing and not counted",
        },
    ),
    "bag_limit": OptionDoc(
        "Bags to a penalty",
        "How many bags cost the penalty.",
        when={"bags": ("counted", "last_digit")},
        unit="bags",
    ),
    "bag_penalty": OptionDoc(
        "Bag penalty",
        "Taken off the score each time the bags reach the limit.",
        when={"bags": ("counted", "last_digit")},
        unit="points",
    ),
    "overtrick_points": OptionDoc(
        "A bag is worth",
        "Points each trick over the bid scores.",
        when={"bags": ("counted", "last_digit", "off")},
        unit="points",
    ),
    # -- Hearts
    "hearts_pass_cycle": OptionDoc(
        "Passing",
        "Where the cards go before each hand, in turn, over and over.",
        HEARTS,
        words={
            "left": "left",
            "right": "right",
            "across": "across",
            "none": "no pass",
        },
    ),
    "hearts_pass_count": OptionDoc(
        "Cards passed", "How many cards each player passes.", HEARTS, unit="cards"
    ),
    "hearts_no_points_first_trick": OptionDoc(
        "A clean first trick",
        "No heart and not the queen of spades on the first trick, unless nothing else is held.",
        HEARTS,
    ),
    "hearts_must_break": OptionDoc(
        "Hearts must be broken",
        "No heart may be led until a heart has been played (unless only hearts are held).",
        HEARTS,
    ),
    "hearts_queen_breaks": OptionDoc(
        "The queen of spades breaks hearts",
        "Playing the queen of spades breaks hearts too.",
        HEARTS,
        when={"hearts_must_break": ON},
    ),
    "hearts_moon": OptionDoc(
        "Shooting the moon",
        "Taking every heart and the queen of spades.",
        HEARTS,
        words={
            "off": "no bonus: the shooter takes 26",
            "add_to_others": "the shooter scores 0, everyone else 26",
            "subtract_self": "the shooter scores -26",
        },
    ),
    "hearts_jack_of_diamonds": OptionDoc(
        "The jack of diamonds", "Whoever takes the jack of diamonds scores -10.", HEARTS
    ),
}


@dataclass(frozen=True)
class RuleLine:
    """One line of a rules panel: the option, its label, its value in words, and what it does."""

    option: str
    label: str
    value: str
    about: str


def value_words(option: str, value: Any) -> str:
    """`value` of `option` as a player reads it: yes/no, the option's words, a number with its
    unit (every unit is a plural in s: "1 point"), a list's items in words ("none" for an empty
    list)."""
    doc = OPTION_DOCS[option]
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(value_words(option, item) for item in value) or "none"
    said = doc.words.get(str(value))
    if said is not None:
        return said
    if option == "first_dealer":
        return f"seat {value}"
    if isinstance(value, int):
        unit = doc.unit[:-1] if abs(value) == 1 else doc.unit  # 1 point, 2 points
        return f"{value} {unit}".strip()
    return str(value).replace("_", " ")


def applies(option: str, options: Mapping[str, Any]) -> bool:
    """Whether `option` matters in a game of these `options` (a `Ruleset.to_dict()`)."""
    doc = OPTION_DOCS[option]
    if str(options.get("game", "spades")) not in doc.games:
        return False
    if doc.omit_empty and not options.get(option):
        return False
    return all(options.get(name) in values for name, values in doc.when.items())


def rule_lines(ruleset: Ruleset) -> list[RuleLine]:
    """The options that matter in a game of `ruleset`, in the table's order, in words."""
    options = ruleset.to_dict()
    return [
        RuleLine(name, doc.label, value_words(name, options[name]), doc.about)
        for name, doc in OPTION_DOCS.items()
        if applies(name, options)
    ]
