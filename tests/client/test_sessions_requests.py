"""`client.sessions.get` requests: the id as a path segment, bodies that are no session, options."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from silvia_client import DEFAULT_WIRE
from silvia_client._sse import most_values
from silvia_client._wire import DEFAULTS
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
    for sid, path in [
        ("a/b c?d#e%f", b"/api/chat/sessions/a%2Fb%20c%3Fd%23e%25f"),
        ("..a.b..", b"/api/chat/sessions/..a.b.."),  # dots inside an id are kept
    ]:
        await api.session(api.client(), sid)
        assert route.calls.last.request.method == "GET"
        assert route.calls.last.request.url.raw_path == path, sid


async def test_an_id_that_is_no_path_segment_is_refused(api: Api, server: respx.MockRouter) -> None:
    # "." and ".." would be resolved by the URL parser: ".." would GET /api/chat.
    route = server.get(url__regex=r".*")
    refused: list[tuple[Any, type[Exception], str]] = [
        ("", ConfigurationError, "session_id must not be empty"),
        (".", ConfigurationError, "session_id '.' cannot be a path segment"),
        ("..", ConfigurationError, "session_id '..' cannot be a path segment"),
        ("a\ud800", ConfigurationError, "session_id cannot be encoded as UTF-8 (it holds a lone"),
        (5, TypeError, "session_id must be a str, not int"),
        (None, TypeError, "session_id must be a str, not NoneType"),
    ]
    for sid, error, message in refused:
        for method in ("get", "get_raw"):
            with pytest.raises(error) as caught:
                await api.call(getattr(api.client().sessions, method), sid)
            assert str(caught.value).startswith(message), (sid, method)
    assert route.call_count == 0
    # `sessions.get` refuses the empty and the unencodable id first; the path does too.
    for sid, message in [
        ("", "session_id must not be empty"),
        ("..", "session_id '..' cannot be a path segment"),
        ("a\udc80", "session_id cannot be encoded as UTF-8"),
    ]:
        with pytest.raises(ConfigurationError) as caught:
            session_path(sid, DEFAULT_WIRE)
        assert str(caught.value) == message


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


async def test_a_body_that_is_not_a_session(api: Api, server: respx.MockRouter) -> None:
    for content in [
        b"<html>oops</html>",
        b'{"session": {"id": "sess_1"}',
        b"\xff\xfe not utf-8",
        b"[]",
        b'"a string"',
        b'{"session": {"id": "sess_1"}}',
        b'{"messages": {"0": {}}}',
        b"[" * 100_000 + b"]" * 100_000,
    ]:
        server.get(PATH).mock(
            return_value=httpx.Response(
                200,
                content=content,
                headers={"content-type": "application/json", "x-request-id": "r"},
            )
        )
        with pytest.raises(UnexpectedResponseError) as info:
            await api.session(api.client(), "sess_1")
        assert info.value.status_code == 200, content[:20]
        assert info.value.request_id == "r", content[:20]
        shown = str(info.value)
        assert shown.startswith("expected a session as JSON, got 200 application/json: "), shown


async def test_each_option_of_a_call_reaches_its_request(
    api: Api, server: respx.MockRouter
) -> None:
    for method in ("get", "get_raw"):
        await _each_option_reaches(api, server, method)


async def _each_option_reaches(api: Api, server: respx.MockRouter, method: str) -> None:
    payload = json.dumps(body(user())).encode()
    route = server.get(PATH).mock(return_value=httpx.Response(200, content=payload))
    client = api.client(timeout=30.0)

    async def fetch(**options: Any) -> Any:
        return await api.call(getattr(client.sessions, method), "sess_1", **options)

    await fetch(extra_headers={"x-trace": "t1"}, extra_query={"q": 2})
    assert route.calls.last.request.headers["x-trace"] == "t1"
    assert route.calls.last.request.url.params["q"] == "2"
    await fetch(timeout=7.0)
    assert set(route.calls.last.request.extensions["timeout"].values()) == {7.0}
    await fetch(deadline=3.0)  # cuts every timeout of the call
    assert all(0 < t <= 3.0 for t in route.calls.last.request.extensions["timeout"].values())
    with pytest.raises(ResponseTooLargeError) as caught:
        await fetch(max_response_bytes=len(payload) - 1)
    assert caught.value.limit == len(payload) - 1
    assert await fetch(max_response_bytes=len(payload))
    assert route.calls.last.request.extensions["timeout"]["read"] == 30.0  # one call's options


async def test_a_body_of_as_many_values_as_the_cap_is_read(
    api: Api, server: respx.MockRouter
) -> None:
    # The cap is max_response_bytes // bytes_per_value values, never below min_values
    # (`DEFAULTS`); each comma counts as one, even in a string.
    payload = json.dumps(body(user("," * DEFAULTS.min_values))).encode()
    server.get(PATH).mock(return_value=httpx.Response(200, content=payload))
    cap = most_values(payload) * DEFAULTS.bytes_per_value
    assert cap > len(payload)  # the byte limit is not what refuses below
    client = api.client()
    assert await api.call(client.sessions.get, "sess_1", max_response_bytes=cap)
    with pytest.raises(ResponseTooLargeError, match="JSON values") as caught:
        await api.call(client.sessions.get, "sess_1", max_response_bytes=cap - 1)
    assert caught.value.limit == cap - 1
