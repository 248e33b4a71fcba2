"""Per-request options (`extra_body=`, `extra_query=`; headers and timeouts: test_config.py),
`with_options`, `chat.send`, the advanced hooks, and ids: the request id on a finished turn
or session (the id a user quotes to support), and what an error names."""

from __future__ import annotations

import inspect
import json

import httpx
import pytest
import respx

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.chat import DoneEvent, SessionEvent, TextEvent
from silvia_client.errors import (
    APIConnectionError,
    APITimeoutError,
    ConfigurationError,
    IncompleteTurnError,
    InternalServerError,
    ServerStreamError,
    StreamDisconnectedError,
)
from silvia_client.sessions import parse_session

from .conftest import Api
from .sse import (
    BASE_URL,
    CHAT_URL,
    SSE_HEADERS,
    TOKEN,
    Body,
    TurnNotingTimeouts,
    done,
    error,
    full_turn,
    json_response,
    session,
    sse_response,
    text,
)

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}


def chat_route(server: respx.MockRouter) -> respx.Route:
    return server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))


# ---------------------------------------------------------------- extra_body=, extra_query=
# Merged into what is sent, over `with_options`' defaults; a field the SDK sets itself, or a
# value of no accepted type (test_config.py), refused before anything is sent.


async def test_body_and_query_are_merged_into_the_turn_as_sent(
    api: Api, server: respx.MockRouter
) -> None:
    route = chat_route(server)
    client = api.client()
    await api.turn(
        client,
        "hello",
        session_id="s1",
        extra_body={"temperature": 0.2, "tags": ["a"]},
        extra_query={"beta": "yes", "n": 2},
    )
    await api.call(client.chat.send, "hi", extra_body={"x": None})
    first, second = (call.request for call in route.calls)
    assert json.loads(first.content) == {
        "temperature": 0.2,
        "tags": ["a"],
        "message": "hello",
        "sessionId": "s1",
    }
    assert dict(first.url.params) == {"beta": "yes", "n": "2"}
    assert json.loads(second.content) == {"x": None, "message": "hi"}
    assert not second.url.params


async def test_a_session_get_carries_the_query(api: Api, server: respx.MockRouter) -> None:
    route = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    client = api.client()
    await api.call(client.sessions.get, "s1", extra_query={"include": "all"})
    await api.call(client.sessions.get_raw, "s1", extra_query={"v": 1.5})
    assert [dict(call.request.url.params) for call in route.calls] == [
        {"include": "all"},
        {"v": "1.5"},
    ]


async def test_a_field_the_sdk_sets_is_refused_before_anything_is_sent(
    api: Api, server: respx.MockRouter
) -> None:
    route = chat_route(server)
    client = api.client()
    for field in ("message", "sessionId"):
        with pytest.raises(ConfigurationError, match=f"extra_body must not set '{field}'"):
            await api.turn(client, extra_body={field: "mine"})
        with pytest.raises(ConfigurationError, match=field):
            client.with_options(extra_body={field: "mine"})
    assert not route.calls


async def test_with_options_defaults_are_merged_under_the_call_s_own(
    api: Api, server: respx.MockRouter
) -> None:
    route = chat_route(server)
    client = api.client()
    copy = client.with_options(extra_body={"a": 1, "b": 1}, extra_query={"q": "c", "r": "c"})
    copy = copy.with_options(extra_body={"c": 1})  # added to the first copy's
    await api.turn(copy, extra_body={"b": 2}, extra_query={"r": "call"})
    await api.turn(client)  # the original keeps none
    sent, plain = (call.request for call in route.calls)
    assert json.loads(sent.content) == {"a": 1, "b": 2, "c": 1, "message": "hi"}
    assert dict(sent.url.params) == {"q": "c", "r": "call"}
    assert json.loads(plain.content) == {"message": "hi"}
    assert not plain.url.params
    sessions = server.get("/api/chat/sessions/s1").mock(return_value=json_response(SESSION_BODY))
    await api.call(copy.sessions.get, "s1")
    assert dict(sessions.calls.last.request.url.params) == {"q": "c", "r": "c"}


