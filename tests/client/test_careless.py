"""Careless callers: wrong argument types and values fail before anything is sent, and the
responses of a caller's own transport work however it built them."""

from __future__ import annotations

import math
from typing import Any

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import ConfigurationError

from .conftest import Api
from .sse import BASE_URL, CHAT_URL, SSE_HEADERS, TOKEN, full_turn, sse_response

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}


async def test_a_bad_message_or_session_id_fails_before_anything_is_sent(
    api: Api, server: respx.MockRouter
) -> None:
    chat = server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    get = server.get(url__startswith=BASE_URL + "/api/chat/sessions/").mock(
        return_value=httpx.Response(200, json=SESSION_BODY)
    )
    client = api.client()
    for message in [None, 42, b"hi", ["hi"], {"message": "hi"}]:
        with pytest.raises(TypeError, match="message must be a str"):
            client.chat.stream(message)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="message"):
            await api.turn(client, message)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="message cannot be encoded") as caught:
        await api.turn(client, "hi \ud800")
    assert isinstance(caught.value, ConfigurationError)
    bad_ids: list[tuple[Any, type[Exception], str]] = [
        (42, TypeError, "session_id must be a str"),
        (b"s1", TypeError, "session_id must be a str"),
        ("s\udc00", ValueError, "session_id cannot be encoded"),
        ("", ValueError, "session_id must not be empty"),
    ]
    for session_id, error, match in bad_ids:
        with pytest.raises(error, match=match):
            await api.turn(client, "hi", session_id=session_id)
        with pytest.raises(error, match=match):
            await api.session(client, session_id)
    assert chat.call_count == 0
    assert get.call_count == 0


# ------------------------------------------------------------- responses a caller's transport read


def handler(request: httpx.Request) -> httpx.Response:
    if request.method == "POST":
        return httpx.Response(200, headers=SSE_HEADERS, content=full_turn())  # read already
    return httpx.Response(200, json=SESSION_BODY)


async def test_a_response_the_transport_read_already_works(api: Api) -> None:
    http_cls = httpx.AsyncClient if api.is_async else httpx.Client
    transport = httpx.MockTransport(handler)
    http: Any = http_cls(transport=transport)
    client = api.client(http_client=http)
    turn = await api.turn(client)
    assert turn.complete
    assert turn.text == "You have $120 in checking."
    assert (await api.session(client, "s1")).id == "s1"


async def test_a_response_an_event_hook_read_works(api: Api) -> None:
    read: list[str] = []
    if api.is_async:

        async def ahook(response: httpx.Response) -> None:
            await response.aread()
            read.append(response.request.method)

        http: Any = httpx.AsyncClient(
            transport=httpx.MockTransport(handler), event_hooks={"response": [ahook]}
        )
    else:

        def hook(response: httpx.Response) -> None:
            response.read()
            read.append(response.request.method)

        http = httpx.Client(
            transport=httpx.MockTransport(handler), event_hooks={"response": [hook]}
        )
    client = api.client(http_client=http)
    assert (await api.turn(client)).complete
    assert (await api.session(client, "s1")).id == "s1"
    assert read == ["POST", "GET"]


# ---------------------------------------------------------------------------- construction


def test_bad_settings_are_configuration_errors_at_construction() -> None:
    with pytest.raises(ConfigurationError, match=r"httpx\.Client"):
        SilviaClient(base_url=BASE_URL, token=TOKEN, http_client=httpx.AsyncClient())  # type: ignore[arg-type]
    with httpx.Client() as http, pytest.raises(ConfigurationError, match=r"httpx\.AsyncClient"):
        AsyncSilviaClient(base_url=BASE_URL, token=TOKEN, http_client=http)  # type: ignore[arg-type]
    bad: list[tuple[dict[str, Any], str]] = [
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"max_retries": "2"}, "max_retries"),
        ({"timeout": -1}, "timeout"),
        ({"timeout": math.nan}, "timeout"),
        ({"timeout": httpx.Timeout(5.0, read=-1)}, "read timeout"),
        ({"timeout": "10"}, "timeout"),
        ({"idle_timeout": 0}, "idle_timeout"),
        ({"idle_timeout": -5}, "idle_timeout"),
        ({"retry_backoff": -1}, "retry_backoff"),
        ({"retry_backoff": math.inf}, "retry_backoff"),
        ({"default_headers": ["x"]}, "default_headers"),
        ({"default_headers": {"x-a": 1}}, "default_headers"),
        ({"wire": "v2"}, "wire"),
        ({"token": 1234567890}, "token must be a str"),
        ({"base_url": 1}, "base_url must be a str"),
        ({"base_url": "https://silvia.test/?v=1"}, "query"),
        ({"base_url": "https://silvia.test/#top"}, "fragment"),
        ({"base_url": "ftp://silvia.test"}, "http"),
        ({"base_url": "silvia.test"}, "http"),
    ]
    for cls in (SilviaClient, AsyncSilviaClient):
        for kwargs, match in bad:
            with pytest.raises(ConfigurationError, match=match):
                cls(**{"base_url": BASE_URL, "token": TOKEN, **kwargs})
