"""The fence: a cluster server's writer commits only while the server is alive with its lease,
so once another declared it dead (and may claim its tables) it can never commit again."""

import pytest

from server.cluster import membership
from server.storage import StorageError, open_store
from server.storage.postgres import connect, migrate


async def test_a_server_declared_dead_never_commits_again(pg_url: str) -> None:
    conn = connect(pg_url)
    migrate(conn, pg_url)
    membership.register(conn, "w1", "127.0.0.1:1")
    async with open_store(pg_url, fence=(membership.FENCE, ("w1",))) as store:
        await store.call(lambda tx: tx.insert_table("before", {}))
        conn.execute("UPDATE cluster_workers SET lease_until = 0 WHERE id = 'w1'")
        with pytest.raises(StorageError, match="division by zero"):
            await store.call(lambda tx: tx.insert_table("expired", {}))
        assert membership.expire(conn) == ["w1"]
        assert not membership.renew(conn, "w1")  # and it cannot renew its way back
        with pytest.raises(StorageError):
            await store.call(lambda tx: tx.insert_table("dead", {}))
    rows = conn.execute("SELECT id FROM tables ORDER BY id").fetchall()
    assert rows == [("before",)]
    conn.close()


async def test_a_cluster_store_shares_the_database_and_a_lone_one_is_refused(
    pg_url: str,
) -> None:
    conn = connect(pg_url)
    migrate(conn, pg_url)
    for worker in ("w1", "w2"):
        membership.register(conn, worker, "127.0.0.1:1")
    async with (
        open_store(pg_url, fence=(membership.FENCE, ("w1",))) as first,
        open_store(pg_url, fence=(membership.FENCE, ("w2",))) as second,
    ):
        await first.call(lambda tx: tx.insert_table("a", {}))
        await second.call(lambda tx: tx.insert_table("b", {}))
        with pytest.raises(StorageError, match="other workers of a cluster"):
            async with open_store(pg_url):
                pass
    conn.close()
