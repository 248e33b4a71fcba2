"""`ReferenceServer().client()` and `.async_client()`: a ready client, in one call.

Each test has a sync and an async twin. The clients run on the in-process
transport, send the token the server requires (else any), take the client
constructor's keywords, and close the httpx client they were given when they
are closed.
"""

from __future__ import annotations

import httpx
import pytest

from silvia_client import (
    AsyncSilviaClient,
    AuthenticationError,
    SilviaClient,
    parse_citation_target,
)
from silvia_client.testing import IN_PROCESS_URL, SCENARIO_HEADER, ReferenceServer

POOLED = "silvia://your-account/credit-card"
EXPECTED = ReferenceServer().expected_turn("pooling")


def test_client_streams_a_turn_and_reloads_it() -> None:
    server = ReferenceServer()
    with server.client() as client:
        assert isinstance(client, SilviaClient)
        assert client.base_url == IN_PROCESS_URL
        with client.chat.stream("/scenario pooling") as stream:
            turn = stream.until_done()
        assert turn.session_id is not None
        reloaded = client.sessions.get(turn.session_id)
    assert turn.target_for(POOLED) == parse_citation_target(EXPECTED.target_for(POOLED))
    assert reloaded.messages[-1].citations == turn.citations
    assert len(server.sessions) == 1  # this server's store, not another's


@pytest.mark.anyio
async def test_async_client_streams_a_turn_and_reloads_it() -> None:
    server = ReferenceServer()
    async with server.async_client() as client:
        assert isinstance(client, AsyncSilviaClient)
        assert client.base_url == IN_PROCESS_URL
        async with client.chat.stream("/scenario pooling") as stream:
            turn = await stream.until_done()
        assert turn.session_id is not None
        reloaded = await client.sessions.get(turn.session_id)
    assert turn.target_for(POOLED) == parse_citation_target(EXPECTED.target_for(POOLED))
    assert reloaded.messages[-1].citations == turn.citations
    assert len(server.sessions) == 1


def test_closing_the_client_closes_the_http_client_it_made() -> None:
    client = ReferenceServer().client()
    http = client._http
    assert isinstance(http, httpx.Client)
    assert not http.is_closed
    client.close()
    assert http.is_closed


@pytest.mark.anyio
async def test_closing_the_async_client_closes_the_http_client_it_made() -> None:
    client = ReferenceServer().async_client()
    http = client._http
    assert isinstance(http, httpx.AsyncClient)
    assert not http.is_closed
    await client.close()
    assert http.is_closed


def test_keywords_go_to_the_client_constructor() -> None:
    server = ReferenceServer()
    headers = {SCENARIO_HEADER: "market-data"}
    with server.client(timeout=3.0, idle_timeout=2.0, default_headers=headers) as client:
        assert client.timeout == httpx.Timeout(3.0)
        assert client.idle_timeout == 2.0
        with client.chat.stream("How is Apple trading?") as stream:
            turn = stream.until_done()
    assert {c.target.kind for c in turn.citations if c.target} == {"market_data"}


@pytest.mark.anyio
async def test_keywords_go_to_the_async_client_constructor() -> None:
    server = ReferenceServer()
    headers = {SCENARIO_HEADER: "market-data"}
    async with server.async_client(timeout=3.0, idle_timeout=2.0, default_headers=headers) as c:
        assert c.timeout == httpx.Timeout(3.0)
        assert c.idle_timeout == 2.0
        async with c.chat.stream("How is Apple trading?") as stream:
            turn = await stream.until_done()
    assert {c.target.kind for c in turn.citations if c.target} == {"market_data"}


def test_the_client_sends_the_token_the_server_requires_unless_told_otherwise() -> None:
    server = ReferenceServer(token="kit-s3cret")
    with server.client() as client, client.chat.stream("hello") as stream:
        assert stream.until_done().complete
    with (
        server.client(token="wrong") as client,
        pytest.raises(AuthenticationError),
        client.chat.stream("hello") as stream,
    ):
        stream.until_done()
    with server.client() as client:
        assert "kit-s3cret" not in repr(client)


@pytest.mark.anyio
async def test_the_async_client_sends_the_token_the_server_requires_unless_told_otherwise() -> None:
    server = ReferenceServer(token="kit-s3cret")
    async with server.async_client() as client, client.chat.stream("hello") as stream:
        assert (await stream.until_done()).complete
    async with server.async_client(token="wrong") as client:
        with pytest.raises(AuthenticationError):
            async with client.chat.stream("hello") as stream:
                await stream.until_done()


def test_an_http_client_of_ones_own_is_refused_with_the_way_to_do_it() -> None:
    for make in ["client", "async_client"]:
        try:
            server = ReferenceServer()
            with httpx.Client() as http, pytest.raises(TypeError, match=r"server\.transport\(\)"):
                getattr(server, make)(http_client=http)
        except AssertionError as error:
            raise AssertionError(f"case {(make,)!r}") from error


def test_clients_of_one_server_share_its_sessions() -> None:
    server = ReferenceServer()
    with server.client() as writer, writer.chat.stream("hello") as stream:
        session_id = stream.until_done().session_id
    assert session_id is not None
    with server.client() as reader:
        assert reader.sessions.get(session_id).messages[0].text == "hello"
