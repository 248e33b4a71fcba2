"""Pytest fixtures on the reference server (a `pytest11` entry point; docs/testing.md).

Where things are: `silvia_server` (a fresh `ReferenceServer` per test), on which
`silvia` / `async_silvia` (in-process clients, with the older aliases
`silvia_client` / `async_silvia_client`), `silvia_transport`, and
`silvia_loopback_url` / `silvia_loopback_client` (127.0.0.1) build. Fixture
clients have 5 s timeouts, so a test fails rather than hangs. pytest loads this
module in every run, so it imports nothing of the SDK until a fixture is used.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from .. import AsyncSilviaClient, SilviaClient
    from . import InProcessTransport, ReferenceServer

__all__ = [
    "FIXTURE_TOKEN",
    "async_silvia",
    "async_silvia_client",
    "silvia",
    "silvia_client",
    "silvia_loopback_client",
    "silvia_loopback_url",
    "silvia_server",
    "silvia_transport",
]

FIXTURE_TOKEN = "silvia-test-token"
"""The bearer token the fixture clients send (the fixture server accepts any)."""

# Short enough that a broken test fails quickly, long enough for a loaded CI machine.
_OPTIONS: Final[dict[str, Any]] = {"token": FIXTURE_TOKEN, "timeout": 5.0, "idle_timeout": 5.0}


@pytest.fixture
def silvia_server() -> ReferenceServer:
    """A fresh reference server with the built-in scenarios."""
    from . import ReferenceServer

    return ReferenceServer()


@pytest.fixture
def silvia(silvia_server: ReferenceServer) -> Iterator[SilviaClient]:
    """A `SilviaClient` on `silvia_server` (in-process), closed after the test."""
    with silvia_server.client(**_OPTIONS) as client:
        yield client


@pytest.fixture
def async_silvia(silvia_server: ReferenceServer) -> Iterator[AsyncSilviaClient]:
    """An `AsyncSilviaClient` on `silvia_server` (in-process), closed after the test.

    A sync fixture on purpose: an async one would tie it to one async plugin
    (pytest-asyncio and anyio each run only their own). That is sound here
    because building an `httpx.AsyncClient` needs no event loop, and on the
    in-process transport it holds nothing that belongs to one (no sockets): so
    it is closed afterwards on a private loop in a helper thread, which leaves
    the test's loop, running or not, untouched. Used from the test, it serves
    the test's loop only, as a production client serves its first loop: a call
    from another raises `EventLoopChangedError`.
    """
    client = silvia_server.async_client(**_OPTIONS)
    try:
        yield client
    finally:
        _close_on_own_loop(client)


@pytest.fixture
def silvia_client(silvia: SilviaClient) -> SilviaClient:
    """`silvia` under its older name (which shadows the package inside a test)."""
    return silvia


@pytest.fixture
def async_silvia_client(async_silvia: AsyncSilviaClient) -> AsyncSilviaClient:
    """`async_silvia` under its older name."""
    return async_silvia


def _close_on_own_loop(client: AsyncSilviaClient) -> None:
    import asyncio  # here, not at the top: most runs never need it

    errors: list[BaseException] = []

    def close() -> None:
        try:
            asyncio.run(client.close())
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    thread = threading.Thread(target=close, name="silvia-close-async-client")
    thread.start()
    thread.join(timeout=30)  # every wait has a bound; closing an idle client takes moments
    if thread.is_alive():
        raise RuntimeError("closing the async client did not finish in 30 s")
    if errors:
        raise errors[0]


@pytest.fixture
def silvia_transport(silvia_server: ReferenceServer) -> InProcessTransport:
    """An in-process httpx transport (sync and async) to `silvia_server`."""
    return silvia_server.transport()


@pytest.fixture
def silvia_loopback_url(silvia_server: ReferenceServer) -> Iterator[str]:
    """`silvia_server` on a real socket at 127.0.0.1: its base URL, stopped after the test."""
    with silvia_server.serve_loopback() as url:
        yield url


@pytest.fixture
def silvia_loopback_client(silvia_loopback_url: str) -> Iterator[SilviaClient]:
    """A `SilviaClient` on `silvia_loopback_url` (real HTTP on 127.0.0.1), closed after the test."""
    from .. import SilviaClient

    with SilviaClient(base_url=silvia_loopback_url, **_OPTIONS) as client:
        yield client
