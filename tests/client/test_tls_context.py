"""The SDK's own pools share one verifying TLS context, made as httpx makes its own."""

from __future__ import annotations

import ssl
from pathlib import Path

import anyio
import certifi
import httpx
import pytest

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import APIConnectionError

REFUSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the pool is made anyway


def refused_call() -> None:
    """One call of a new sync client, which makes its pool and fails to connect."""
    client = SilviaClient(token="sk-test", base_url=REFUSED, max_retries=0)
    with client, pytest.raises(APIConnectionError):
        client.sessions.get("s-1")


def test_clients_of_both_sides_make_one_context_that_verifies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[ssl.SSLContext] = []
    make = httpx.create_ssl_context

    def counted() -> ssl.SSLContext:
        made.append(make())
        return made[-1]

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    # A CA setting no earlier test used, so the SDK makes its context here (the same
    # bundle httpx reads by default, under another name).
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))

    for _ in range(3):
        refused_call()

    async def turns() -> None:
        async with AsyncSilviaClient(token="sk-test", base_url=REFUSED, max_retries=0) as client:
            with pytest.raises(APIConnectionError):
                await client.sessions.get("s-1")

    anyio.run(turns)
    assert len(made) == 1, f"{len(made)} TLS contexts for four clients"
    assert made[0].verify_mode == ssl.CERT_REQUIRED
    assert made[0].check_hostname

    # Another setting, another context: the process's CA choice is honoured as httpx does.
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    refused_call()
    assert len(made) == 2
