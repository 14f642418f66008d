"""Fixtures every suite may use: a throwaway PostgreSQL cluster (tests/postgres.py)."""

import os
from collections.abc import Iterator

import pytest

from tests.postgres import Cluster, started, unavailable


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL cluster for the whole run, started on first use.

    Where PostgreSQL cannot be had, the tests that need it skip with the reason, unless
    SPADES_REQUIRE_POSTGRES is set (`.ci/run` sets it): then they fail.
    """
    reason = unavailable()
    if reason is not None:
        if os.environ.get("SPADES_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL is required here: {reason}")
        pytest.skip(reason)
    with started() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """The URL of a fresh, empty database of the cluster (the store migrates it)."""
    return pg_cluster.fresh_database()


@pytest.fixture
def own_pg() -> Iterator[Cluster]:
    """A PostgreSQL cluster of the test's own, which it may stop and start (`stop_server`,
    `start_server`: the session's cluster is shared by every test, so it is never stopped)."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("SPADES_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL is required here: {reason}")
        pytest.skip(reason)
    with started() as cluster:
        yield cluster
