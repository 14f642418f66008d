"""A PostgreSQL of the test's own, which the test may stop and start (the session's cluster is
shared by every test, so it is never stopped)."""

from collections.abc import Iterator

import pytest

from tests.postgres import Cluster, started, unavailable


@pytest.fixture
def own_pg() -> Iterator[Cluster]:
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    with started() as cluster:
        yield cluster
