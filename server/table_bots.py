"""The built-in bots of one table: who plays a seat in-process, and what plays for a late seat.

A table seats three kinds of in-process bot, all `server.seats.BuiltinBot`s (peers of the table, like a
remote bot): the bots it was opened with (`TableConfig.bots`, the server's built-in bot), its policy's
house bots (the ladder's), and the fallback bot for a seat whose player has gone for good. Separately,
the fallback *decider* plays one move for a seat whose clock ran out. Used by the table task alone.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Final

import trio

from engine.actions import Action as EngineAction
from engine.game import Game
from engine.views import SeatView
from protocol.types import BotKind
from server.accounts import Account
from server.seating import SeatState
from server.seats import BuiltinBot, Decider, Thinker, make_decider
from server.table_commands import ActCommand, TableConfig
from server.table_policy import TablePolicy

BotAccounts = Callable[[str], Awaitable[Account]]  # name -> the account of a built-in bot

#: The bot each kind a client may ask for (`create_table.bot`) seats, as a `bots.registry` spec.
#: The search budgets are the server's, never the client's: a decision costs at most what the
#: search bot spends on it (`ms` a decision on average over the hand, a bid up to three times
#: that), in a worker thread of `decide_off_loop`'s pool, abandoned at the seat's deadline.
#: 50 ms keeps three search bots' hand at a few seconds of thinking; 200 ms (the search bot's own
#: default) is about a point a hand stronger (docs/bots.md, "Twice the time") at four times that.
BOT_SPECS: Final[dict[BotKind, str]] = {
    BotKind.RANDOM: "random",
    BotKind.HEURISTIC: "heuristic",
    BotKind.SEARCH_FAST: "search,ms=50",
    BotKind.SEARCH: "search,ms=200",
}


def kind_of(spec: str) -> BotKind | None:
    """The kind a spec seats (the server's configured built-in bot may be one), or None."""
    for kind, known in BOT_SPECS.items():
        if spec in (known, kind.value):
            return kind
    return None


class TableBots:
    """Seats a table's built-in bots in its nursery, each answering into its inbox."""

    def __init__(
        self,
        config: TableConfig,
        policy: TablePolicy,
        bot_account: BotAccounts,
        inbox: trio.MemorySendChannel[ActCommand],
        think: Thinker,
    ) -> None:
        self.config = config
        self.policy = policy
        self.bot_account = bot_account
        self.inbox = inbox
        self.think = think
        self.nursery: trio.Nursery | None = None  # the table's, once its task runs
        self.fallback: Decider | None = None
        self.fallback_name = ""

    def prepare_fallback(self, game: Game) -> None:
        """The decider that plays for a late seat, for this game's rules (again after a restore)."""
        wanted = self.config.fallback_bot
        used, decide = make_decider(wanted, secrets.randbits(64), game.ruleset)
        # A fallback that cannot load is the engine's first legal action, and we say so.
        self.fallback = decide if used == wanted else None
        self.fallback_name = f"{used} bot" if self.fallback is not None else "first legal action"

    async def seat_planned(self, game: Callable[[], Game], state: SeatState, seat: int) -> None:
        """The bot this seat was opened with, if any: the policy's house bot, or the table's own."""
        house = self.policy.house_seat(seat)
        if house is not None:
            await self.seat(game, state, seat, house.spec, house.name)
        elif seat in self.config.bots:
            kind = self.config.bot_kind
            await self.seat(game, state, seat, self.config.builtin_bot, None, kind=kind)

    async def seat_fallback(self, game: Callable[[], Game], state: SeatState, seat: int) -> None:
        """The fallback bot plays the seat from now on (its account stays: the results are its)."""
        state.abandoned = True
        name = f"fallback:{self.config.fallback_bot}"
        await self.seat(game, state, seat, self.config.fallback_bot, name)

    async def seat(
        self,
        game: Callable[[], Game],
        state: SeatState,
        seat: int,
        spec: str,
        name: str | None,
        *,
        kind: str | None = None,
    ) -> None:
        """Seat the sample bot `spec` at `seat`, deciding on what that seat may see of `game()`.
        `kind`: the `BotKind` it was asked as, which names its account (`bot:search_fast`) and is
        listed with the seat; None when `spec` did not load (the seat plays at random instead)."""
        used, decide = make_decider(spec, secrets.randbits(64), game().ruleset)
        if used != spec:
            kind = None
        state.bot_kind = kind
        if state.account is None:
            state.account = await self.bot_account(f"bot:{kind or used}")

        def view_of() -> tuple[SeatView, list[EngineAction]]:
            now = game()
            return now.view(seat), now.legal_actions(seat)

        bot = BuiltinBot(
            seat=seat,
            name=name if name is not None else f"bot:{used}",
            inbox=self.inbox.clone(),
            decide=decide,
            view_of=view_of,
            think=self.think,
        )
        state.bot = bot
        state.holder = bot
        state.dropped_at = None
        state.told_legal = None
        assert self.nursery is not None, "the table's task is not running"
        self.nursery.start_soon(bot.run)
