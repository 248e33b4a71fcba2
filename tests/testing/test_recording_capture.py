"""Capturing recordings: what `RecordingTransport` and `record_turn` keep, and never keep."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from silvia_client import APIConnectionError, AsyncSilviaClient, SilviaClient, Turn
from silvia_client.testing import (
    IN_PROCESS_URL,
    Recording,
    RecordingTransport,
    ReferenceServer,
    arecord_turn,
    record_turn,
)

from ._helpers import recorded

TOKEN = "capture-s3cret/token-0123456789"  # a `/`: JSON may write it escaped, as `\/`


def test_record_turn_keeps_the_request_the_response_bytes_and_the_reload() -> None:
    recording = recorded("accounts")
    assert (recording.request.method, recording.request.path) == ("POST", "/api/claude")
    assert recording.request.body == {"message": "hi"}
    response = recording.response
    assert response.status == 200
    assert dict(response.headers)["content-type"].startswith("text/event-stream")
    # The in-process server sends one SSE event per chunk; none is merged or split.
    assert all(chunk.data.endswith(b"\n\n") for chunk in response.chunks)
    assert response.chunks[0].data.startswith(b"event: session\n")
    assert b"event: done" in response.body
    times = [chunk.at for chunk in response.chunks]
    assert times == sorted(times)
    assert times[0] >= 0
    assert response.ended_at is not None
    assert response.ended_at >= times[-1]
    assert recording.reload is not None
    assert recording.reload.status == 200
    assert recording.reload.path.startswith("/api/chat/sessions/sess_")
    assert json.loads(recording.reload.body)["messages"][-1]["role"] == "assistant"


def test_how_the_body_ended_and_an_error_status_are_recorded() -> None:
    for scenario, end, reloaded in [
        ("demo", "ended", True),  # after `done`, the client reads the rest (the drain)
        ("fault-drop", "disconnected", False),
        ("fault-stall", "timeout", False),
        ("fault-no-done", "ended", False),
        ("fault-error-event", "closed", False),
        ("status-500", "ended", False),
    ]:
        recording = recorded(scenario, idle_timeout=0.2, max_retries=0)
        assert recording.response.end == end, scenario
        assert (recording.reload is not None) is reloaded, scenario
    # No retries: the recorded status is what is tested, not the wait of its Retry-After.
    recording = recorded("status-429", max_retries=0)
    assert recording.response.status == 429
    assert "retry-after" in dict(recording.response.headers)
    assert json.loads(recording.response.body)["error"]["type"] == "rate_limit_error"

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(APIConnectionError):  # no response at all
        record_turn("hi", transport=httpx.MockTransport(refuse), base_url=IN_PROCESS_URL)


# -- the token and credentials ------------------------------------------------------------


class Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


CREDENTIALS = [
    ("Set-Cookie", "sid=abc"),
    ("Authorization", "Bearer whatever"),
    ("Proxy-Authorization", "Basic xyz"),
    ("Cookie", "a=b"),
]


def hostile(token: str) -> httpx.MockTransport:
    """A server that echoes the token everywhere it can, and sets credential headers."""
    escaped = json.dumps(token)[1:-1]
    body = (
        f'event: session\ndata: {{"sessionId":"sess_{token[:4]}"}}\n\n'
        f'event: text\ndata: {{"text":"you sent {escaped} and {token}"}}\n\n'
        "event: done\ndata: {}\n\n"
    ).encode()
    where = body.index(token.encode()) + 3  # a chunk boundary inside the token
    headers = [
        ("content-type", "text/event-stream"),
        ("x-request-id", "req_1"),
        *CREDENTIALS,
        ("x-echo", f"Bearer {token}"),
        ("x-debug", f"saw token={token};"),
    ]

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, headers=headers, json={"session": {"note": token}})
        return httpx.Response(200, headers=headers, stream=Chunks([body[:where], body[where:]]))

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
    # A short test token leaves bodies alone (ordinary words), but not headers.
    recording = record_turn("hi", transport=hostile("any"), base_url=IN_PROCESS_URL, token="any")
    assert b"you sent any and any" in recording.response.body
    names = {name for name, _ in recording.response.headers}
    assert not names & {"x-echo", "x-debug", *(name.lower() for name, _ in CREDENTIALS)}


# -- the transport ------------------------------------------------------------------------------


def test_the_transport_passes_the_turn_through_and_keeps_only_what_passes_inside_capture() -> None:
    server = ReferenceServer()
    recorder = RecordingTransport(server.transport())
    http = httpx.Client(transport=recorder)
    with http, SilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as client:
        outside = client.chat.send("/scenario account")
        with recorder.capture() as capture:
            assert capture.recording() is None
            inside = client.chat.send("/scenario pooling")
    with server.client() as plain:
        direct = plain.chat.send("/scenario pooling")
    assert (inside.text, inside.citations) == (direct.text, direct.citations)
    assert inside.inline_citations == direct.inline_citations
    recording = capture.recording()
    assert recording is not None
    assert recording.request.body == {"message": "/scenario pooling"}
    assert recording.reload is None  # no GET was made in the block
    assert outside.session_id is not None
    assert outside.session_id.encode() not in recording.response.body

    closed: list[str] = []

    class Inner(httpx.BaseTransport):
        def close(self) -> None:
            closed.append("inner")

    RecordingTransport(Inner()).close()
    assert closed == []  # it closes only a transport it made


@pytest.mark.anyio
async def test_arecord_turn_records_as_record_turn_and_concurrent_captures_stay_apart() -> None:
    options = {"base_url": IN_PROCESS_URL, "token": TOKEN}
    arecorded = await arecord_turn(
        "/scenario accounts", transport=ReferenceServer().transport(), **options
    )
    synced = record_turn("/scenario accounts", transport=ReferenceServer().transport(), **options)
    assert arecorded.request == synced.request
    assert arecorded.response.status == synced.response.status
    assert arecorded.response.end == synced.response.end == "ended"
    assert len(arecorded.response.chunks) == len(synced.response.chunks)
    assert arecorded.reload is not None
    assert TOKEN not in arecorded.dumps()

    recorder = RecordingTransport(ReferenceServer().transport())
    http = httpx.AsyncClient(transport=recorder)

    async def one(client: AsyncSilviaClient, scenario: str) -> tuple[Turn, Recording | None]:
        with recorder.capture() as capture:
            turn = await client.chat.send(f"/scenario {scenario}")
            assert turn.session_id is not None
            await client.sessions.get(turn.session_id)
        return turn, capture.recording()

    scenarios = ("account", "accounts", "portfolio")
    async with (
        http,
        AsyncSilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as client,
    ):
        results = await asyncio.gather(*(one(client, s) for s in scenarios))
    for (turn, recording), scenario in zip(results, scenarios, strict=True):
        assert recording is not None
        assert turn.session_id is not None
        assert recording.request.body == {"message": f"/scenario {scenario}"}
        assert recording.reload is not None
        assert recording.reload.path.endswith(turn.session_id)
        assert turn.session_id.encode() in recording.response.body
