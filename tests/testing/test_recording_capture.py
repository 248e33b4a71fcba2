"""Capturing recordings: what `RecordingTransport` and `record_turn` keep, and never keep."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from silvia_client import APIConnectionError, AsyncSilviaClient, SilviaClient
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    RecordingTransport,
    ReferenceServer,
    arecord_turn,
    record_turn,
)

TOKEN = "capture-s3cret/token-0123456789"  # a `/`: JSON may write it escaped, as `\/`
FORBIDDEN = ("authorization", "proxy-authorization", "cookie", "set-cookie")


def reference(**options: object) -> dict[str, Any]:
    """`record_turn` options for an in-process reference server."""
    server = ReferenceServer()
    return {"transport": server.transport(), "base_url": IN_PROCESS_URL, "token": TOKEN, **options}


def test_record_turn_keeps_the_request_the_response_bytes_and_the_reload() -> None:
    recording = record_turn("How much is in checking?", **reference())
    assert recording.request.method == "POST"
    assert recording.request.path == "/api/claude"
    assert recording.request.body == {"message": "How much is in checking?"}
    response = recording.response
    assert response.status == 200
    assert dict(response.headers)["content-type"].startswith("text/event-stream")
    assert response.body.startswith(b"event: session\ndata: ")
    assert b"event: done" in response.body
    times = [chunk.at for chunk in response.chunks]
    assert times == sorted(times)
    assert all(at >= 0 for at in times)
    assert response.end == "ended"  # after `done`, the client reads the rest (the drain)
    assert response.ended_at is not None
    assert response.ended_at >= times[-1]
    assert recording.reload is not None
    assert recording.reload.status == 200
    assert recording.reload.path.startswith("/api/chat/sessions/sess_")
    body = json.loads(recording.reload.body)
    assert body["messages"][-1]["role"] == "assistant"


def test_the_recorded_chunks_are_the_ones_the_server_sent() -> None:
    recording = record_turn("hi", **reference(default_headers={SCENARIO_HEADER: "accounts"}))
    # The in-process server sends one SSE event per chunk; none is merged or split.
    assert all(chunk.data.endswith(b"\n\n") for chunk in recording.response.chunks)
    assert recording.response.chunks[0].data.startswith(b"event: session\n")


def test_how_the_body_ended_is_recorded() -> None:
    for scenario, end, reloaded in [
        ("demo", "ended", True),
        ("fault-drop", "disconnected", False),
        ("fault-stall", "timeout", False),
        ("fault-no-done", "ended", False),
        ("fault-error-event", "closed", False),
        ("status-500", "ended", False),
    ]:
        try:
            recording = record_turn(
                "hi", **reference(default_headers={SCENARIO_HEADER: scenario}, idle_timeout=0.2)
            )
            assert recording.response.end == end
            assert (recording.reload is not None) is reloaded
        except AssertionError as error:
            raise AssertionError(f"case {(scenario, end, reloaded)!r}") from error


def test_an_error_status_is_recorded_with_its_body() -> None:
    # No retries: the recorded status is what is tested, not the wait of its Retry-After.
    headers = {SCENARIO_HEADER: "status-429"}
    recording = record_turn("hi", **reference(default_headers=headers, max_retries=0))
    assert recording.response.status == 429
    assert "retry-after" in dict(recording.response.headers)
    assert json.loads(recording.response.body)["error"]["type"] == "rate_limit_error"


def test_no_response_at_all_raises_the_clients_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(APIConnectionError):
        record_turn(
            "hi", transport=httpx.MockTransport(refuse), base_url=IN_PROCESS_URL, max_retries=0
        )


# -- the token and credentials ------------------------------------------------------------


class Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def hostile(token: str) -> httpx.MockTransport:
    """A server that echoes the token everywhere it can, and sets credential headers."""
    escaped = json.dumps(token)[1:-1]
    body = (
        f'event: session\ndata: {{"sessionId":"sess_{token[:4]}"}}\n\n'
        f'event: text\ndata: {{"text":"you sent {escaped} and {token}"}}\n\n'
        "event: done\ndata: {}\n\n"
    ).encode()
    where = body.index(token.encode()) + 3  # a chunk boundary inside the token
    chunks = [body[:where], body[where:]]

    def handle(request: httpx.Request) -> httpx.Response:
        headers = [
            ("content-type", "text/event-stream"),
            ("x-request-id", "req_1"),
            ("Set-Cookie", "sid=abc"),
            ("Authorization", "Bearer whatever"),
            ("Proxy-Authorization", "Basic xyz"),
            ("Cookie", "a=b"),
            ("x-echo", f"Bearer {token}"),
            ("x-debug", f"saw token={token};"),
        ]
        if request.method == "GET":
            return httpx.Response(200, headers=headers, json={"session": {"note": token}})
        return httpx.Response(200, headers=headers, stream=Chunks(chunks))

    return httpx.MockTransport(handle)


def test_the_token_and_credential_headers_never_go_into_a_recording() -> None:
    recording = record_turn("hi", transport=hostile(TOKEN), base_url=IN_PROCESS_URL, token=TOKEN)
    text = recording.dumps()
    assert TOKEN not in text
    assert json.dumps(TOKEN)[1:-1] not in text
    assert recording.reload is not None
    for headers in (recording.response.headers, recording.reload.headers):
        names = {name for name, _ in headers} - {"content-length"}
        assert names == {"content-type", "x-request-id"}  # the rest held the token or credentials
    assert b"you sent <token> and <token>" in recording.response.body
    assert len(recording.response.chunks) == 2  # the chunking survives the scrub
    assert json.loads(recording.reload.body) == {"session": {"note": "<token>"}}


def test_each_credential_header_is_dropped() -> None:
    for header in FORBIDDEN:
        try:
            response = httpx.Response(
                200, headers={"content-type": "text/event-stream", header: "v"}, content=b""
            )
            recording = record_turn(
                "hi",
                transport=httpx.MockTransport(lambda request, r=response: r),
                base_url=IN_PROCESS_URL,
                token=TOKEN,
            )
            assert header not in dict(recording.response.headers)
            assert "content-type" in dict(recording.response.headers)
        except AssertionError as error:
            raise AssertionError(f"case {(header,)!r}") from error


def test_a_short_test_token_leaves_bodies_alone_but_not_headers() -> None:
    recording = record_turn("hi", transport=hostile("any"), base_url=IN_PROCESS_URL, token="any")
    assert b"you sent any and any" in recording.response.body  # not blanked: ordinary words
    names = {name for name, _ in recording.response.headers}
    assert "x-echo" not in names  # `Bearer any`: the token as a word
    assert "x-debug" not in names  # `token=any;`


# -- the transport ------------------------------------------------------------------------------


def test_a_client_sees_the_same_turn_through_the_recording_transport() -> None:
    server = ReferenceServer()
    recorder = RecordingTransport(server.transport())
    clients = [
        SilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=httpx.Client(transport=t))
        for t in (server.transport(), recorder)
    ]
    turns = []
    with recorder.capture():
        for client in clients:
            with client, client.chat.stream("/scenario pooling") as stream:
                turns.append(stream.until_done())
    plain, recorded = turns
    assert recorded.text == plain.text
    assert recorded.citations == plain.citations
    assert recorded.inline_citations == plain.inline_citations


def test_only_what_passes_inside_capture_is_kept() -> None:
    server = ReferenceServer()
    recorder = RecordingTransport(server.transport())
    http = httpx.Client(transport=recorder)
    with http, SilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as client:
        with client.chat.stream("/scenario account") as stream:
            outside = stream.until_done()
        with recorder.capture() as capture:
            assert capture.recording() is None
            with client.chat.stream("/scenario market-data") as stream:
                stream.until_done()
    recording = capture.recording()
    assert recording is not None
    assert recording.request.body == {"message": "/scenario market-data"}
    assert recording.reload is None  # no GET was made in the block
    assert outside.session_id is not None
    assert outside.session_id.encode() not in recording.response.body


def test_the_recording_transport_closes_only_a_transport_it_made() -> None:
    closed: list[str] = []

    class Inner(httpx.BaseTransport):
        def close(self) -> None:
            closed.append("inner")

    RecordingTransport(Inner()).close()
    assert closed == []


# -- async ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_arecord_turn_records_as_record_turn_does() -> None:
    recording = await arecord_turn("/scenario accounts", **reference())
    synced = record_turn("/scenario accounts", **reference())
    assert recording.request == synced.request
    assert recording.response.status == synced.response.status
    assert recording.response.end == synced.response.end == "ended"
    assert len(recording.response.chunks) == len(synced.response.chunks)
    assert recording.reload is not None
    assert TOKEN not in recording.dumps()


class AsyncChunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            await asyncio.sleep(0)  # let the other turn run in between
            yield chunk


@pytest.mark.anyio
async def test_concurrent_turns_each_capture_their_own() -> None:
    server = ReferenceServer()
    recorder = RecordingTransport(server.transport())
    http = httpx.AsyncClient(transport=recorder)

    async def one(client: AsyncSilviaClient, scenario: str) -> tuple[str, object]:
        with recorder.capture() as capture:
            async with client.chat.stream(f"/scenario {scenario}") as stream:
                turn = await stream.until_done()
            assert turn.session_id is not None
            await client.sessions.get(turn.session_id)
        recording = capture.recording()
        assert recording is not None
        return turn.session_id, recording

    async with http, AsyncSilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as c:
        results = await asyncio.gather(*(one(c, s) for s in ("account", "accounts", "portfolio")))
    scenarios = ("account", "accounts", "portfolio")
    for (session_id, recording), scenario in zip(results, scenarios, strict=True):
        assert recording.request.body == {"message": f"/scenario {scenario}"}  # type: ignore[attr-defined]
        assert recording.reload.path.endswith(session_id)  # type: ignore[attr-defined]
        assert session_id.encode() in recording.response.body  # type: ignore[attr-defined]
