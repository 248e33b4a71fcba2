"""pytest support for QA suites written as plain tests: `--silvia-base-url` and `silvia_qa`.

::

    from silvia_client.qa import assert_conforms

    def test_checking_cites_the_account(silvia_qa):
        observation = silvia_qa.observe("How much is in checking?", scenario="account")
        assert_conforms(observation, expect={"cites_account": True})

`pytest --silvia-base-url https://staging.example` (token from `SILVIA_TOKEN`)
runs such tests against that server; without the option they run against a
fresh in-process reference server per test. `scenario` picks a reference
server scenario and is ignored by a real server.

Load it with `-p silvia_client.qa.pytest_plugin`, or in a `conftest.py` with
`pytest_plugins = ["silvia_client.qa.pytest_plugin"]` (or through the
package's `pytest11` entry point, when it is registered there). pytest loads it
in every run wherever the package is installed, so it imports nothing of the SDK
until the option is given or the fixture first used.
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
