"""`client.chat.stream` and `chat.send`: the request and the options of a call (`extra_body=`,
`extra_query=`; headers and timeouts: test_config.py), `with_options`, `text_stream`,
`iter_with_raw`, `until_done()`, ids and reprs, and closing the response."""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable

import anyio.lowlevel
import httpx
import pytest
import respx

from silvia_client import DEFAULT_WIRE, AsyncSilviaClient, EventNames
from silvia_client.chat import DoneEvent, SessionEvent, TextEvent, UnknownEvent
from silvia_client.errors import (
    ConfigurationError,
    IncompleteTurnError,
    InternalServerError,
    ServerStreamError,
)

from .conftest import Api
from .sse import (
    BASE_URL,
    CHAT_URL,
    Body,
    TurnNotingTimeouts,
    done,
    error,
    event,
    full_turn,
    json_response,
    session,
    sse_response,
    text,
)

pytestmark = pytest.mark.anyio

SESSION_URL = BASE_URL + "/api/chat/sessions/s1"
SESSION_BODY = {"session": {"id": "s1", "title": "t"}, "messages": []}
PIECES = ["How ", "much ", "is ", "in ", "checking?"]


def serve_body(server: respx.MockRouter, make: Callable[[], Body]) -> list[Body]:
    """Serve a fresh `make()` body per request; returns the bodies served, in order."""
    bodies: list[Body] = []

    def respond(request: httpx.Request) -> httpx.Response:
        bodies.append(make())
        return sse_response(bodies[-1])

    server.post(CHAT_URL).mock(side_effect=respond)
    return bodies


def chunked() -> Body:
    # One event per chunk, so that reading stops part way through the body.
    return Body([session("s1"), *(text(p) for p in PIECES), done()])


# ------------------------------------------------------------------------------------- the request


async def test_the_request_carries_the_message_and_the_options_merged_into_it(
    api: Api, server: respx.MockRouter
) -> None:
    # The options of a call are merged into what is sent, over `with_options`' defaults; a
    # field the SDK sets itself, or a value of no accepted type (test_config.py), is
    # refused before anything is sent.
    route = server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    client = api.client()
    for field in ("message", "sessionId"):
        with pytest.raises(ConfigurationError, match=f"extra_body must not set '{field}'"):
            await api.turn(client, extra_body={field: "mine"})
        with pytest.raises(ConfigurationError, match=field):
            client.with_options(extra_body={field: "mine"})
    assert not route.calls
    await api.turn(client, "How much?")
    options = {"extra_body": {"temperature": 0.2, "tags": ["a"]}, "extra_query": {"n": 2}}
    await api.turn(client, "hello", session_id="s1", **options)
    await api.call(client.chat.send, "hi", extra_body={"x": None})
    copy = client.with_options(extra_body={"a": 1, "b": 1}, extra_query={"q": "c", "r": "c"})
    copy = copy.with_options(extra_body={"c": 1})  # added to the first copy's
    await api.turn(copy, extra_body={"b": 2}, extra_query={"r": "call"})
    await api.turn(client)  # the original keeps none
    sent = [(json.loads(c.request.content), dict(c.request.url.params)) for c in route.calls]
    assert sent == [
        ({"message": "How much?"}, {}),
        ({"temperature": 0.2, "tags": ["a"], "message": "hello", "sessionId": "s1"}, {"n": "2"}),
        ({"x": None, "message": "hi"}, {}),
        ({"a": 1, "b": 2, "c": 1, "message": "hi"}, {"q": "c", "r": "call"}),
        ({"message": "hi"}, {}),
    ]
    for call in route.calls:
        assert call.request.method == "POST"
        assert call.request.url.copy_with(query=None) == CHAT_URL
        assert call.request.headers["content-type"] == "application/json"  # Accept: test_config
    sessions = server.get(SESSION_URL).mock(return_value=json_response(SESSION_BODY))
    await api.call(copy.sessions.get, "s1")
    assert dict(sessions.calls.last.request.url.params) == {"q": "c", "r": "c"}
    # Nothing is sent until the stream is used; reading without `with` sends it (and
    # closes the response at the end).
    stream = api.stream(api.client())
    assert route.call_count == 5
    assert (await stream.until_done()).complete
    assert route.call_count == 6


