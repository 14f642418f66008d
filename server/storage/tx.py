"""`Tx`: what one transaction on the database can do, whatever engine is behind it.

Callers never see SQL or a driver: they hand the store a function of a `Tx` (`await
store.call(lambda tx: tx.insert_action(...))`), which runs inside the writer's transaction, or use
one directly from a command (`server.storage.direct`). Each engine (SQLite today,
`server.storage.sqlite_tx`) implements every method; a method that refuses raises `ValueError`
(or `KeyError`) with a sentence and leaves nothing of its own written, so the writer rolls back
that request alone and the rest of its batch commits.

Methods take and return plain values: JSON columns are given and returned as the engine's JSON
shapes (dicts, lists), rows as the frozen values of `server.storage.rows`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from server.storage.rows import (
    AccountRow,
    BanRow,
    HouseEntrant,
    MatchRow,
    RatedAccount,
    ResultRow,
    StoredGame,
    StoredRating,
    WaitingTable,
)


class Tx(Protocol):
    """One transaction: every read sees the writes made before it in the same transaction."""

    # ---------------------------------------------------------------- accounts

    def insert_account(
        self,
        name: str,
        salt: bytes | None,
        token_hash: bytes | None,
        *,
        is_bot: bool,
        is_guest: bool,
    ) -> int:
        """Create an account, returning its id; `ValueError` when the name is taken (names
        compare without case)."""
        ...

    def account_by_id(self, account_id: int) -> AccountRow | None: ...

    def account_by_name(self, name: str) -> AccountRow | None:
        """The account of that name, compared without case."""
        ...

    def upgrade_token_hash(
        self, account_id: int, old_hash: bytes, salt: bytes, token_hash: bytes
    ) -> bool:
        """Store a new salt and hash of an account's token in place of `old_hash` (a login just
        proved the token against it); False, and nothing changed, if the stored hash is no
        longer `old_hash` (another server upgraded it first)."""
        ...

    def guest_seen(self, account_ids: list[int]) -> None:
        """Note that these guests were seen now (a login, a live connection, a seat); ids of
        accounts that are not guests are passed over."""
        ...

    def expire_guests(self, cutoff: float, in_use: list[int]) -> int:
        """Delete every guest account not seen since `cutoff` (Unix time) that has no game
        results and no ladder or rating rows, after noting the guests `in_use` (connected or
        seated) as seen now; returns how many went. The newest account of all is never deleted,
        so no deleted account's id is ever given to a new one."""
        ...

    # ---------------------------------------------------------------- tables

    def insert_table(
        self,
        table_id: str,
        config: Any,
        *,
        seats: list[int | None] | None = None,
        creator: int | None = None,
    ) -> None:
        """Store a table's configuration. With `seats` (a list, even of free seats) the table is
        reopened after a restart for as long as it is open with no game."""
        ...

    def update_table_seats(self, table_id: str, seats: list[int | None]) -> None:
        """Who sits at a table still waiting for players (only one stored with seats)."""
        ...

    def waiting_tables(self) -> list[WaitingTable]:
        """Every table to reopen on start: not closed, stored with seats, and no game yet, in
        the order they were opened."""
        ...

    def table_creator(self, table_id: str) -> int | None: ...

    def close_table(self, table_id: str) -> None: ...

    # ---------------------------------------------------------------- games

    def insert_game(self, table_id: str, game: str, ruleset: Any, seats: Any) -> int:
        """A new running game at a stored table; returns its id (ids grow)."""
        ...

    def update_game_seats(self, game_id: int, seats: Any) -> None: ...

    def insert_hand(
        self, game_id: int, *, hand_no: int, seed: str, commitment: str, first_seq: int
    ) -> None:
        """Record a hand's secret seed before its deal is shown to anyone."""
        ...

    def insert_action(
        self,
        game_id: int,
        seq: int,
        *,
        seat: int,
        action: Any,
        source: str,
        bank_left_ms: int | None = None,
    ) -> None:
        """Append one applied action (with the actor's time bank left after it, if the table
        has one); `ValueError` on a duplicate `seq`."""
        ...

    def insert_hand_record(self, game_id: int, hand_no: int, record: Any) -> None:
        """Store a finished hand's `spades-hand/1` record (replacing one of the same number)."""
        ...

    def finish_game(self, game_id: int, status: str, results: list[ResultRow]) -> None:
        """Mark a game `finished` or `aborted` with its (seat, account_id, score, place) rows."""
        ...

    def unfinished_games(self) -> list[StoredGame]:
        """Every game still `running`, with its hands and actions in order (crash recovery)."""
        ...

    def load_game(self, game_id: int) -> StoredGame | None:
        """One game as persisted (any status): its table's config, deals and actions in order."""
        ...

    def game_ids(self, status: str | None = None) -> list[int]: ...

    def latest_game_at(self, table_id: str) -> int | None:
        """The last game played at a table (a table plays one; if it ever held more, the latest)."""
        ...

    def game_status(self, game_id: int) -> str | None: ...

    def hand_count(self, game_id: int) -> tuple[int, int]:
        """(deals stored, hand records stored) of a game."""
        ...

    def action_count(self, game_id: int) -> int: ...

    def hand_records(self, game_id: int | None = None) -> Iterator[Any]:
        """Hand records in (game, hand) order; every game's when `game_id` is None. Lazy: use it
        up inside the transaction."""
        ...

    def results(self, game_id: int) -> list[ResultRow]: ...

    # ---------------------------------------------------------------- ratings

    def rating(self, account_id: int, game: str) -> StoredRating | None: ...

    def set_rating(
        self, account_id: int, game: str, *, mu: float, sigma: float, games: int
    ) -> None: ...

    def ratings(self, game: str) -> dict[int, StoredRating]:
        """Every stored rating under the game key `game`, by account id."""
        ...

    def rated_accounts(self, game: str) -> list[RatedAccount]:
        """Every account with a rating under `game`, with its name (in no particular order)."""
        ...

    def delete_ratings(self, game: str) -> None: ...

    def record_ladder_game(self, game_id: int, changes: Any) -> None:
        """Remember what a game was to the ladder (`ladder_games`; replaces an earlier note)."""
        ...

    # ---------------------------------------------------------------- ladder matches

    def insert_match(
        self,
        *,
        preset: str,
        options: Mapping[str, Any],
        hands: int,
        teams: tuple[tuple[int, int], tuple[int, int]],
        created_at: float,
    ) -> int:
        """A new running match; returns its number (numbers grow)."""
        ...

    def match(self, seq: int) -> MatchRow | None: ...

    def rate_match(
        self,
        seq: int,
        *,
        points: list[int],
        forfeits: list[int],
        halves: Any,
        changes: Any,
        finished_at: float,
        forfeit_reasons: Mapping[int, str] | None = None,
    ) -> int | None:
        """Mark a running match rated with its result; returns its rating order (one more than
        the last rated match's), or None (nothing written) if it is not running.
        `forfeit_reasons` (by account id, for some or all of `forfeits`) is kept with it and read
        back in `MatchRow.forfeit_reasons`."""
        ...

    def void_match(self, seq: int, *, reason: str, finished_at: float) -> None:
        """A running match that will never be rated (kept, with its reason)."""
        ...

    def void_running(self, *, reason: str, finished_at: float) -> int:
        """Every running match void; returns how many."""
        ...

    def rated_matches(
        self, *, newest_first: bool = False, limit: int | None = None
    ) -> list[MatchRow]:
        """Rated matches in the order they were rated (or the reverse), at most `limit`."""
        ...

    def settled_matches(self) -> Iterator[MatchRow]:
        """Every rated or void match, newest first. Lazy: use it inside the transaction."""
        ...

    def match_games(self, match: str) -> list[int]:
        """The games `record_ladder_game` noted as halves of `match`, in half order."""
        ...

    # ---------------------------------------------------------------- house entrants

    def add_house_entrant(self, account_id: int, spec: str, *, added_at: float) -> bool:
        """Enter a built-in bot for good; False (nothing written) if it already was."""
        ...

    def house_entrants(self) -> list[HouseEntrant]:
        """Every house entrant, by account id."""
        ...

    # ---------------------------------------------------------------- the operator

    def add_operator_token(self, digest: bytes) -> None:
        """Keep the digest of a new operator token."""
        ...

    def operator_token_known(self, digest: bytes) -> bool:
        """Whether an operator token with this digest was made."""
        ...

    def set_ban(self, kind: str, target: str, reason: str | None) -> None:
        """Ban an account or a network (`BanRow`); banning it again replaces the reason."""
        ...

    def remove_ban(self, kind: str, target: str) -> bool:
        """Lift a ban; False if there was none."""
        ...

    def bans(self) -> list[BanRow]:
        """Every ban in force, oldest first."""
        ...
