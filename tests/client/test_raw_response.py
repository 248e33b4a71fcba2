"""Raw access: `stream.response` is the turn's `httpx.Response`; every `APIStatusError` has
`.response` (a read copy of what the SDK kept, the token blanked) and `.headers`."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient
from silvia_client.errors import APIStatusError, SilviaError

from .conftest import Api, Client
from .sse import CHAT_URL, TOKEN, full_turn, sse_response

pytestmark = pytest.mark.anyio


async def test_stream_response_is_the_turn_s_response_once_opened(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(
        return_value=sse_response(full_turn(), headers={"x-ratelimit-remaining": "41"})
    )
    client = api.client()
    if isinstance(client, AsyncSilviaClient):
        astream = client.chat.stream("hi")
        assert astream.response is None
        async with astream:
            await astream.until_done()
        response = astream.response
    else:
        stream = client.chat.stream("hi")
        assert stream.response is None
        with stream:
            stream.until_done()
        response = stream.response
    assert isinstance(response, httpx.Response)
    assert response.status_code == 200
    assert response.headers["x-ratelimit-remaining"] == "41"


async def _error(api: Api, client: Client, endpoint: str) -> APIStatusError:
    with pytest.raises(SilviaError) as caught:
        await api.request(client, endpoint)
    assert isinstance(caught.value, APIStatusError)
    return caught.value


@pytest.mark.parametrize("endpoint", ["chat", "session"])
async def test_a_status_error_keeps_the_response_read_and_without_the_token(
    api: Api, server: respx.MockRouter, endpoint: str
) -> None:
    body = json.dumps({"error": {"type": "rate_limit", "message": f"slow down {TOKEN}"}})
    answer = httpx.Response(
        429,
        headers={"x-echo": f"you sent {TOKEN}", "content-encoding": "gzip", "retry-after": "0"},
        content=gzip.compress(body.encode()),
    )
    route = server.post(CHAT_URL) if endpoint == "chat" else server.get("/api/chat/sessions/s1")
    route.mock(return_value=answer)
    client = api.client(max_retries=0)
    error = await _error(api, client, endpoint)
    response = error.response
    assert response is not None
    assert response.status_code == 429
    assert response.json()["error"]["message"] == "slow down <token>"  # decoded, read, blanked
    assert error.headers is response.headers
    assert error.headers["x-echo"] == "you sent <token>"
    assert error.headers["retry-after"] == "0"
    assert response.request.method == ("POST" if endpoint == "chat" else "GET")
    assert "authorization" not in response.request.headers
    assert TOKEN not in repr(vars(response)) + str(response.request.url)


async def test_the_error_body_is_the_bounded_piece_the_sdk_read(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(return_value=httpx.Response(400, content=b"x" * 200_000))
    error = await _error(api, api.client(max_retries=0), "chat")
    assert error.response is not None
    assert 0 < len(error.response.content) <= 64 * 1024


def test_an_error_made_by_hand_has_no_response_and_empty_headers() -> None:
    error = APIStatusError("boom", status_code=418)
    assert error.response is None
    assert not error.headers
