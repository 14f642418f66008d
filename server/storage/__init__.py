"""The store: the database behind one interface, whatever engine holds it.

- `Tx` (`server.storage.tx`): what one transaction can do (accounts, tables, games, hand records,
  ratings, the ladder's matches); its rows are the values of `server.storage.rows`. Each query is
  written there once for both engines, spelt by a `server.storage.dialect.Dialect` and run by the
  engine's driver (`server.storage.sqlite_driver`, `server.storage.postgres_driver`); no caller
  sees SQL or a driver.
- `Store` and `open_store` (`server.storage.writer`): the server's one writer task, with group
  commit: `await store.call(lambda tx: tx.insert_action(...))` returns once committed.
- `read_transaction` / `write_transaction` (`server.storage.direct`): one transaction from a
  command (`export`, `ladder add-house-bots`), beside a running server or without one.
- `Durability`, and the errors (`server.storage.errors`): every one a `StorageError`.

One server per database: `open_store` holds the database's lock (`server.storage.lock`) while the
server runs; a second server gets `DatabaseInUse`, naming the first.
"""

from server.storage.direct import read_transaction, write_transaction
from server.storage.engine import Durability
from server.storage.errors import (
    DatabaseFolderMissing,
    DatabaseInUse,
    NoDatabase,
    NotADatabase,
    SchemaTooNew,
    StorageError,
    StoreClosed,
    StoreUnavailable,
)
from server.storage.rows import (
    AccountRow,
    EventEntrantRow,
    EventRow,
    EventTableRow,
    HouseEntrant,
    MatchRow,
    RatedAccount,
    ResultRow,
    StoredAction,
    StoredGame,
    StoredHand,
    StoredRating,
    WaitingTable,
)
from server.storage.schema import MIGRATIONS, SCHEMA_VERSION
from server.storage.tx import Tx
from server.storage.writer import Store, open_store

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "AccountRow",
    "DatabaseFolderMissing",
    "DatabaseInUse",
    "Durability",
    "EventEntrantRow",
    "EventRow",
    "EventTableRow",
    "HouseEntrant",
    "MatchRow",
    "NoDatabase",
    "NotADatabase",
    "RatedAccount",
    "ResultRow",
    "SchemaTooNew",
    "StorageError",
    "Store",
    "StoreClosed",
    "StoreUnavailable",
    "StoredAction",
    "StoredGame",
    "StoredHand",
    "StoredRating",
    "Tx",
    "WaitingTable",
    "open_store",
    "read_transaction",
    "write_transaction",
]
