"""The schema: numbered migrations, each moving the database from version i to i + 1, written once
for both engines.

Each migration is one text with a few `{words}` for what the two engines spell differently (a
`server.storage.dialect.Dialect`: an id that grows, a 64-bit integer, a float, bytes, a name
unique without case);
`migrations(SQLITE)` and `migrations(POSTGRES)` render it, so the engines cannot drift apart: a
column added is added to both. `MIGRATIONS` is SQLite's rendering. Each engine applies them one
transaction each and keeps the version (SQLite in `PRAGMA user_version`, PostgreSQL in its
`spades_schema` row; `server.storage.sqlite`, `server.storage.postgres`).

A migration is never edited once released (SQLite's rendering of it must stay what it was): a
change is a new entry at the end. No statement may contain ';', as migrations are split on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from server.storage.dialect import SQLITE, Dialect

# The ladder's tables, as the ladder first made them at its start (hence IF NOT EXISTS).
_LADDER = """
CREATE TABLE IF NOT EXISTS ladder_matches (
    seq         {serial},
    status      TEXT NOT NULL CHECK (status IN ('running', 'rated', 'void')),
    preset      TEXT NOT NULL,
    options     TEXT NOT NULL,
    hands       {int} NOT NULL,
    teams       TEXT NOT NULL,
    points      TEXT,
    forfeits    TEXT,
    halves      TEXT,
    changes     TEXT,
    rated_seq   {int} UNIQUE,
    created_at  {real} NOT NULL,
    finished_at {real}
);
CREATE INDEX IF NOT EXISTS ladder_matches_rated ON ladder_matches(rated_seq);
CREATE TABLE IF NOT EXISTS ladder_entrants (
    account_id  {int} PRIMARY KEY REFERENCES accounts(id),
    house_spec  TEXT,
    added_at    {real} NOT NULL
)
"""

# Each entry moves the schema from version i to i + 1; applied in order, each in its own transaction.
_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE accounts (
        id          {id},
        name        TEXT NOT NULL {unique_nocase},
        token_salt  {blob},
        token_hash  {blob},
        is_bot      {int} NOT NULL DEFAULT 0,
        is_guest    {int} NOT NULL DEFAULT 0,
        created_at  {real} NOT NULL
    );
    {accounts_nocase};
    CREATE TABLE tables (
        id          TEXT PRIMARY KEY,
        {rowid}
        config      TEXT NOT NULL,
        created_at  {real} NOT NULL,
        closed_at   {real}
    );
    CREATE TABLE games (
        id          {id},
        table_id    TEXT NOT NULL REFERENCES tables(id),
        game        TEXT NOT NULL,
        ruleset     TEXT NOT NULL,
        seats       TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'aborted')),
        created_at  {real} NOT NULL,
        finished_at {real}
    );
    CREATE INDEX games_status ON games(status);
    CREATE TABLE hands (
        game_id     {int} NOT NULL REFERENCES games(id),
        hand_no     {int} NOT NULL,
        seed        TEXT NOT NULL,
        commitment  TEXT NOT NULL,
        first_seq   {int} NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    );
    CREATE TABLE actions (
        game_id     {int} NOT NULL REFERENCES games(id),
        seq         {int} NOT NULL,
        seat        {int} NOT NULL,
        action      TEXT NOT NULL,
        source      TEXT NOT NULL,
        created_at  {real} NOT NULL,
        PRIMARY KEY (game_id, seq)
    );
    CREATE TABLE hand_records (
        game_id     {int} NOT NULL REFERENCES games(id),
        hand_no     {int} NOT NULL,
        record      TEXT NOT NULL,
        created_at  {real} NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    );
    CREATE TABLE results (
        game_id     {int} NOT NULL REFERENCES games(id),
        seat        {int} NOT NULL,
        account_id  {int} REFERENCES accounts(id),
        score       {int} NOT NULL,
        place       {int} NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE TABLE ratings (
        account_id  {int} NOT NULL REFERENCES accounts(id),
        game        TEXT NOT NULL,
        mu          {real} NOT NULL,
        sigma       {real} NOT NULL,
        games       {int} NOT NULL DEFAULT 0,
        updated_at  {real} NOT NULL,
        PRIMARY KEY (account_id, game)
    );
    CREATE TABLE ladder_games (
        game_id     {int} PRIMARY KEY REFERENCES games(id),
        rated_at    {real} NOT NULL,
        changes     TEXT NOT NULL
    );
    """,
    # The ladder's own tables (what server/ladder/store.py keeps). Written with IF NOT EXISTS: a
    # database from before this migration already has them, made by the ladder at its start.
    _LADDER,
    # A table still waiting for players is reopened after a restart: `seats` holds its seated
    # account ids (JSON, one entry per seat; NULL for a table that is not to be reopened: the
    # ladder's, and every table from before this migration), `creator` the account that opened it.
    # `bank_left_ms`: what was left of the actor's time bank once its action was made (NULL when
    # the table has no bank), so a restart gives each seat its bank back as it was.
    """
    ALTER TABLE tables ADD COLUMN seats TEXT;
    ALTER TABLE tables ADD COLUMN creator {int};
    ALTER TABLE actions ADD COLUMN bank_left_ms {int}
    """,
    # Unused guests expire (`Tx.expire_guests`): `last_seen_at` is when a guest last logged in, or
    # was last found connected or seated (NULL: not since it was made); the index finds an
    # account's results without reading them all.
    """
    ALTER TABLE accounts ADD COLUMN last_seen_at {real};
    CREATE INDEX results_account ON results(account_id)
    """,
    # Several servers on one PostgreSQL as one (server/cluster/; unused by a lone server): each
    # running server (`cluster_workers`) with the address of its link to the others, the lease it
    # renews (`lease_until`, PostgreSQL's clock), whether it still counts as alive and whether it
    # runs the ladder; and which server runs each open table (`cluster_tables`), with the table's
    # listing line (`info`, JSON) as its owner last published it, for every server's lobby. The
    # servers look for open tables without an owner every second: `tables_open` finds them
    # without reading every table ever closed.
    """
    CREATE TABLE cluster_workers (
        id          TEXT PRIMARY KEY,
        link        TEXT NOT NULL,
        lease_until {real} NOT NULL,
        alive       {int} NOT NULL DEFAULT 1,
        ladder      {int} NOT NULL DEFAULT 0,
        started_at  {real} NOT NULL
    );
    CREATE TABLE cluster_tables (
        table_id    TEXT PRIMARY KEY,
        worker      TEXT NOT NULL,
        info        TEXT
    );
    CREATE INDEX cluster_tables_worker ON cluster_tables(worker);
    CREATE INDEX tables_open ON tables(id) WHERE closed_at IS NULL
    """,
    # The cluster's secret (server/cluster/secret.py; unused by a lone server): the key with
    # which the servers of a cluster prove to each other, on their link, that they belong to it.
    # One row, made by the first server that starts; rotated as docs/operations.md says.
    """
    CREATE TABLE cluster_secret (
        id          {int} PRIMARY KEY CHECK (id = 1),
        secret      {blob} NOT NULL
    )
    """,
    # The operator (server/operator.py): the SHA-256 digests of its tokens (`spades-server admin
    # token` shows a token once; only its digest is kept), and the bans it made, which every
    # server of the database enforces. An account ban names the account as it was typed (compared
    # without ASCII case, as names are); an address ban is an IP network in CIDR form.
    """
    CREATE TABLE operator_tokens (
        id          {id},
        digest      {blob} NOT NULL UNIQUE,
        made_at     {real} NOT NULL
    );
    CREATE TABLE bans (
        id          {id},
        kind        TEXT NOT NULL CHECK (kind IN ('account', 'address')),
        target      TEXT NOT NULL,
        reason      TEXT,
        made_at     {real} NOT NULL,
        UNIQUE (kind, target)
    )
    """,
    # Player statistics (server/stats.py, engine/hand_stats.py): each account's counters, summed
    # over the hands counted so far, and which hands are counted (`stats_hands`, one row a hand
    # record), written in the same transaction as the counters they added to, so a hand is never
    # counted twice; emptying both and counting every stored hand again rebuilds them.
    """
    CREATE TABLE player_stats (
        account_id      {int} PRIMARY KEY REFERENCES accounts(id),
        hands           {int} NOT NULL DEFAULT 0,
        contracts       {int} NOT NULL DEFAULT 0,
        contracts_made  {int} NOT NULL DEFAULT 0,
        contracts_set   {int} NOT NULL DEFAULT 0,
        bags            {int} NOT NULL DEFAULT 0,
        nil_tried       {int} NOT NULL DEFAULT 0,
        nil_made        {int} NOT NULL DEFAULT 0,
        blind_nil_tried {int} NOT NULL DEFAULT 0,
        blind_nil_made  {int} NOT NULL DEFAULT 0,
        decisions       {int} NOT NULL DEFAULT 0,
        decision_ms     {int} NOT NULL DEFAULT 0,
        updated_at      {real} NOT NULL
    );
    CREATE TABLE stats_hands (
        game_id     {int} NOT NULL REFERENCES games(id),
        hand_no     {int} NOT NULL,
        counted_at  {real} NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    )
    """,
    # The double-dummy part of the player statistics (server/hand_analysis.py): per account, the
    # hands analysed whole and the tricks its cards cost its side in them; and which hands are
    # analysed (`dd_hands`), written in one transaction with the counters. Apart from
    # `player_stats`, which a rebuild empties and recounts from the records: these come from the
    # solver, which a rebuild does not run again.
    """
    CREATE TABLE dd_stats (
        account_id  {int} PRIMARY KEY REFERENCES accounts(id),
        hands       {int} NOT NULL DEFAULT 0,
        tricks_lost {int} NOT NULL DEFAULT 0,
        updated_at  {real} NOT NULL
    );
    CREATE TABLE dd_hands (
        game_id     {int} NOT NULL REFERENCES games(id),
        hand_no     {int} NOT NULL,
        analysed_at {real} NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    )
    """,
    # Events (issue 43; server/events/store.py): each event with its settings (JSON), the secret
    # its rounds' deals are drawn from and the seed of its pairings, its status and the round in
    # progress; its entrants (before the start one row per registered account, keyed `a<id>`,
    # with the partner it named; from the start the entrants formed, keyed `e1`, `e2`, ... in
    # order of registration, house bots last); each round's pairing as it was made (`plan`,
    # JSON); and each round's tables with the game played there. Results are not kept here: they
    # are read back from those games' hand records, so they rebuild bit for bit.
    """
    CREATE TABLE events (
        id          {id},
        name        TEXT NOT NULL,
        host        {int} REFERENCES accounts(id),
        settings    TEXT NOT NULL,
        secret      {blob} NOT NULL,
        seed        {int} NOT NULL,
        status      TEXT NOT NULL
                    CHECK (status IN ('registering', 'running', 'finished', 'cancelled')),
        starts_at   {real} NOT NULL,
        round       {int} NOT NULL DEFAULT 0,
        created_at  {real} NOT NULL,
        finished_at {real}
    );
    CREATE INDEX events_status ON events(status);
    CREATE TABLE event_entrants (
        event_id      {int} NOT NULL REFERENCES events(id),
        key           TEXT NOT NULL,
        members       TEXT NOT NULL,
        partner       TEXT,
        house         TEXT,
        registered_at {real} NOT NULL,
        withdrawn     {int} NOT NULL DEFAULT 0,
        forfeits      {int} NOT NULL DEFAULT 0,
        PRIMARY KEY (event_id, key)
    );
    CREATE TABLE event_rounds (
        event_id    {int} NOT NULL REFERENCES events(id),
        round       {int} NOT NULL,
        plan        TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('paired', 'playing', 'finished')),
        PRIMARY KEY (event_id, round)
    );
    CREATE TABLE event_tables (
        event_id    {int} NOT NULL REFERENCES events(id),
        round       {int} NOT NULL,
        table_no    {int} NOT NULL,
        table_id    TEXT NOT NULL,
        game_id     {int} REFERENCES games(id),
        PRIMARY KEY (event_id, round, table_no)
    )
    """,
)