async def test_a_different_wire_format_is_honoured(api: Api, server: respx.MockRouter) -> None:
    wire = dataclasses.replace(
        DEFAULT_WIRE,
        chat_path="/v2/chat",
        message_field="prompt",
        session_id_field="conversation",
        events=EventNames(session="conversation", text="delta", done="end"),
        session_id_key="id",
        text_key="t",
    )
    body = (
        event("conversation", {"id": "c1"})
        + event("delta", {"t": "Hi"})
        + event("text", {"text": "old name"})
        + event("end", {})
    )
    route = server.post("/v2/chat").mock(side_effect=lambda r: sse_response(body))
    events, failure = await api.read(api.client(wire=wire), "yo", session_id="c0")
    assert failure is None
    assert json.loads(route.calls.last.request.content) == {"prompt": "yo", "conversation": "c0"}
    assert events == [
        SessionEvent("c1"),
        TextEvent("Hi"),
        UnknownEvent("text", '{"text": "old name"}'),
        DoneEvent(),
    ]


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


# ------------------------------------------------------------------------ the wire, as sent


async def test_iter_with_raw_gives_each_event_beside_its_raw_form(
    api: Api, server: respx.MockRouter
) -> None:
    wire = session("s1") + text("Hi") + b"event: shiny\ndata: {not json\n\n" + done()
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(wire))
    async with api.stream(api.client()) as stream:
        # The raw form comes from the same loop as the events, so a reader may ask for
        # it at any point: the events not read yet come with theirs, none twice.
        first = await stream.next()
        pairs = await stream.with_raw()
        turn = await stream.until_done()
    assert isinstance(first, SessionEvent)
    assert [raw.name for raw, _ in pairs] == ["text", "shiny", "done"]
    assert [raw.data for raw, _ in pairs] == [json.dumps({"text": "Hi"}), "{not json", "{}"]
    assert [type(event) for _, event in pairs] == [TextEvent, UnknownEvent, DoneEvent]
    assert turn.complete
    assert turn.text == "Hi"
    assert repr(pairs[0][0]) == "RawEvent(name='text')"  # the data is kept out of the repr
    # The error event comes beside its raw form before the error.
    wire = session("s1") + error("overloaded")
    pairs = []
    async with api.stream(api.client()) as stream:
        with pytest.raises(ServerStreamError):
            await stream.with_raw(pairs)
    assert [raw.name for raw, _ in pairs] == ["session", "error"]
    assert json.loads(pairs[0][0].data) == {"sessionId": "s1"}


# ------------------------------------------------------------------------------ ids and reprs


async def test_a_stream_shows_its_ids_and_state_and_a_turn_and_a_session_their_request_id(
    api: Api, server: respx.MockRouter
) -> None:
    # The request id is the id a user quotes to support.
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn("sess_r")))
    stream = api.stream(api.client())
    states = [repr(stream.raw)]
    assert stream.raw.response is None
    async with stream:
        states.append(repr(stream.raw))
        turn = await stream.until_done()
        states.append(repr(stream.raw))
    states.append(repr(stream.raw))
    name = "AsyncChatStream" if api.is_async else "ChatStream"
    assert states == [
        f"{name}(request_id=None, session_id=None, state='not started')",
        f"{name}(request_id='req_123', session_id=None, state='open')",
        f"{name}(request_id='req_123', session_id='sess_r', state='done')",
        f"{name}(request_id='req_123', session_id='sess_r', state='done')",
    ]
    assert (turn.complete, turn.request_id) == (True, "req_123")
    response = stream.raw.response  # the turn's own `httpx.Response`, for raw access
    assert isinstance(response, httpx.Response)
    assert (response.status_code, response.headers["x-request-id"]) == (200, "req_123")
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


