"""Ids on success: a finished `Turn` and a `Session` carry the response's request id, the id a
user quotes to support; and a connection error names where it was going, never more."""

from __future__ import annotations

import httpx
import pytest
import respx

from silvia_client.errors import APIConnectionError, APITimeoutError

from .conftest import Api
from .sse import BASE_URL, CHAT_URL, SSE_HEADERS, full_turn, sse_response

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}


async def test_a_turn_carries_its_request_id_or_none(api: Api, server: respx.MockRouter) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    turn = await api.turn(api.client())
    assert turn.complete
    assert turn.request_id == SSE_HEADERS["x-request-id"]
    headers = {"content-type": "text/event-stream"}  # no x-request-id
    server.post(CHAT_URL).mock(
        side_effect=lambda r: httpx.Response(200, content=full_turn(), headers=headers)
    )
    assert (await api.turn(api.client())).request_id is None


async def test_a_session_carries_its_request_id(api: Api, server: respx.MockRouter) -> None:
    server.get(SESSION_URL).mock(
        return_value=httpx.Response(200, json=SESSION_BODY, headers={"x-request-id": "req_s"})
    )
    session = await api.session(api.client(), "s1")
    assert session.request_id == "req_s"
    assert session.id == "s1"


@pytest.mark.parametrize(
    ("fail", "cls"),
    [(httpx.ConnectError, APIConnectionError), (httpx.ConnectTimeout, APITimeoutError)],
)
async def test_a_connection_error_names_scheme_host_and_port_only(
    api: Api, server: respx.MockRouter, fail: type[httpx.TransportError], cls: type[Exception]
) -> None:
    server.get(url__startswith=BASE_URL).mock(side_effect=fail("refused"))
    with pytest.raises(cls) as caught:
        await api.session(api.client(max_retries=0), "secret-session")
    message = str(caught.value)
    assert "https://silvia.test:443" in message
    assert "secret-session" not in message
    assert "/api/" not in message
