"""The schema: numbered migrations, each moving the database from version i to i + 1.

The statements are SQLite's (`server.storage.sqlite` applies them, one transaction each, and keeps
the version in `PRAGMA user_version`). A migration is never edited once released: a change is a new
entry at the end. No statement may contain ';', as migrations are split on it.
"""

from __future__ import annotations

# The ladder's tables, as the ladder first made them at its start (hence IF NOT EXISTS).
_LADDER = """
CREATE TABLE IF NOT EXISTS ladder_matches (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'rated', 'void')),
    preset      TEXT NOT NULL,
    options     TEXT NOT NULL,
    hands       INTEGER NOT NULL,
    teams       TEXT NOT NULL,
    points      TEXT,
    forfeits    TEXT,
    halves      TEXT,
    changes     TEXT,
    rated_seq   INTEGER UNIQUE,
    created_at  REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS ladder_matches_rated ON ladder_matches(rated_seq);
CREATE TABLE IF NOT EXISTS ladder_entrants (
    account_id  INTEGER PRIMARY KEY REFERENCES accounts(id),
    house_spec  TEXT,
    added_at    REAL NOT NULL
)
"""

# Each entry moves the schema from version i to i + 1; applied in order, each in its own transaction.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE accounts (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
        token_salt  BLOB,
        token_hash  BLOB,
        is_bot      INTEGER NOT NULL DEFAULT 0,
        is_guest    INTEGER NOT NULL DEFAULT 0,
        created_at  REAL NOT NULL
    );
    CREATE TABLE tables (
        id          TEXT PRIMARY KEY,
        config      TEXT NOT NULL,
        created_at  REAL NOT NULL,
        closed_at   REAL
    );
    CREATE TABLE games (
        id          INTEGER PRIMARY KEY,
        table_id    TEXT NOT NULL REFERENCES tables(id),
        game        TEXT NOT NULL,
        ruleset     TEXT NOT NULL,
        seats       TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'aborted')),
        created_at  REAL NOT NULL,
        finished_at REAL
    );
    CREATE INDEX games_status ON games(status);
    CREATE TABLE hands (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        hand_no     INTEGER NOT NULL,
        seed        TEXT NOT NULL,
        commitment  TEXT NOT NULL,
        first_seq   INTEGER NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    );
    CREATE TABLE actions (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        seq         INTEGER NOT NULL,
        seat        INTEGER NOT NULL,
        action      TEXT NOT NULL,
        source      TEXT NOT NULL,
        created_at  REAL NOT NULL,
        PRIMARY KEY (game_id, seq)
    );
    CREATE TABLE hand_records (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        hand_no     INTEGER NOT NULL,
        record      TEXT NOT NULL,
        created_at  REAL NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    );
    CREATE TABLE results (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        seat        INTEGER NOT NULL,
        account_id  INTEGER REFERENCES accounts(id),
        score       INTEGER NOT NULL,
        place       INTEGER NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE TABLE ratings (
        account_id  INTEGER NOT NULL REFERENCES accounts(id),
        game        TEXT NOT NULL,
        mu          REAL NOT NULL,
        sigma       REAL NOT NULL,
        games       INTEGER NOT NULL DEFAULT 0,
        updated_at  REAL NOT NULL,
        PRIMARY KEY (account_id, game)
    );
    CREATE TABLE ladder_games (
        game_id     INTEGER PRIMARY KEY REFERENCES games(id),
        rated_at    REAL NOT NULL,
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
    ALTER TABLE tables ADD COLUMN creator INTEGER;
    ALTER TABLE actions ADD COLUMN bank_left_ms INTEGER
    """,
    # Unused guests expire (`Tx.expire_guests`): `last_seen_at` is when a guest last logged in, or
    # was last found connected or seated (NULL: not since it was made); the index finds an
    # account's results without reading them all.
    """
    ALTER TABLE accounts ADD COLUMN last_seen_at REAL;
    CREATE INDEX results_account ON results(account_id)
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
