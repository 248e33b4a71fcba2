"""End-to-end fixtures: one reference server on 127.0.0.1 for the whole directory.

Nothing here can hang: clients have 5 s timeouts and an idle timeout of at most
5 s, which cuts the server's longest act (a 300 s stall) short. After each test,
once its clients are closed, the server must have no connection left open.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.testing import LoopbackServer, ReferenceServer

from ..testing._helpers import wait_until

TOKEN = "e2e-token"
TIMEOUT = httpx.Timeout(5.0)  # connect, read, write, pool: nothing waits longer
IDLE_TIMEOUT = 5.0  # a stream's idle timeout, for scenarios that do not stall


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def reference() -> ReferenceServer:
    return ReferenceServer()


@pytest.fixture(scope="session")
def loopback(reference: ReferenceServer) -> Iterator[LoopbackServer]:
    running = reference.serve_loopback(host="127.0.0.1", port=0)
    running.start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _no_connection_left_open(loopback: LoopbackServer) -> Iterator[None]:
    # Set up first, so torn down last: after every client of the test is closed.
    yield
    assert wait_until(lambda: loopback.open_connections == 0), (
        f"{loopback.open_connections} connection(s) left open on the server after the test"
    )


def make_client(
    url: str, *, token: str = TOKEN, idle_timeout: float = IDLE_TIMEOUT, **kwargs: object
) -> SilviaClient:
    """A client with short timeouts, so that nothing waits long."""
    return SilviaClient(
        base_url=url,
        token=token,
        timeout=TIMEOUT,
        idle_timeout=idle_timeout,
        **kwargs,  # type: ignore[arg-type]
    )