def test_a_get_has_no_extra_body() -> None:
    for cls in (SilviaClient, AsyncSilviaClient):
        client = cls(base_url="https://silvia.test")
        assert "extra_body" not in inspect.signature(client.sessions.get).parameters
        assert "extra_query" in inspect.signature(client.sessions.get_raw).parameters


# -------------------------------------------------------------------------------- with_options


async def test_with_options_is_a_configured_copy(api: Api, server: respx.MockRouter) -> None:
    chat = server.post(CHAT_URL).mock(side_effect=(turns := TurnNotingTimeouts()))
    client = api.client(default_headers={"x-a": "1"}, idle_timeout=9.0)
    other = client.with_options(
        timeout=2.0,
        idle_timeout=3.0,
        default_headers={"x-b": "2"},
        deadline=30,
        max_retries=0,
        max_event_bytes=1000,
        max_response_bytes=5000,
    )
    assert type(other) is type(client)
    assert (other.idle_timeout, other.deadline, other.retries.max_retries) == (3.0, 30, 0)
    assert (other.max_event_bytes, other.max_response_bytes) == (1000, 5000)
    assert (client.idle_timeout, client.deadline, client.retries.max_retries) == (9.0, None, 2)
    await api.turn(other)
    sent = chat.calls.last.request
    assert (sent.headers["x-a"], sent.headers["x-b"]) == ("1", "2")
    assert turns.sent[-1] == {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}
    await api.turn(client)
    assert "x-b" not in chat.calls.last.request.headers
    assert repr(other) == repr(client)
    route = server.get(SESSION_URL).mock(return_value=httpx.Response(500))
    with pytest.raises(InternalServerError):
        await api.session(other, "s1")
    assert route.call_count == 1  # retried as told: not at all


# ------------------------------------------------------------------------------------ chat.send


async def test_send_raises_the_streams_error_with_the_partial_turn(
    api: Api, server: respx.MockRouter
) -> None:
    body = Body(session("s1") + text("Hi"), fail=httpx.ReadError("reset"))
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(body))
    client = api.client()
    with pytest.raises(StreamDisconnectedError) as caught:
        await api.call(client.chat.send, "hi")
    assert caught.value.turn.text == "Hi"
    assert body.closed


# ------------------------------------------------------------------------ the wire, as sent


async def test_iter_with_raw_gives_each_event_beside_its_raw_form(
    api: Api, server: respx.MockRouter
) -> None:
    wire = session("s1") + text("Hi") + b"event: shiny\ndata: {not json\n\n" + done()
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(wire))
    async with api.stream(api.client()) as stream:
        pairs = await stream.with_raw()
        turn = await stream.until_done()
    assert [raw.name for raw, _ in pairs] == ["session", "text", "shiny", "done"]
    assert [raw.data for raw, _ in pairs] == [
        json.dumps({"sessionId": "s1"}),
        json.dumps({"text": "Hi"}),
        "{not json",
        "{}",
    ]
    assert [type(event) for _, event in pairs][:2] == [SessionEvent, TextEvent]
    assert isinstance(pairs[-1][1], DoneEvent)
    assert turn.complete
    assert repr(pairs[1][0]) == "RawEvent(name='text')"  # the data is kept out of the repr
    # The error event comes beside its raw form before the error.
    wire = session("s1") + error("overloaded")
    pairs = []
    async with api.stream(api.client()) as stream:
        with pytest.raises(ServerStreamError):
            await stream.with_raw(pairs)
    assert [raw.name for raw, _ in pairs] == ["session", "error"]


