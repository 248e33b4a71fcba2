"""Capturing recordings (never the token or a credential header) and replaying them
in-process: chunk for chunk, timed or not, by name; a gzip bomb never inflated whole.
(That a replay gives the live turn back: `tests/e2e/test_scenarios.py`.)
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import struct
import time
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from silvia_client import (
    APIConnectionError,
    AsyncSilviaClient,
    NotFoundError,
    SilviaClient,
    StreamDisconnectedError,
    StreamTimeoutError,
    Turn,
)
from silvia_client.errors import ResponseTooLargeError, StreamTooLargeError
from silvia_client.qa import check_recordings
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    Recording,
    RecordingFormatError,
    RecordingTransport,
    ReferenceServer,
    ReplayServer,
    arecord_turn,
    record_turn,
)

from ..client.sse import done, session, text
from ._helpers import SSE, MiB, made, peak, recorded

pytestmark = pytest.mark.anyio

SESSION = b'event: session\ndata: {"sessionId":"s"}\n\n'
HELLO = 'event: text\ndata: {"text":"h\u00e9llo"}\n\n'.encode()
DONE = b"event: done\ndata: {}\n\n"
# A character split across two chunks, as a socket may deliver it.
CHUNKS = [SESSION, HELLO[:24], HELLO[24:], DONE]
RELOAD = b'{"session":{"id":"s"},"messages":[]}'


def on(transport: httpx.BaseTransport, **options: Any) -> SilviaClient:
    """A client on `transport` (its httpx client, which the SDK leaves open, holds nothing)."""
    http = httpx.Client(transport=transport)
    return SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http, **options)


def replay(chunks: list[bytes] = CHUNKS, *, end: str = "ended", gap: float = 0.0) -> Recording:
    headers = (*SSE, ("x-request-id", "req_r"))
    return made(chunks, reload=RELOAD, headers=headers, end=end, gap=gap)


async def test_a_replay_gives_the_body_chunk_for_chunk_timed_or_not_broken_off_and_the_reload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    transport = replay().transport()
    with httpx.Client(transport=transport, base_url=IN_PROCESS_URL) as http:
        with http.stream("POST", "/anything", json={"message": "whatever"}) as response:
            assert response.headers["x-request-id"] == "req_r"
            assert list(response.iter_raw()) == CHUNKS
        assert http.get("/api/chat/sessions/s").content == RELOAD
        assert http.get("/other/prefix/s").content == RELOAD  # matched by the id
        assert http.get("/api/chat/sessions/other").status_code == 404
        assert http.delete("/api/chat/sessions/s").status_code == 404
    async with (
        httpx.AsyncClient(transport=transport, base_url=IN_PROCESS_URL) as ahttp,
        ahttp.stream("POST", "/anything", json={"message": "whatever"}) as response,
    ):
        assert [chunk async for chunk in response.aiter_raw()] == CHUNKS
    # With timing, each chunk comes no earlier than recorded.
    recording = replay(gap=0.05)
    arrivals = []
    with httpx.Client(transport=recording.transport(timing=True), base_url=IN_PROCESS_URL) as http:
        started = time.perf_counter()
        with http.stream("POST", "/api/claude", json={"message": "hi"}) as response:
            for _ in response.iter_raw():
                arrivals.append(time.perf_counter() - started)
    assert len(arrivals) == len(CHUNKS)
    for arrival, chunk in zip(arrivals, recording.response.chunks, strict=True):
        assert arrival >= chunk.at - 0.001
    async with recording.async_client(timing=True) as client:
        started = time.perf_counter()
        await client.chat.send("hi")
    assert time.perf_counter() - started >= recording.response.chunks[-1].at - 0.001
    # A gap longer than the idle timeout times out.
    with (
        pytest.raises(StreamTimeoutError),
        replay(gap=0.3).client(timing=True, idle_timeout=0.05) as impatient,
    ):
        impatient.chat.send("hi")
    # A body that broke off breaks off again; without timing nothing waits (not even out the
    # client's idle timeout).
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    for end, error in [("disconnected", StreamDisconnectedError), ("timeout", StreamTimeoutError)]:
        recording = replay(CHUNKS[:2], end=end)
        with pytest.raises(error) as caught, recording.client() as broken:
            broken.chat.send("hi")
        async with recording.async_client() as abroken:
            with pytest.raises(error) as acaught:
                await abroken.chat.send("hi")
        for turn in (caught.value.turn, acaught.value.turn):
            assert turn.session_id == "s", end
            assert turn.text == ""  # half an event arrived: not an event
            assert not turn.complete
    assert all(seconds == 0 for seconds in slept)


def named(message: str, session_id: str) -> Recording:
    body = session(session_id) + text(message) + done()
    reload = json.dumps({"session": {"id": session_id, "title": message}, "messages": []})
    return made([body], reload=reload.encode(), message=message, session=session_id)


SERVER = ReplayServer({"first": named("one", "sess_1"), "second": named("two", "sess_2")})


def text_of(message: str, server: ReplayServer = SERVER, scenario: str | None = None) -> str:
    headers = {SCENARIO_HEADER: scenario} if scenario else {}
    with on(server.transport(), default_headers=headers) as client:
        return client.chat.send(message).text


async def test_a_replay_server_picks_a_recording_by_header_or_message_else_the_first(
    tmp_path: Path,
) -> None:
    assert text_of("anything") == "one"
    assert text_of("/recording second please") == "two"
    assert text_of("anything", scenario="second") == "two"
    assert text_of("/recording second", scenario="first") == "one"  # the header wins
    with on(SERVER.transport()) as client:
        assert client.sessions.get("sess_2").title == "two"  # the recording that reloaded it
        assert client.sessions.get("sess_1").title == "one"
        with pytest.raises(NotFoundError):
            client.sessions.get("sess_3")
    # An unknown name, a missing token, or a wrong one, is refused.
    bearer = {"authorization": "Bearer t"}
    with httpx.Client(transport=SERVER.transport(), base_url=IN_PROCESS_URL) as http:
        unknown = http.post("/api/claude", json={"message": "/recording third"}, headers=bearer)
        assert unknown.status_code == 400
        assert "first, second" in unknown.json()["error"]["message"]
        assert http.post("/api/claude", json={"message": "hi"}).status_code == 401
    strict = ReplayServer({"only": named("one", "sess_1")}, token="s3cret-replay")
    with httpx.Client(transport=strict.transport(), base_url=IN_PROCESS_URL) as http:
        assert http.post("/api/claude", json={"message": "hi"}, headers=bearer).status_code == 401
    assert "s3cret" not in repr(strict)
    # From files: each named by its stem, two alike refused, a bad one named with its line.
    (tmp_path / "a").mkdir()
    named("one", "sess_1").save(tmp_path / "first.jsonl")
    named("two", "sess_2").save(tmp_path / "a" / "first.jsonl")
    named("three", "sess_3").save(tmp_path / "third.jsonl")
    server = ReplayServer.from_files([str(tmp_path / "third.jsonl"), str(tmp_path / "first.jsonl")])
    assert list(server.recordings) == ["third", "first"]
    assert text_of("hi", server) == "three"
    with pytest.raises(ValueError, match="two recordings named 'first'"):
        ReplayServer.from_files(
            [str(tmp_path / "first.jsonl"), str(tmp_path / "a" / "first.jsonl")]
        )
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    with pytest.raises(RecordingFormatError) as caught:
        ReplayServer.from_files([str(tmp_path / "bad.jsonl")])
    assert (caught.value.line, caught.value.path) == (1, str(tmp_path / "bad.jsonl"))


TOKEN = "capture-s3cret/token-0123456789"  # a `/`: JSON may write it escaped, as `\/`


async def test_record_turn_keeps_the_turn_its_ending_and_reload_and_never_the_token() -> None:
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
    with recording.client() as client:  # a replay keeps the recorded request ids
        turn = client.chat.send("hi")
        assert turn.session_id is not None
        history = client.sessions.get(turn.session_id)
    assert turn.request_id == dict(response.headers)["x-request-id"]
    assert history.request_id not in (None, turn.request_id)  # each response its own id
    # How the body ended, and whether the turn was reloaded (only when complete).
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
    # arecord_turn records as record_turn does.
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
    # The token and credential headers never go into a recording.
    recording = record_turn("hi", transport=hostile(TOKEN), base_url=IN_PROCESS_URL, token=TOKEN)
    text = recording.dumps()
    assert TOKEN not in text
    assert json.dumps(TOKEN)[1:-1] not in text
    assert recording.reload is not None
    for headers in (recording.response.headers, recording.reload.headers):
        names = {name for name, _ in headers} - {"content-length", "transfer-encoding"}
        assert names == {"content-type", "x-request-id"}  # the rest held the token or credentials
    assert b"you sent <token> and <token>" in recording.response.body
    assert len(recording.response.chunks) == 2  # the chunking survives the scrub
    assert json.loads(recording.reload.body) == {"session": {"note": "<token>"}}
    # A short test token leaves bodies alone (ordinary words), but not headers.
    recording = record_turn("hi", transport=hostile("any"), base_url=IN_PROCESS_URL, token="any")
    assert b"you sent any and any" in recording.response.body
    names = {name for name, _ in recording.response.headers}
    assert not names & {"x-echo", "x-debug", *(name.lower() for name, _ in CREDENTIALS)}
    # Nor in one built by hand or loaded from a file that has one.
    for name, value in CREDENTIALS:
        headers = (*SSE, (name, value))
        built = made([], headers=headers, reload=b"", reload_headers=headers)
        assert built.response.headers == SSE, name
        assert built.reload is not None
        assert built.reload.headers == SSE, name
        lines = built.dumps().splitlines()
        response = json.loads(lines[2])
        response["headers"].append([name, value])
        lines[2] = json.dumps(response)
        loaded = Recording.loads("\n".join(lines) + "\n")
        assert name.lower() not in dict(loaded.response.headers), name
        assert value not in built.dumps() + loaded.dumps(), name


CREDENTIALS = [
    ("Set-Cookie", "sid=abc"),
    ("Authorization", "Bearer whatever"),
    ("Proxy-Authorization", "Basic xyz"),
    ("Cookie", "a=b"),
]


def hostile(token: str) -> httpx.MockTransport:
    """A server that echoes the token everywhere it can, and sets credential headers."""
    body = session(f"sess_{token[:4]}") + text(f"you sent {token} and {token}") + done()
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
        return httpx.Response(200, headers=headers, content=iter([body[:where], body[where:]]))

    return httpx.MockTransport(handle)


async def test_the_transport_keeps_only_what_passes_inside_capture_apart_from_others() -> None:
    recorder = RecordingTransport(ReferenceServer().transport())
    with on(recorder) as client:
        outside = client.chat.send("/scenario account")
        with recorder.capture() as capture:
            assert capture.recording() is None
            client.chat.send("/scenario pooling")
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

    # Concurrent captures stay apart.
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
        AsyncSilviaClient(base_url=IN_PROCESS_URL, token=TOKEN, http_client=http) as aclient,
    ):
        results = await asyncio.gather(*(one(aclient, s) for s in scenarios))
    for (turn, recording), scenario in zip(results, scenarios, strict=True):
        assert recording is not None
        assert turn.session_id is not None
        assert recording.request.body == {"message": f"/scenario {scenario}"}
        assert recording.reload is not None
        assert recording.reload.path.endswith(turn.session_id)
        assert turn.session_id.encode() in recording.response.body


BOMBED = "sess_bomb"
LIMIT = 1 * MiB
# What replaying may hold at most beyond the recording itself: a few limits'
# worth, never the 64 MiB the bomb inflates to.
BOUND = 24 * MiB
GZIP = (("content-encoding", "gzip"),)


def gzipped(*pieces: tuple[bytes, int]) -> bytes:
    """One gzip member of each `(data, times)`: `data` compressed once, sent `times` times
    (a few hundred KiB for 64 MiB, and no seconds spent compressing them)."""
    deflate = functools.partial(zlib.compressobj, 9, zlib.DEFLATED, -zlib.MAX_WBITS)
    out, crc, size = [b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"], 0, 0
    for data, times in pieces:
        piece = deflate()
        out.append((piece.compress(data) + piece.flush(zlib.Z_SYNC_FLUSH)) * times)
        for _ in range(times):
            crc = zlib.crc32(data, crc)
        size += len(data) * times
    out.append(deflate().flush(zlib.Z_FINISH) + struct.pack("<II", crc, size % 2**32))
    return b"".join(out)


BOMB_SESSION = b'event: session\ndata: {"sessionId":"sess_bomb"}\n\n'
EVENTS = b'event: text\ndata: {"text":"' + b"a" * 200 + b'"}\n\n'  # 225 bytes
# 64 MiB of small text events; one text event of 20 MiB (past the default
# `max_event_bytes`); a session body of 64 MiB of tiny citation rows.
BOMB = gzipped((BOMB_SESSION, 1), (EVENTS * 4096, 72), (DONE, 1))
BIG_EVENT = gzipped(
    (BOMB_SESSION + b'event: text\ndata: {"text":"', 1),
    (b"a" * MiB, 20),
    (b'"}\n\n' + DONE, 1),
)
SESSION_BOMB = gzipped(
    (b'{"session":{"id":"sess_bomb"},"messages":[{"id":"m","role":"assistant",'
     b'"content":"x","citations":[', 1),
    (b'{"source":"a"},' * 65536, 68),
    (b'{"source":"a"}]}]}', 1),
)  # fmt: skip


def streamed(body: bytes) -> Recording:
    """A turn whose whole stream is one recorded gzip chunk."""
    return made([body], headers=(*SSE, *GZIP), end="ended")


def reloaded(body: bytes) -> Recording:
    """A short complete turn whose reload is `body`, sent gzip-compressed."""
    return made([BOMB_SESSION + DONE], reload=body, reload_headers=GZIP, session=BOMBED)


async def send(client: SilviaClient | AsyncSilviaClient) -> None:
    """A turn, then its session, on either side; the client closed after."""
    if isinstance(client, SilviaClient):
        with client:
            assert client.chat.send("hi").session_id == BOMBED
            client.sessions.get(BOMBED)
        return
    async with client:
        assert (await client.chat.send("hi")).session_id == BOMBED
        await client.sessions.get(BOMBED)


async def test_a_replayed_gzip_body_stops_at_the_limit_uninflated_and_in_qa_is_a_finding() -> None:
    assert len(BOMB) < 400 * 1024  # small on disk, large inflated
    assert len(streamed(BOMB).dumps()) < 600 * 1024  # base64 in the file
    assert len(gzip.decompress(BOMB)) > 63 * MiB
    cases: list[tuple[Recording, dict[str, Any], type[Exception]]] = [
        (streamed(BOMB), {"max_response_bytes": LIMIT}, StreamTooLargeError),
        (streamed(BIG_EVENT), {"max_event_bytes": LIMIT}, StreamTooLargeError),
        # The reload was inflated whole by httpx (143 MiB): it is streamed now.
        (reloaded(SESSION_BOMB), {"max_response_bytes": LIMIT}, ResponseTooLargeError),
    ]
    for recording, options, error in cases:
        # Both sides, on `Recording`'s transport and on a `ReplayServer`'s.
        transport = ReplayServer({"bomb": recording}).transport()
        ahttp = httpx.AsyncClient(transport=transport)
        for client in (
            recording.client(**options),
            recording.async_client(**options),
            on(transport, **options),
            AsyncSilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=ahttp, **options),
        ):
            with peak() as used, pytest.raises(error) as caught:
                await send(client)
            if isinstance(caught.value, StreamTooLargeError):
                assert caught.value.turn.session_id == BOMBED  # the partial turn, as live
            assert used[0] < BOUND, (options, type(client), used)
    # In QA, an event past the default limit is a finding.
    recording = streamed(BIG_EVENT)
    with peak() as used:
        run = check_recordings([("bomb", recording)])
    [prompt] = run.prompts
    assert not prompt.result.ok
    assert used[0] < 3 * 16 * MiB + BOUND, used  # the default max_event_bytes is 16 MiB
