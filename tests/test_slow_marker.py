"""The `slow` marker's list (tests/conftest.py) names modules that exist, so none is left out of
`make test-fast` by a stale name, nor a renamed module silently put back in."""

from tests.conftest import ROOT, SLOW_MODULES


def test_every_slow_module_exists() -> None:
    missing = sorted(path for path in SLOW_MODULES if not (ROOT / path).is_file())
    assert not missing, missing