def test_iter_with_raw_after_a_first_read_gives_the_rest_beside_their_raw_form(
    server: respx.MockRouter,
) -> None:
    # The raw form comes from the same loop as the events, so a reader may ask for
    # it at any point: the events not read yet come with theirs, none twice.
    wire = session("s1") + text("Hi") + text(" there") + done()
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(wire))
    with (
        SilviaClient(base_url=BASE_URL, token=TOKEN) as client,
        client.chat.stream("hi") as stream,
    ):
        events = iter(stream)  # kept: an iterator dropped mid-stream closes the stream
        first = next(events)
        rest = list(stream.iter_with_raw())
        turn = stream.until_done()
    assert isinstance(first, SessionEvent)
    assert [raw.name for raw, _ in rest] == ["text", "text", "done"]
    assert [raw.data for raw, _ in rest][:2] == [
        json.dumps({"text": "Hi"}),
        json.dumps({"text": " there"}),
    ]
    assert turn.text == "Hi there"


async def test_get_raw_is_the_body_as_sent(api: Api, server: respx.MockRouter) -> None:
    sent = json.dumps(SESSION_BODY, indent=1).encode()
    route = server.get(SESSION_URL).mock(
        side_effect=[httpx.Response(503), httpx.Response(200, content=sent)]
    )
    client = api.client(retry_backoff=0)
    body = await api.call(client.sessions.get_raw, "s1", extra_headers={"x-a": "1"})
    assert body == sent
    assert route.call_count == 2  # retried as `get` is
    assert parse_session(json.loads(body), "s1").id == "s1"


# ------------------------------------------------------------------------------ ids and reprs


async def test_a_turn_and_a_session_carry_their_request_id_the_id_quoted_to_support(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    turn = await api.turn(api.client())
    assert turn.complete
    assert turn.request_id == SSE_HEADERS["x-request-id"]
    headers = {"content-type": "text/event-stream"}  # no x-request-id
    server.post(CHAT_URL).mock(
        side_effect=lambda r: httpx.Response(200, content=full_turn(), headers=headers)
    )
    assert (await api.turn(api.client())).request_id is None
    server.get(SESSION_URL).mock(
        return_value=httpx.Response(200, json=SESSION_BODY, headers={"x-request-id": "req_s"})
    )
    got = await api.session(api.client(), "s1")
    assert (got.request_id, got.id) == ("req_s", "s1")


async def test_a_connection_error_names_scheme_host_and_port_only(
    api: Api, server: respx.MockRouter
) -> None:
    for fail, cls in [
        (httpx.ConnectError, APIConnectionError),
        (httpx.ConnectTimeout, APITimeoutError),
    ]:
        server.get(url__startswith=BASE_URL).mock(side_effect=fail("refused"))
        with pytest.raises(cls) as caught:
            await api.session(api.client(max_retries=0), "secret-session")
        message = str(caught.value)
        assert "https://silvia.test:443" in message, fail
        assert "secret-session" not in message, fail
        assert "/api/" not in message, fail


async def test_a_stream_error_names_its_request_and_session(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(session("sess_9") + text("Hi")))
    _, failure = await api.read(api.client())
    assert isinstance(failure, IncompleteTurnError)
    assert (failure.request_id, failure.session_id) == ("req_123", "sess_9")
    assert str(failure) == "the stream ended without `done` (request id req_123, session sess_9)"


async def test_a_stream_has_a_repr_with_its_ids_and_state(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn("sess_r")))
    stream = api.stream(api.client())
    states = [repr(stream.raw)]
    async with stream:
        states.append(repr(stream.raw))
        await stream.until_done()
        states.append(repr(stream.raw))
    states.append(repr(stream.raw))
    name = "AsyncChatStream" if api.is_async else "ChatStream"
    assert states == [
        f"{name}(request_id=None, session_id=None, state='not started')",
        f"{name}(request_id='req_123', session_id=None, state='open')",
        f"{name}(request_id='req_123', session_id='sess_r', state='done')",
        f"{name}(request_id='req_123', session_id='sess_r', state='done')",
    ]


def test_every_constructor_argument_is_documented() -> None:
    # Each client's, in its docstring (the sync one's is generated from the async one's).
    for client in (SilviaClient, AsyncSilviaClient):
        doc = client.__doc__ or ""
        for name in inspect.signature(client).parameters:
            assert f"- `{name}`:" in doc, (client.__name__, name)
    assert list(inspect.signature(AsyncSilviaClient).parameters) == list(
        inspect.signature(SilviaClient).parameters
    )