def migrations(dialect: Dialect) -> tuple[str, ...]:
    """Every migration as `dialect` spells it."""
    words = dialect.words()
    return tuple(text.format_map(words) for text in _MIGRATIONS)


def statements(migration: str) -> list[str]:
    """A migration's statements, in order (empty ones, of words an engine leaves out, dropped)."""
    return [statement for statement in migration.split(";") if statement.strip()]


MIGRATIONS: tuple[str, ...] = migrations(SQLITE)

SCHEMA_VERSION = len(_MIGRATIONS)


@dataclass(frozen=True)
class TableShape:
    """One table the migrations make, as far as a copy of the database must know it
    (`server.storage.dbcopy`); its columns are the database's own catalog's."""

    name: str
    #: Columns the engine numbers (`{id}`, `{serial}`): a copy writes their values as they are and
    #: then moves the engine's counter past them.
    numbered: tuple[str, ...]
    #: Its numbers are never reused (`{serial}`: SQLite's AUTOINCREMENT, kept in sqlite_sequence).
    serial: bool
    #: Its rows' insertion order is a `rowid` (`{rowid}`: SQLite's implicit one, PostgreSQL's
    #: column), which a copy keeps too.
    rowid: bool


_CREATE = re.compile(r"^\s*CREATE TABLE (?:IF NOT EXISTS )?(\w+)", re.IGNORECASE)
_DROP = re.compile(r"^\s*DROP TABLE (?:IF EXISTS )?(\w+)", re.IGNORECASE)
_RENAME = re.compile(r"^\s*ALTER TABLE \w+ RENAME TO", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(\w+)\s+\{(id|serial)\}", re.MULTILINE)


def tables(version: int = SCHEMA_VERSION) -> tuple[TableShape, ...]:
    """The tables the first `version` migrations leave, read from their text, in the order they
    were made: a table is made after every table it references, so rows written in this order
    never wait for a row they point to."""
    found: dict[str, TableShape] = {}
    for migration in _MIGRATIONS[:version]:
        for statement in statements(migration):
            if _RENAME.match(statement):
                # Not done by any migration yet: a copy would look for the old name.
                raise ValueError(f"teach tables() to follow a renamed table: {statement.strip()}")
            if (dropped := _DROP.match(statement)) is not None:
                found.pop(dropped.group(1), None)
            elif (created := _CREATE.match(statement)) is not None:
                numbered = _NUMBERED.findall(statement)
                found.setdefault(
                    created.group(1),
                    TableShape(
                        name=created.group(1),
                        numbered=tuple(column for column, _word in numbered),
                        serial=any(word == "serial" for _column, word in numbered),
                        rowid="{rowid}" in statement,
                    ),
                )
    return tuple(found.values())
