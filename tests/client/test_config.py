"""Configuration: base URL and token, timeouts, headers, whose HTTP client is closed; the
one home of the defaults, and the one table that checks every option."""

from __future__ import annotations

import importlib
import inspect
import json
import math

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client._options import RULES, RequestOptions, check
from silvia_client._retries import RetryPolicy
from silvia_client._wire import DEFAULTS
from silvia_client.errors import ConfigurationError

from .conftest import Api
from .sse import (
    BASE_URL,
    CHAT_URL,
    TOKEN,
    TurnNotingTimeouts,
    full_turn,
    json_response,
    sse_response,
)

pytestmark = pytest.mark.anyio

SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}


def chat_route(server: respx.MockRouter, url: str = CHAT_URL) -> respx.Route:
    return server.post(url).mock(side_effect=lambda request: sse_response(full_turn()))


# --------------------------------------------------------------------------------- base URL, token


async def test_base_url_and_token_from_arguments(
    api: Api, server: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", "https://env.invalid")
    monkeypatch.setenv("SILVIA_TOKEN", "env-token")
    route = chat_route(server)
    turn = await api.turn(api.client(base_url=BASE_URL, token=TOKEN))
    assert turn.complete
    request = route.calls.last.request
    assert request.url == CHAT_URL
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_base_url_and_token_from_environment(
    api: Api, server: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", "https://env.silvia.test/")
    monkeypatch.setenv("SILVIA_TOKEN", "env-token-42")
    route = chat_route(server, "https://env.silvia.test/api/claude")
    client = api.client(base_url=None, token=None)
    await api.turn(client)
    request = route.calls.last.request
    assert request.url == "https://env.silvia.test/api/claude"  # trailing slash not doubled
    assert request.headers["authorization"] == "Bearer env-token-42"


def test_no_base_url_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for cls in (SilviaClient, AsyncSilviaClient):
        for base_url in (None, ""):
            with pytest.raises(ConfigurationError, match="SILVIA_BASE_URL"):
                cls(base_url=base_url)


async def test_without_a_token_no_authorization_is_sent(
    api: Api, server: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    route = chat_route(server)
    await api.turn(api.client(token=None))
    assert "authorization" not in route.calls.last.request.headers


# ---------------------------------------------------------------------------------------- timeouts


async def test_a_chat_turn_waits_for_its_head_the_read_timeout(
    api: Api, server: respx.MockRouter
) -> None:
    # The timeouts the request went out with: the read phase bounds the wait for the
    # head; the stream's reads after it wait `idle_timeout` (test_timeout_bounds.py).
    server.post(CHAT_URL).mock(side_effect=(turns := TurnNotingTimeouts()))
    timeout = httpx.Timeout(connect=3.0, read=40.0, write=5.0, pool=6.0)
    await api.turn(api.client(timeout=timeout, idle_timeout=7.5))
    assert turns.sent[-1] == {
        "connect": 3.0,
        "read": 40.0,
        "write": 5.0,
        "pool": 6.0,
    }


async def test_get_uses_the_configured_timeouts(api: Api, server: respx.MockRouter) -> None:
    route = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    timeout = httpx.Timeout(connect=3.0, read=40.0, write=5.0, pool=6.0)
    # A caller's client with other defaults: the SDK's timeouts still apply.
    http = (httpx.AsyncClient if api.is_async else httpx.Client)(timeout=99)
    for kwargs in ({}, {"http_client": http}):
        client = api.client(timeout=timeout, idle_timeout=7.5, **kwargs)
        await api.session(client, "s1")
        sent = route.calls.last.request.extensions["timeout"]
        assert sent == {"connect": 3.0, "read": 40.0, "write": 5.0, "pool": 6.0}, kwargs
    await _close_http(http)


async def test_a_single_number_timeout(api: Api, server: respx.MockRouter) -> None:
    server.post(CHAT_URL).mock(side_effect=(turns := TurnNotingTimeouts()))
    await api.turn(api.client(timeout=4.0, idle_timeout=11.0))
    assert turns.sent[-1] == {
        "connect": 4.0,
        "read": 4.0,  # the head's wait; `idle_timeout` governs after it
        "write": 4.0,
        "pool": 4.0,
    }


# ----------------------------------------------------------------------------------------- headers


async def test_chat_request_headers(api: Api, server: respx.MockRouter) -> None:
    route = chat_route(server)
    client = api.client(default_headers={"x-app": "notebook", "X-Trace": "t-1"})
    await api.turn(client)
    headers = route.calls.last.request.headers
    assert headers["x-app"] == "notebook"
    assert headers["x-trace"] == "t-1"
    assert headers["accept"] == "text/event-stream"
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["user-agent"].startswith("silvia-client/")


async def test_session_request_headers(api: Api, server: respx.MockRouter) -> None:
    route = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    await api.session(api.client(default_headers={"x-app": "notebook"}), "s1")
    headers = route.calls.last.request.headers
    assert headers["x-app"] == "notebook"
    assert headers["accept"] == "application/json"
    assert headers["authorization"] == f"Bearer {TOKEN}"


async def test_default_headers_replace_ours_whatever_their_case(
    api: Api, server: respx.MockRouter
) -> None:
    route = chat_route(server)
    # A caller's User-Agent replaces the SDK's; a caller's Accept cannot break the protocol.
    client = api.client(default_headers={"User-Agent": "my-app/1", "Accept": "application/json"})
    await api.turn(client)
    headers = route.calls.last.request.headers
    assert headers.get_list("user-agent") == ["my-app/1"]
    assert headers.get_list("accept") == ["text/event-stream"]


async def test_the_token_wins_over_a_default_authorization_header(
    api: Api, server: respx.MockRouter
) -> None:
    route = chat_route(server)
    await api.turn(api.client(default_headers={"Authorization": "Basic abc"}))
    assert route.calls.last.request.headers.get_list("authorization") == [f"Bearer {TOKEN}"]


# ------------------------------------------------------------------------------------ whose client


async def _close_http(http: object) -> None:
    if isinstance(http, httpx.AsyncClient):
        await http.aclose()
    elif isinstance(http, httpx.Client):
        http.close()


async def test_a_callers_http_client_is_used(api: Api) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "GET":
            return json_response(SESSION_BODY)
        return sse_response(full_turn())

    transport = httpx.MockTransport(handler)
    http = (httpx.AsyncClient if api.is_async else httpx.Client)(transport=transport)
    client = api.client(http_client=http)
    assert (await api.turn(client)).complete
    assert (await api.session(client, "s1")).id == "s1"
    assert [r.method for r in seen] == ["POST", "GET"]
    assert json.loads(seen[0].content) == {"message": "hi"}
    await _close_http(http)


async def test_a_callers_http_client_is_not_closed(api: Api) -> None:
    http = httpx.AsyncClient() if api.is_async else httpx.Client()
    client = api.client(http_client=http)
    await api.close(client)
    assert not http.is_closed
    # Nor by the context manager.
    if isinstance(client, AsyncSilviaClient):
        async with client:
            pass
    else:
        with client:
            pass
    assert not http.is_closed
    await _close_http(http)
    assert http.is_closed


async def test_the_sdks_own_http_client_is_closed_by_close_and_with(api: Api) -> None:
    client = api.client()
    assert not client._http.is_closed
    await api.close(client)
    assert client._http.is_closed
    if isinstance(client, AsyncSilviaClient):
        async with api.client() as client:
            assert not client._http.is_closed
    else:
        with api.client() as client:
            assert not client._http.is_closed
    assert client._http.is_closed


# --------------------------------------------------------------------------- one home for defaults


def test_the_constructors_defaults_are_the_one_defaults_value() -> None:
    for cls in (SilviaClient, AsyncSilviaClient):
        signature = inspect.signature(cls).parameters
        for name in ("timeout", "idle_timeout", "max_event_bytes", "max_response_bytes"):
            assert signature[name].default == getattr(DEFAULTS, name), (cls, name)
        for name in ("max_retries", "retry_backoff"):
            assert signature[name].default == getattr(DEFAULTS, name), (cls, name)
    assert RetryPolicy() == RetryPolicy(
        max_retries=DEFAULTS.max_retries,
        initial_delay=DEFAULTS.retry_backoff,
        max_delay=DEFAULTS.max_backoff,
        max_retry_after=DEFAULTS.max_retry_after,
    )


def test_no_module_keeps_a_default_of_its_own() -> None:
    # The names the defaults had before they moved to `DEFAULTS`, in `_wire.py`.
    gone = {
        "_options": ["DEFAULT_TIMEOUT", "DEFAULT_IDLE_TIMEOUT", "DEFAULT_CHAT_DEADLINE"],
        "_retries": ["RETRY_STATUSES", "NOT_PROCESSED_STATUSES"],
        "_responses": ["ERROR_BODY_MAX_BYTES", "BODY_PREVIEW_CHARS", "MAX_RETRY_AFTER"],
        "_body": ["DRAIN_BYTES", "DRAIN_SECONDS", "PIECE", "ACCEPT_ENCODING"],
        "_async._body": ["DRAIN_BYTES", "DRAIN_SECONDS", "PIECE", "ACCEPT_ENCODING"],
        "_sync._body": ["DRAIN_BYTES", "DRAIN_SECONDS", "PIECE", "ACCEPT_ENCODING"],
        "_base": ["BASE_URL_ENV", "TOKEN_ENV"],
        "_async._client": ["BASE_URL_ENV", "TOKEN_ENV"],
        "_sync._client": ["BASE_URL_ENV", "TOKEN_ENV"],
    }
    for module, names in gone.items():
        loaded = importlib.import_module(f"silvia_client.{module}")
        assert not [name for name in names if hasattr(loaded, name)], module


# ------------------------------------------------------------------------------ the one table


def test_every_option_is_checked_by_its_row_of_the_table() -> None:
    # A value of no accepted type is refused with the row's own message, naming the argument.
    for name, rule in RULES.items():
        if rule.type_error:  # the message and the session id: as Python's own functions
            with pytest.raises(TypeError, match=f"^{name} must be a str, not object$"):
                check(name, object())
            continue
        with pytest.raises(ConfigurationError) as caught:
            check(name, object())
        assert str(caught.value) == rule.error
        assert str(caught.value).startswith(name)


def test_a_row_reads_what_it_accepts_into_what_the_client_keeps() -> None:
    for name, value, kept in [
        ("timeout", 5, httpx.Timeout(5.0)),
        ("timeout", None, httpx.Timeout(None)),
        ("idle_timeout", 2, 2.0),
        ("deadline", None, None),
        ("deadline", math.inf, math.inf),
        ("max_event_bytes", 10, 10),
        ("max_retries", 0, 0),
        ("retry_backoff", 0, 0.0),
        ("extra_headers", {"X-A": "1"}, httpx.Headers({"x-a": "1"})),
        ("default_headers", None, httpx.Headers()),
    ]:
        assert check(name, value) == kept, (name, value)


def test_a_call_leaves_its_options_given_as_none_to_the_client() -> None:
    with SilviaClient(base_url=BASE_URL, deadline=7, max_response_bytes=99) as client:
        call = client._call("get", RequestOptions())
        assert (call.seconds, call.max_response_bytes) == (7.0, 99)
        call = client._call("get", RequestOptions(deadline=5, max_response_bytes=9))
        assert (call.seconds, call.max_response_bytes) == (5.0, 9)
