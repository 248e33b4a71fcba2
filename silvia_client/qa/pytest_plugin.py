"""pytest support for QA suites as plain tests: `--silvia-base-url` and the `silvia_qa` fixture.

Without the option, each test gets a fresh in-process reference server; with it (token
from `SILVIA_TOKEN`), that server. pytest loads this in every run wherever the package
is installed, so it imports nothing of the SDK until the option or fixture is used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from . import Observer

__all__ = ["pytest_addoption", "pytest_configure", "silvia_base_url", "silvia_qa"]

OPTION = "--silvia-base-url"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add `--silvia-base-url` (pytest hook)."""
    group = parser.getgroup("silvia-qa", "Silvia QA")
    group.addoption(
        OPTION,
        action="store",
        default=None,
        metavar="URL",
        help=(
            "run the silvia_qa fixture's turns against this server (token from SILVIA_TOKEN); "
            "default: an in-process reference server"
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a `--silvia-base-url` that is not http(s), or has no SILVIA_TOKEN (pytest hook)."""
    # A usage error stops the session before any test, as a bad option should.
    value = config.getoption(OPTION)
    if value is None:
        return
    from ..citations import is_http_url

    if not is_http_url(value):
        raise pytest.UsageError(f"{OPTION} must be an absolute http(s) URL")
    if not os.environ.get("SILVIA_TOKEN"):
        raise pytest.UsageError(f"set SILVIA_TOKEN to the bearer token for {OPTION}")


@pytest.fixture
def silvia_base_url(request: pytest.FixtureRequest) -> str | None:
    """The `--silvia-base-url` given, or None (the reference server)."""
    value = request.config.getoption(OPTION)
    return value if isinstance(value, str) else None


@pytest.fixture
def silvia_qa(silvia_base_url: str | None) -> Iterator[Observer]:
    """An `Observer` of the server under test: `--silvia-base-url`, else a reference server."""
    from . import Observer

    if silvia_base_url is None:
        observer = Observer.reference()
    else:
        observer = Observer.connect(silvia_base_url, token=os.environ["SILVIA_TOKEN"])
    with observer:
        yield observer
