"""`client.sessions.get` requests: the id as a path segment, bodies that are no session, options."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from silvia_client import DEFAULT_WIRE, AsyncSilviaClient
from silvia_client.errors import (
    ConfigurationError,
    ResponseTooLargeError,
    UnexpectedResponseError,
)
from silvia_client.sessions import session_path

from .conftest import Api
from .session_bodies import PATH, body, user
from .sse import Body, json_response

pytestmark = pytest.mark.anyio


async def test_the_id_is_escaped_as_a_path_segment(api: Api, server: respx.MockRouter) -> None:
    route = server.get(url__regex=r".*").mock(return_value=json_response(body()))
    await api.session(api.client(), "a/b c?d#e%f")
    assert route.calls.last.request.url.raw_path == b"/api/chat/sessions/a%2Fb%20c%3Fd%23e%25f"


async def test_a_simple_id(api: Api, server: respx.MockRouter) -> None:
    route = server.get(url__regex=r".*").mock(return_value=json_response(body()))
    await api.session(api.client(), "a/b c")
    request = route.calls.last.request
    assert request.method == "GET"
    assert request.url.raw_path == b"/api/chat/sessions/a%2Fb%20c"


@pytest.mark.parametrize(
    ("sid", "error", "message"),
    [
        ("", ConfigurationError, "session_id must not be empty"),
        (".", ConfigurationError, "session_id '.' cannot be a path segment"),
        ("..", ConfigurationError, "session_id '..' cannot be a path segment"),
        ("a\ud800", ConfigurationError, "session_id cannot be encoded as UTF-8 (it holds a lone"),
        (5, TypeError, "session_id must be a str, not int"),
        (None, TypeError, "session_id must be a str, not NoneType"),
    ],
)
async def test_an_id_that_is_no_path_segment_is_refused(
    api: Api, server: respx.MockRouter, sid: Any, error: type[Exception], message: str
) -> None:
    # "." and ".." would be resolved by the URL parser: ".." would GET /api/chat.
    route = server.get(url__regex=r".*")
    for method in ("get", "get_raw"):
        with pytest.raises(error) as caught:
            await fetch(api, api.client(), method, sid)
        assert str(caught.value).startswith(message)
    assert route.call_count == 0


@pytest.mark.parametrize(
    ("sid", "message"),
    [
        ("", "session_id must not be empty"),
        ("..", "session_id '..' cannot be a path segment"),
        ("a\udc80", "session_id cannot be encoded as UTF-8"),
    ],
)
def test_the_path_refuses_an_id_on_its_own_too(sid: str, message: str) -> None:
    # `sessions.get` refuses the empty and the unencodable id first (above).
    with pytest.raises(ConfigurationError) as caught:
        session_path(sid, DEFAULT_WIRE)
    assert str(caught.value) == message


async def test_dots_inside_an_id_are_kept(api: Api, server: respx.MockRouter) -> None:
    route = server.get(url__regex=r".*").mock(return_value=json_response(body()))
    await api.session(api.client(), "..a.b..")
    assert route.calls.last.request.url.raw_path == b"/api/chat/sessions/..a.b.."


async def test_a_body_that_does_not_decode(api: Api, server: respx.MockRouter) -> None:
    route = server.get(PATH).mock(
        side_effect=lambda r: httpx.Response(
            200,
            stream=Body(b"not gzip at all"),
            headers={"content-encoding": "gzip", "content-type": "application/json"},
        )
    )
    with pytest.raises(UnexpectedResponseError, match="gzip"):
        await api.session(api.client(), "sess_1")
    assert route.call_count == 1


@pytest.mark.parametrize(
    "content",
    [
        b"<html>oops</html>",
        b'{"session": {"id": "sess_1"}',
        b"\xff\xfe not utf-8",
        b"[]",
        b'"a string"',
        b'{"session": {"id": "sess_1"}}',
        b'{"messages": {"0": {}}}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["html", "cut", "bytes", "list", "string", "no-messages", "messages-dict", "deep"],
)
async def test_a_body_that_is_not_a_session(
    api: Api, server: respx.MockRouter, content: bytes
) -> None:
    server.get(PATH).mock(
        return_value=httpx.Response(
            200, content=content, headers={"content-type": "application/json", "x-request-id": "r"}
        )
    )
    with pytest.raises(UnexpectedResponseError) as info:
        await api.session(api.client(), "sess_1")
    assert info.value.status_code == 200
    assert info.value.request_id == "r"
    assert str(info.value).startswith("expected a session as JSON, got 200 application/json: ")


async def fetch(api: Api, client: Any, method: str, sid: Any = "sess_1", **options: Any) -> Any:
    """`client.sessions.get` or `get_raw`, sync or async."""
    call = getattr(client.sessions, method)
    if isinstance(client, AsyncSilviaClient):
        return await call(sid, **options)
    return call(sid, **options)


@pytest.mark.parametrize("method", ["get", "get_raw"])
async def test_each_option_of_a_call_reaches_its_request(
    api: Api, server: respx.MockRouter, method: str
) -> None:
    payload = json.dumps(body(user())).encode()
    route = server.get(PATH).mock(return_value=httpx.Response(200, content=payload))
    client = api.client(timeout=30.0)
    await fetch(api, client, method, extra_headers={"x-trace": "t1"})
    assert route.calls.last.request.headers["x-trace"] == "t1"
    await fetch(api, client, method, timeout=7.0)
    assert set(route.calls.last.request.extensions["timeout"].values()) == {7.0}
    await fetch(api, client, method, deadline=3.0)  # cuts every timeout of the call
    assert all(0 < t <= 3.0 for t in route.calls.last.request.extensions["timeout"].values())
    with pytest.raises(ResponseTooLargeError) as caught:
        await fetch(api, client, method, max_response_bytes=len(payload) - 1)
    assert caught.value.limit == len(payload) - 1
    assert await fetch(api, client, method, max_response_bytes=len(payload))
    assert route.calls.last.request.extensions["timeout"]["read"] == 30.0  # one call's options
