"""A replay applies a live client's limits to what it decompresses, and never inflates whole.

A gzip chunk of a few hundred KiB holds 64 MiB of events. Replayed in-process,
on a socket, and checked by QA, the body (and the reload) goes through the
client's bounded path: `max_response_bytes` / `max_event_bytes` stop it with the
live client's error (a finding, in QA), and memory (`tracemalloc`) stays near
the limit, not near what the bomb inflates to.
"""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import httpx
import pytest

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import ResponseTooLargeError, StreamTooLargeError
from silvia_client.qa import check_recordings
from silvia_client.testing import (
    IN_PROCESS_URL,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    ReplayServer,
)

MIB = 1024 * 1024
SESSION = "sess_bomb"
LIMIT = 1 * MIB
# What replaying may hold at most beyond the recording itself: a few limits'
# worth, never the 64 MiB the bomb inflates to.
BOUND = 24 * MIB
SSE = (("content-type", "text/event-stream"), ("content-encoding", "gzip"))


@cache
def bomb(size: int = 64 * MIB) -> bytes:
    """`size` bytes of small text events after a session event, gzip-compressed."""
    event = b'event: text\ndata: {"text":"' + b"a" * 200 + b'"}\n\n'
    body = b'event: session\ndata: {"sessionId":"sess_bomb"}\n\n'
    body += event * (size // len(event)) + b"event: done\ndata: {}\n\n"
    return gzip.compress(body, 9)


@cache
def one_big_event(size: int = 20 * MIB) -> bytes:
    """One text event of `size` bytes (past the default `max_event_bytes`), gzip-compressed."""
    body = b'event: session\ndata: {"sessionId":"sess_bomb"}\n\nevent: text\ndata: {"text":"'
    return gzip.compress(body + b"a" * size + b'"}\n\nevent: done\ndata: {}\n\n', 9)


@cache
def session_bomb(size: int = 64 * MIB) -> bytes:
    """A session body of `size` bytes of tiny citation rows, gzip-compressed."""
    row = b'{"source":"a"},'
    rows = row * (size // len(row)) + b'{"source":"a"}'
    return gzip.compress(
        b'{"session":{"id":"sess_bomb"},"messages":[{"id":"m","role":"assistant",'
        b'"content":"x","citations":[' + rows + b"]}]}",
        9,
    )


def streamed(body: bytes) -> Recording:
    """A turn whose whole stream is one recorded gzip chunk."""
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": "hi"}),
        RecordedResponse(200, SSE, (RecordedChunk(0.001, body),), "ended", 0.002),
    )


def reloaded(body: bytes) -> Recording:
    """A short complete turn whose reload is `body`, sent gzip-compressed."""
    turn = b'event: session\ndata: {"sessionId":"sess_bomb"}\n\nevent: done\ndata: {}\n\n'
    headers = (("content-type", "application/json"), ("content-encoding", "gzip"))
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": "hi"}),
        RecordedResponse(200, SSE[:1], (RecordedChunk(0.001, turn),), "ended", 0.002),
        RecordedReload(f"/api/chat/sessions/{SESSION}", 200, headers, body),
    )


@contextmanager
def peak() -> Iterator[list[int]]:
    """The peak of traced memory inside the block, in bytes (appended on exit)."""
    out: list[int] = []
    tracemalloc.start()
    try:
        yield out
    finally:
        out.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def clients(recording: Recording, **options: Any) -> Iterator[SilviaClient | AsyncSilviaClient]:
    """Sync and async clients on `Recording.client()` and on a `ReplayServer`'s transport."""
    yield recording.client(**options)
    yield recording.async_client(**options)
    transport = ReplayServer({"bomb": recording}).transport()
    yield SilviaClient(
        base_url=IN_PROCESS_URL, token="t", http_client=httpx.Client(transport=transport), **options
    )
    http = httpx.AsyncClient(transport=transport)
    yield AsyncSilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http, **options)


async def send(client: SilviaClient | AsyncSilviaClient, reload: bool) -> None:
    """A turn, then (if `reload`) its session, on either side; the client closed after."""
    if isinstance(client, SilviaClient):
        with client:
            assert client.chat.send("hi").session_id == SESSION
            if reload:
                client.sessions.get(SESSION)
        return
    async with client:
        assert (await client.chat.send("hi")).session_id == SESSION
        if reload:
            await client.sessions.get(SESSION)


@pytest.mark.anyio
async def test_a_replayed_gzip_body_stops_at_the_clients_limit_without_inflating_whole() -> None:
    assert len(bomb()) < 400 * 1024  # small on disk, large inflated
    assert len(streamed(bomb()).dumps()) < 600 * 1024  # base64 in the file
    assert len(gzip.decompress(bomb())) > 63 * MIB
    cases: list[tuple[Recording, dict[str, Any], type[Exception], bool]] = [
        (streamed(bomb()), {"max_response_bytes": LIMIT}, StreamTooLargeError, False),
        (streamed(one_big_event()), {"max_event_bytes": LIMIT}, StreamTooLargeError, False),
        # The reload was inflated whole by httpx (143 MiB): it is streamed now.
        (reloaded(session_bomb()), {"max_response_bytes": LIMIT}, ResponseTooLargeError, True),
    ]
    for recording, options, error, reload in cases:
        for client in clients(recording, **options):
            with peak() as used, pytest.raises(error) as caught:
                await send(client, reload)
            if isinstance(caught.value, StreamTooLargeError):
                assert caught.value.turn.session_id == SESSION  # the partial turn, as live
            assert used[0] < BOUND, (options, type(client), used)


def test_on_a_socket_the_replay_server_sends_the_bytes_and_the_client_bounds_them() -> None:
    recording = streamed(bomb())
    with ReplayServer({"bomb": recording}).serve_loopback() as url:
        client = SilviaClient(base_url=url, token="t", max_response_bytes=LIMIT, max_retries=0)
        with peak() as used, client, pytest.raises(StreamTooLargeError):
            client.chat.send("hi")
    assert used[0] < BOUND, used


def test_qa_check_turns_an_event_past_the_default_limit_into_a_finding() -> None:
    recording = streamed(one_big_event())
    with peak() as used:
        run = check_recordings([("bomb", recording)])
    [prompt] = run.prompts
    assert not prompt.result.ok
    assert used[0] < 3 * 16 * MIB + BOUND, used  # the default max_event_bytes is 16 MiB
