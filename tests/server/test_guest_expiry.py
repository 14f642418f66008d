"""Which guest accounts expire (`Tx.expire_guests`), on each store engine."""

from __future__ import annotations

from server.storage import Tx


def made_at(tx: Tx, account_id: int, when: float) -> None:
    """Date an account's making back (the store dates it now; only a test needs otherwise)."""
    tx.driver.run("UPDATE accounts SET created_at = ? WHERE id = ?", (when, account_id))


def guest(tx: Tx, name: str, when: float) -> int:
    account_id = tx.insert_account(name, b"s" * 16, b"h" * 32, is_bot=False, is_guest=True)
    made_at(tx, account_id, when)
    return account_id


def names(tx: Tx, ids: list[int]) -> set[str]:
    return {row.name for account_id in ids if (row := tx.account_by_id(account_id)) is not None}


def test_only_unused_guests_expire(tx: Tx) -> None:  # the `tx` fixture: each engine
    old, recent = 1000.0, 9000.0
    ids = [guest(tx, "guest-old", old), guest(tx, "guest-recent", recent)]  # made after
    returned = guest(tx, "guest-returned", old)  # logged in again since
    tx.guest_seen([returned])
    seated = guest(tx, "guest-seated", old)  # in use now: seated or connected
    played = guest(tx, "guest-played", old)  # finished a game
    tx.insert_table("t1", {})
    game = tx.insert_game("t1", "spades", {}, [played])
    tx.finish_game(game, "finished", [(0, played, 100, 1)])
    person = tx.insert_account("ada", None, None, is_bot=False, is_guest=False)
    made_at(tx, person, old)
    newest = guest(tx, "guest-newest", old)  # the newest account of all is kept
    ids += [returned, seated, played, person, newest]

    assert tx.expire_guests(5000.0, [seated]) == 1

    assert names(tx, ids) == {
        "guest-recent",
        "guest-returned",
        "guest-seated",
        "guest-played",
        "ada",
        "guest-newest",
    }
    # The guests in use count as seen now: the next sweep keeps them even once they go.
    assert tx.expire_guests(5000.0, []) == 0
    # A later account lets the formerly newest one go, and a deleted id is never given again.
    later = tx.insert_account("bob", None, None, is_bot=False, is_guest=False)
    assert tx.expire_guests(5000.0, []) == 1
    assert "guest-newest" not in names(tx, ids)
    assert tx.insert_account("carol", None, None, is_bot=False, is_guest=False) > later