def test_every_constructor_argument_is_documented_and_a_get_has_no_extra_body() -> None:
    # The sync client, its docstring and its signatures are made from these (test_twins.py).
    doc = AsyncSilviaClient.__doc__ or ""
    for name in inspect.signature(AsyncSilviaClient).parameters:
        assert f"- `{name}`:" in doc, name
    sessions = AsyncSilviaClient(base_url=BASE_URL).sessions
    assert "extra_body" not in inspect.signature(sessions.get).parameters
    assert "extra_query" in inspect.signature(sessions.get_raw).parameters


# ----------------------------------------------------------------------------------- text and turn


async def test_text_stream_and_until_done_after_a_full_or_partial_iteration_read_the_rest(
    api: Api, server: respx.MockRouter
) -> None:
    bodies = serve_body(server, chunked)
    async with api.stream(api.client()) as stream:
        events = await stream.events()
        first = await stream.until_done()
        again = await stream.until_done()
    assert len(events) == len(PIECES) + 2
    assert first is again
    assert first.text == "".join(PIECES)
    assert first.complete
    async with api.stream(api.client()) as stream:
        seen = [await stream.next(), await stream.next()]
        assert bodies[1].sent < len(bodies[1].chunks)  # really part way
        turn = await stream.until_done()
    assert seen == [SessionEvent("s1"), TextEvent(PIECES[0])]
    assert turn.text == "".join(PIECES)  # the pieces already read are in the turn too
    assert turn.complete
    async with api.stream(api.client()) as stream:
        assert await stream.texts() == PIECES
        turn = await stream.until_done()
    assert (turn.text, turn.session_id, turn.complete) == ("".join(PIECES), "s1", True)
    assert len(bodies) == 3
    assert all(body.closed for body in bodies)


# ----------------------------------------------------------------------------------------- closing


async def eventually(condition: Callable[[], bool], turns: int = 100) -> bool:
    """True once `condition()` holds, letting the event loop run at most `turns` times."""
    for _ in range(turns):
        if condition():
            return True
        await anyio.lowlevel.checkpoint()
    return condition()


async def test_every_way_out_closes_the_response(api: Api, server: respx.MockRouter) -> None:
    bodies = serve_body(server, chunked)
    client = api.client()
    async with api.stream(client):  # leaving `with` before reading
        pass
    assert bodies[-1].closed
    assert bodies[-1].sent == 0
    async with api.stream(client) as stream:  # leaving `with` part way
        await stream.next()
        assert not bodies[-1].closed
    assert bodies[-1].closed
    assert bodies[-1].sent < len(bodies[-1].chunks)
    await (await api.stream(client).__aenter__()).close()  # close() of a stream never read
    assert bodies[-1].closed
    stream = api.stream(client)
    await stream.next()
    await stream.close()  # by the reader, between two events
    assert bodies[-1].closed
    assert "state='closed'" in repr(stream.raw)
    # What arrived is kept; the turn is not complete.
    with pytest.raises(IncompleteTurnError) as info:
        await stream.until_done()
    assert info.value.turn.session_id == "s1"
    assert not info.value.turn.complete
    # No `with`: only the break can close it; the async client's, once the event loop has
    # run the async generator's finalizer.
    for text_only in (False, True):
        if isinstance(client, AsyncSilviaClient):
            async for _ in (
                client.chat.stream("hi").text_stream if text_only else client.chat.stream("hi")
            ):
                break
            assert await eventually(lambda: bodies[-1].closed)
        else:
            for _ in (
                client.chat.stream("hi").text_stream if text_only else client.chat.stream("hi")
            ):
                break
            assert bodies[-1].closed
        assert bodies[-1].sent < len(bodies[-1].chunks)
    assert len(bodies) == 6
