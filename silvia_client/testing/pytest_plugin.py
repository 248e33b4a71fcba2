"""Pytest fixtures for testing code against the reference server.

Registered as a `pytest11` entry point, so installing the package is enough::

    from silvia_client.citations import resolve_citation

    def test_my_code_shows_account_links(silvia):
        with silvia.chat.stream("/scenario accounts") as stream:
            turn = stream.until_done()
        links = [link.href for c in turn.citations for link in resolve_citation(c).links]
        assert links == [f"/accounts/{ref.account_id}" for ref in turn.citations[0].target.accounts]

The fixtures (each test gets its own; they all build on `silvia_server`):

* `silvia_server`: a fresh `ReferenceServer` (empty session store, the built-in
  scenarios). Register your own scenarios on it, or seed sessions, first.
* `silvia`: a `SilviaClient` on it, in-process (`silvia_server.client()`),
  closed after the test.
* `async_silvia`: the `AsyncSilviaClient` twin, for `async def` tests. Mark
  them `@pytest.mark.anyio` (anyio comes with httpx and has a pytest plugin) or
  use pytest-asyncio: the fixture itself is sync, so it works under any async
  plugin; see its docstring for why closing it that way is sound.
* `silvia_transport`: an in-process httpx transport to it, sync and async, for
  an httpx client of your own (at `IN_PROCESS_URL`).
* `silvia_loopback_url`: the server on a real socket at 127.0.0.1, stopped after the test.
* `silvia_loopback_client`: a `SilviaClient` talking to that URL over real HTTP.

`silvia_client` and `async_silvia_client` are the older names of `silvia` and
`async_silvia`, kept as aliases: a parameter named `silvia_client` shadows the
package of that name inside the test.

Pick a scenario per request with a message starting `/scenario <name>` (as
above) or the `x-silvia-scenario` header (`default_headers=` on a client of your
own); `silvia serve --list` lists them. Every fixture client has short timeouts
(5 s, and a 5 s idle timeout on streams), so a test fails rather than hangs.

For an async client over real sockets, build it inside the test, where its
connections belong to the test's event loop::

    @pytest.mark.anyio
    async def test_over_http(silvia_loopback_url):
        async with AsyncSilviaClient(base_url=silvia_loopback_url, token="t") as client:
            ...

Under pytest-xdist each worker is its own process, so every test there also gets
its own server (and its own port, picked by the system).

pytest loads this module in every run wherever the package is installed, so it
imports nothing of the SDK until a fixture is first used.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

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
_TIMEOUT = 5.0
_IDLE_TIMEOUT = 5.0
_OPTIONS: Final = {"token": FIXTURE_TOKEN, "timeout": _TIMEOUT, "idle_timeout": _IDLE_TIMEOUT}


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

    with SilviaClient(
        base_url=silvia_loopback_url,
        token=FIXTURE_TOKEN,
        timeout=_TIMEOUT,
        idle_timeout=_IDLE_TIMEOUT,
    ) as client:
        yield client
