"""The examples' one helper: a client for a real server when `SILVIA_BASE_URL` is set, else
for the reference server, in this process.

With `SILVIA_BASE_URL` (and `SILVIA_TOKEN`) set, this is simply `SilviaClient()`.
Without, it starts `silvia_client.testing.ReferenceServer`, the embedded stand-in
that plays scripted turns with made-up accounts, and connects to it through an
in-process httpx transport (no sockets). The reference server numbers its ids
(`deterministic=True`) so that runs, and the notebook's saved outputs, repeat.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer

__all__ = ["async_client", "client", "on_reference_server"]


def on_reference_server() -> bool:
    """True when no `SILVIA_BASE_URL` is set, so the examples use the reference server."""
    return not os.environ.get("SILVIA_BASE_URL")


def _note() -> None:
    print("(no SILVIA_BASE_URL: using the embedded reference server)", file=sys.stderr)


@contextmanager
def client() -> Iterator[SilviaClient]:
    """A `SilviaClient`: the real server's, or the reference server's."""
    if not on_reference_server():
        with SilviaClient() as real:
            yield real
        return
    _note()
    server = ReferenceServer(deterministic=True)
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="example", http_client=http) as reference,
    ):
        yield reference


@asynccontextmanager
async def async_client() -> AsyncIterator[AsyncSilviaClient]:
    """An `AsyncSilviaClient`: the real server's, or the reference server's."""
    if not on_reference_server():
        async with AsyncSilviaClient() as real:
            yield real
        return
    _note()
    server = ReferenceServer(deterministic=True)
    async with (
        httpx.AsyncClient(transport=server.transport()) as http,
        AsyncSilviaClient(base_url=IN_PROCESS_URL, token="example", http_client=http) as reference,
    ):
        yield reference
