"""Fixtures every suite may use: a throwaway PostgreSQL cluster (tests/postgres.py); and the `slow`
marker on the modules that take seconds a test."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from tests.postgres import Cluster, started, unavailable

# The modules whose tests take seconds each (`pytest --durations`): a browser, tmux, several server
# processes, a PostgreSQL restart, a server killed and upgraded. They are the end-to-end, hostile
# and deployment tests and stay real; `make test` (and so CI) runs them, `make test-fast` leaves
# them out. Marked here, in one list, so that a module's own imports and marks stay its own: a new
# module that drives a browser (tests/web/browser.py), tmux or server processes belongs in it.
SLOW_MODULES = frozenset(
    {
        "tests/client/test_tmux_e2e.py",
        "tests/client/test_tmux_newcomer.py",
        "tests/conformance/test_bot_kit.py",
        "tests/events/test_done_when.py",
        "tests/hostile/test_faults.py",
        "tests/server/cluster/test_supervisor.py",
        "tests/server/cluster/test_workers.py",
        "tests/server/cluster/test_workers_metrics.py",
        "tests/server/outage/test_cluster_outage.py",
        "tests/server/test_db_copy_serve.py",
        "tests/server/test_postgres_serve.py",
        "tests/server/test_upgrade.py",
        "tests/web/test_accessibility.py",
        "tests/web/test_browser.py",
        "tests/web/test_browser_pause.py",
        "tests/web/test_operator_page.py",
        "tests/web/test_profile.py",
        "tests/web/test_replays.py",
        "tests/web/test_spectator_choices.py",
        "tests/web/test_table_choices.py",
        "tests/web/test_table_expectations.py",
        "tests/web/test_table_layout.py",
        "tests/web/test_table_pacing.py",
    }
)
ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(ROOT).as_posix() in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def fresh_logging() -> Iterator[None]:
    """Each test starts with structlog as a fresh process has it: unconfigured, so a server
    embedded in the test logs to the process's own stderr (server/app.py). A test that ran `serve`
    in this process (typer's CliRunner) configured it to write to `sys.stderr` as each line finds
    it: a later test's in-process command, whose stderr the runner swaps in, then caught the
    embedded server's log lines (test_admin_cli after test_waiting_table_ttl failed so)."""
    yield
    structlog.reset_defaults()


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
