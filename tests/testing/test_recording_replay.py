"""Replaying recordings in-process: chunk for chunk, with or without timing, and by name.

Each test runs the sync and the async side where both exist. That the clients and
`silvia serve --replay` give the live turn back, errors and reloads included, is
`tests/e2e/test_recording_round_trip.py`'s.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from silvia_client import (
    NotFoundError,
    SilviaClient,
    StreamDisconnectedError,
    StreamTimeoutError,
)
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    Recording,
    RecordingFormatError,
    ReplayServer,
)

from ._helpers import SSE, made, recorded

pytestmark = pytest.mark.anyio

SESSION = b'event: session\ndata: {"sessionId":"s"}\n\n'
HELLO = 'event: text\ndata: {"text":"h\u00e9llo"}\n\n'.encode()
DONE = b"event: done\ndata: {}\n\n"
# A character split across two chunks, as a socket may deliver it.
CHUNKS = [SESSION, HELLO[:24], HELLO[24:], DONE]
RELOAD = b'{"session":{"id":"s"},"messages":[]}'


def replay(chunks: list[bytes] = CHUNKS, *, end: str = "ended", gap: float = 0.0) -> Recording:
    headers = (*SSE, ("x-request-id", "req_r"))
    return made(chunks, reload=RELOAD, headers=headers, end=end, gap=gap)


async def test_the_transport_replays_the_body_chunk_for_chunk_and_the_reload_by_its_id() -> None:
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


async def test_a_body_that_broke_off_breaks_off_again_without_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    for end, error in [("disconnected", StreamDisconnectedError), ("timeout", StreamTimeoutError)]:
        recording = replay(CHUNKS[:2], end=end)
        with pytest.raises(error) as caught, recording.client() as client:
            client.chat.send("hi")
        async with recording.async_client() as aclient:
            with pytest.raises(error) as acaught:
                await aclient.chat.send("hi")
        for turn in (caught.value.turn, acaught.value.turn):
            assert turn.session_id == "s", end
            assert turn.text == ""  # half an event arrived: not an event
            assert not turn.complete
    # Without timing nothing waits, not even out the client's idle timeout.
    assert all(seconds == 0 for seconds in slept)


async def test_with_timing_each_chunk_comes_no_earlier_than_recorded() -> None:
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
        replay(gap=0.3).client(timing=True, idle_timeout=0.05) as client,
    ):
        client.chat.send("hi")


async def test_a_replay_keeps_the_recorded_refusal_and_request_ids() -> None:
    with pytest.raises(NotFoundError) as caught, recorded("status-404").client() as client:
        client.chat.send("hi")
    assert caught.value.status_code == 404
    recording = recorded()
    with recording.client() as client:
        turn = client.chat.send("hi")
        assert turn.session_id is not None
        session = client.sessions.get(turn.session_id)
    assert turn.request_id == dict(recording.response.headers)["x-request-id"]
    assert session.request_id is not None
    assert session.request_id != turn.request_id  # each response its own id


# -- several, by name ---------------------------------------------------------------------------


def named(message: str, session: str) -> Recording:
    body = (
        b'event: session\ndata: {"sessionId":"' + session.encode() + b'"}\n\n'
        b'event: text\ndata: {"text":"' + message.encode() + b'"}\n\n' + DONE
    )
    reload = json.dumps({"session": {"id": session, "title": message}, "messages": []}).encode()
    return made([body], reload=reload, message=message, session=session)


SERVER = ReplayServer({"first": named("one", "sess_1"), "second": named("two", "sess_2")})


def text_of(message: str, server: ReplayServer = SERVER, scenario: str | None = None) -> str:
    headers = {SCENARIO_HEADER: scenario} if scenario else {}
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(
            base_url=IN_PROCESS_URL, token="t", http_client=http, default_headers=headers
        ) as client,
    ):
        return client.chat.send(message).text


async def test_a_request_picks_a_recording_by_header_or_message_else_the_first() -> None:
    assert text_of("anything") == "one"
    assert text_of("/recording second please") == "two"
    assert text_of("anything", scenario="second") == "two"
    assert text_of("/recording second", scenario="first") == "one"  # the header wins
    with (
        httpx.Client(transport=SERVER.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
    ):
        assert client.sessions.get("sess_2").title == "two"  # the recording that reloaded it
        assert client.sessions.get("sess_1").title == "one"
        with pytest.raises(NotFoundError):
            client.sessions.get("sess_3")


async def test_an_unknown_name_or_a_missing_token_is_refused() -> None:
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


async def test_from_files_names_each_by_its_stem_and_refuses_two_alike(tmp_path: Path) -> None:
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
