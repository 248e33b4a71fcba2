"""Pytest fixtures for testing code against the reference server.

Registered as a `pytest11` entry point, so installing the package is enough::

    def test_my_code(silvia_transport):
        http = httpx.Client(transport=silvia_transport, base_url=IN_PROCESS_URL)
        ...

Each test gets a fresh server (empty session store, built-in scenarios);
register extra scenarios on `silvia_server` before using the other fixtures'
connections. Every fixture builds on `silvia_server`, so a further fixture (a
ready client, say) is one more function taking it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._server import ReferenceServer
from ._transport import InProcessTransport

__all__ = ["silvia_loopback_url", "silvia_server", "silvia_transport"]


@pytest.fixture
def silvia_server() -> ReferenceServer:
    """A fresh reference server with the built-in scenarios."""
    return ReferenceServer()


@pytest.fixture
def silvia_transport(silvia_server: ReferenceServer) -> InProcessTransport:
    """An in-process httpx transport (sync and async) to `silvia_server`."""
    return silvia_server.transport()


@pytest.fixture
def silvia_loopback_url(silvia_server: ReferenceServer) -> Iterator[str]:
    """`silvia_server` on a real socket at 127.0.0.1: its base URL, stopped after the test."""
    with silvia_server.serve_loopback() as url:
        yield url
