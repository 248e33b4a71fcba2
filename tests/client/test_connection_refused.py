"""A server that is not there: both clients say so in the same words, the system's."""

from __future__ import annotations

import asyncio
import socket

import pytest

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import APIConnectionError


def _closed_port() -> str:
    with socket.socket() as sock:  # bound, never listening: a connection is refused
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_refused_connection_reads_the_same_from_both_clients() -> None:
    base_url = _closed_port()
    with (
        SilviaClient(base_url=base_url, max_retries=0) as client,
        pytest.raises(APIConnectionError) as sync_error,
    ):
        client.sessions.get("sess_1")

    async def refused() -> APIConnectionError:
        async with AsyncSilviaClient(base_url=base_url, max_retries=0) as client:
            try:
                await client.sessions.get("sess_1")
            except APIConnectionError as error:
                return error
        raise AssertionError("the connection was not refused")

    async_error = asyncio.run(refused())
    assert str(sync_error.value) == str(async_error)
    assert str(async_error) == f"connection to {base_url} failed: ConnectError: Connection refused"
