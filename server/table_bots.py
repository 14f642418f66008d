"""The built-in bots of one table: who plays a seat in-process, and what plays for a late seat.

A table seats three kinds of in-process bot, all `server.seats.BuiltinBot`s (peers of the table, like a
remote bot): the bots it was opened with (`TableConfig.bots`, the server's built-in bot), its policy's
house bots (the ladder's), and the fallback bot for a seat whose player has gone for good. Separately,
the fallback *decider* plays one move for a seat whose clock ran out. Used by the table task alone.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable

import trio

from engine.actions import Action as EngineAction
from engine.game import Game
from engine.views import SeatView
from server.accounts import Account
from server.seating import SeatState
from server.seats import BuiltinBot, Decider, Thinker, make_decider
from server.table_commands import ActCommand, TableConfig
from server.table_policy import TablePolicy

BotAccounts = Callable[[str], Awaitable[Account]]  # name -> the account of a built-in bot


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
            await self.seat(game, state, seat, self.config.builtin_bot, None)

    async def seat_fallback(self, game: Callable[[], Game], state: SeatState, seat: int) -> None:
        """The fallback bot plays the seat from now on (its account stays: the results are its)."""
        state.abandoned = True
        name = f"fallback:{self.config.fallback_bot}"
        await self.seat(game, state, seat, self.config.fallback_bot, name)

    async def seat(
        self, game: Callable[[], Game], state: SeatState, seat: int, spec: str, name: str | None
    ) -> None:
        """Seat the sample bot `spec` at `seat`, deciding on what that seat may see of `game()`."""
        used, decide = make_decider(spec, secrets.randbits(64), game().ruleset)
        if state.account is None:
            state.account = await self.bot_account(f"bot:{used}")

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
