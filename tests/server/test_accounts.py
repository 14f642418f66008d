"""Accounts: token shown once and stored only hashed; login, guests, bots."""

import sqlite3
from pathlib import Path

import pytest
import trio

from server import accounts
from server.accounts import AccountError
from server.storage import open_store


async def test_register_then_login(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            account, token = await accounts.register(store, "alice")
            assert account.name == "alice" and not account.is_bot
            assert await accounts.login(store, token) == account
            for bad in ["", "x", f"{account.id}.wrong", "999.abc", token + "x", "a.b.c"]:
                with pytest.raises(AccountError) as info:
                    await accounts.login(store, bad)
                assert info.value.code == "bad_token"
    raw = sqlite3.connect(tmp_path / "s.db")
    dump = "\n".join(raw.iterdump())
    raw.close()
    assert token.split(".", 1)[1] not in dump


async def test_names_are_checked_and_unique(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            await accounts.register(store, "bob")
            with pytest.raises(AccountError) as info:
                await accounts.register(store, "BOB")
            assert info.value.code == "name_taken"
            for bad in ["", "a", "x" * 30, "has space", "-dash", "é"]:
                with pytest.raises(AccountError) as info:
                    await accounts.register(store, bad)
                assert info.value.code == "bad_name"


async def test_guests_and_bots(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            g1, t1 = await accounts.guest(store)
            g2, t2 = await accounts.guest(store)
            assert g1.is_guest and g1.name != g2.name
            # Each guest's resume token logs in that guest alone.
            assert await accounts.login(store, t1) == g1
            assert await accounts.login(store, t2) == g2
            assert t1 != t2
            _bot, token = await accounts.register(store, "robo", is_bot=True)
            assert (await accounts.login(store, token)).is_bot
            b1 = await accounts.builtin_bot(store, "bot:random")
            b2 = await accounts.builtin_bot(store, "bot:random")
            assert b1 == b2 and b1.is_bot
