"""Player statistics' messages: `stats` asks for an account's, `player_stats` answers.

Declared as in ``protocol.messages`` (one frozen dataclass each, registered by ``t``) and apart from
it because they are one concern (docs/protocol.md, Player statistics; the server's side is
``server.stats``). ``protocol.messages`` re-exports them. Only the envelope, the schema and the wire
types are imported here, never ``protocol.messages``, so there is no import cycle.
"""

from dataclasses import dataclass
from typing import Annotated

from protocol.envelope import Reply, Request, Sender, register
from protocol.schema import Doc, Range
from protocol.types import ClientKind, Count, Name

C, S = Sender.CLIENT, Sender.SERVER

#: A sum of milliseconds: more than a 32-bit count holds after a few weeks of thinking.
Millis = Annotated[int, Range(0, 2**53)]


@register("stats", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Stats(Request):
    """Ask for an account's player statistics, from the hands stored on this server. Answered
    with `player_stats`; `no_such_account` for a name no account has. Hands are counted after each hand,
    off the tables' tasks: the last hand of a game may be counted a moment after `game_over`.
    """

    name: Annotated[
        Name | None, Doc("the account (a person's or a bot's); nil for your own (log in first)")
    ] = None


@register("player_stats", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerStats(Reply):
    """One account's statistics. `contracts` counts the hands it made an ordinary bid (neither
    nil, nor Moe, nor a blind bid), `contracts_made` and `contracts_set` how its side's contract
    ended; `bags` the overtricks of those made (average bags: `bags / contracts`). A nil is made
    when its bidder takes no trick. `decision_ms / decisions` is its mean time a decision: from
    the previous action's write to its own, as the store stamped them. `dd_tricks_lost` covers
    only the `dd_hands` hands the server analysed double-dummy (four-handed Spades, when it had
    the time: docs/operations.md, "Player statistics").
    """

    name: Annotated[Name, Doc("the account name")]
    kind: Annotated[ClientKind, Doc("a bot or a person")]
    games: Annotated[Count, Doc("finished games it had a seat in at the end")]
    wins: Annotated[Count, Doc("of those, the ones it (its side) placed first in")]
    hands: Annotated[Count, Doc("hands played")]
    contracts: Annotated[Count, Doc("hands it made an ordinary bid")]
    contracts_made: Annotated[Count, Doc("of those, its side's contract made")]
    contracts_set: Annotated[Count, Doc("of those, its side's contract set")]
    bags: Annotated[Count, Doc("overtricks of its side's contracts made")]
    nil_tried: Annotated[Count, Doc("nil bids (plain or double)")]
    nil_made: Annotated[Count, Doc("nil bids made")]
    blind_nil_tried: Annotated[Count, Doc("blind nil bids")]
    blind_nil_made: Annotated[Count, Doc("blind nil bids made")]
    decisions: Annotated[Count, Doc("its decisions timed (bids, plays, exchanges, ...)")]
    decision_ms: Annotated[Millis, Doc("their time together, in milliseconds")]
    dd_hands: Annotated[
        Count, Doc("hands analysed double-dummy (the others, `hands - dd_hands`, were not)")
    ] = 0
    dd_tricks_lost: Annotated[
        Count, Doc("tricks its cards cost its side against perfect play, in those hands")
    ] = 0
