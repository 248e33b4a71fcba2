"""`client.chat.stream`: the request, `text_stream`, `until_done()`, and closing the response."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable

import httpx
import pytest
import respx

from silvia_client import DEFAULT_WIRE, AsyncSilviaClient, EventNames
from silvia_client.chat import DoneEvent, SessionEvent, TextEvent, UnknownEvent
from silvia_client.errors import IncompleteTurnError

from .conftest import Api
from .sse import (
    BASE_URL,
    CHAT_URL,
    TOKEN,
    Body,
    done,
    event,
    full_turn,
    session,
    sse_response,
    text,
)

pytestmark = pytest.mark.anyio

PIECES = ["How ", "much ", "is ", "in ", "checking?"]


def pieces_turn() -> bytes:
    return session("s1") + b"".join(text(p) for p in PIECES) + done()


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


async def test_chat_request(api: Api, server: respx.MockRouter) -> None:
    route = server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(full_turn()))
    for session_id, body in [
        (None, {"message": "How much?"}),
        ("sess_7", {"message": "How much?", "sessionId": "sess_7"}),
    ]:
        await api.turn(api.client(), "How much?", session_id=session_id)
        request = route.calls.last.request
        assert request.method == "POST"
        assert request.url == CHAT_URL
        assert json.loads(request.content) == body
        assert request.headers["content-type"] == "application/json"
        assert request.headers["accept"] == "text/event-stream"
    assert route.call_count == 2
    # Nothing is sent until the stream is used; reading without `with` sends it (and
    # closes the response at the end).
    stream = api.stream(api.client())
    assert route.call_count == 2
    assert stream.raw.request_id is None
    turn = await stream.until_done()
    assert route.call_count == 3
    assert turn.complete
    assert stream.raw.request_id == "req_123"


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


# ----------------------------------------------------------------------------------- text and turn


async def test_text_stream_yields_the_deltas_and_builds_the_turn(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(pieces_turn()))
    async with api.stream(api.client()) as stream:
        deltas = await stream.texts()
        turn = await stream.until_done()
    assert deltas == PIECES
    assert turn.text == "".join(PIECES)
    assert turn.session_id == "s1"
    assert turn.complete


async def test_until_done_after_a_full_or_partial_iteration_reads_the_rest(
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
    assert len(bodies) == 2
    assert bodies[0].closed
    assert bodies[1].closed


# ----------------------------------------------------------------------------------------- closing


def async_client() -> AsyncSilviaClient:
    return AsyncSilviaClient(base_url=BASE_URL, token=TOKEN)


async def eventually(condition: Callable[[], bool], turns: int = 100) -> bool:
    """True once `condition()` holds, letting the event loop run at most `turns` times."""
    for _ in range(turns):
        if condition():
            return True
        await asyncio.sleep(0)
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
    await stream.close()
    assert bodies[-1].closed
    # What arrived is kept; the turn is not complete.
    with pytest.raises(IncompleteTurnError) as info:
        await stream.until_done()
    assert info.value.turn.session_id == "s1"
    assert not info.value.turn.complete
    # No `with`: only the break can close it; the async client's, once the event loop has
    # run the async generator's finalizer.
    if isinstance(client, AsyncSilviaClient):
        async for event in client.chat.stream("hi"):
            if isinstance(event, TextEvent):
                break
        assert await eventually(lambda: bodies[-1].closed)
        assert bodies[-1].sent < len(bodies[-1].chunks)
        async for _ in client.chat.stream("hi").text_stream:
            break
    else:
        for event in client.chat.stream("hi"):
            if isinstance(event, TextEvent):
                break
        assert bodies[-1].closed
        assert bodies[-1].sent < len(bodies[-1].chunks)
        for _ in client.chat.stream("hi").text_stream:
            break
    assert await eventually(lambda: bodies[-1].closed)
    assert len(bodies) == 6


async def test_cancelling_the_task_closes_the_response_with_or_without_with(
    server: respx.MockRouter,
) -> None:
    # The body sends a session and a text event, then goes silent.
    bodies = serve_body(server, lambda: Body([session("s1"), text("a")], hang=True))
    received: list[object] = []
    async with async_client() as client:
        for entered in (True, False):
            received.clear()

            async def consume(entered: bool = entered) -> None:
                stream = client.chat.stream("hi")
                if entered:
                    async with stream:
                        async for event in stream:
                            received.append(event)
                else:
                    async for event in stream:
                        received.append(event)

            task = asyncio.ensure_future(consume())
            assert await eventually(lambda: len(received) == 2)
            assert not bodies[-1].closed
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=5)
            assert await eventually(lambda: bodies[-1].closed), entered
