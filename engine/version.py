"""The project's version, kept in one place so every package reports the same."""

from importlib.metadata import PackageNotFoundError, version


def project_version() -> str:
    """The installed distribution's version, or "0+unknown" when run from a bare source tree."""
    try:
        return version("spades-table")
    except PackageNotFoundError:
        return "0+unknown"
