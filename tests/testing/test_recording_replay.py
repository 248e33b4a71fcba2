"""Replaying recordings in-process: chunk for chunk, with or without timing, and by name."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from silvia_client import (
    AsyncSilviaClient,
    NotFoundError,
    SilviaClient,
    StreamDisconnectedError,
    StreamTimeoutError,
)
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    RecordingFormatError,
    ReferenceServer,
    ReplayServer,
    record_turn,
)

pytestmark = pytest.mark.anyio

SESSION = b'event: session\ndata: {"sessionId":"sess_r"}\n\n'
HELLO = 'event: text\ndata: {"text":"h\u00e9llo"}\n\n'.encode()
DONE = b"event: done\ndata: {}\n\n"
# A character split across two chunks, as a socket may deliver it.
CHUNKS = [SESSION, HELLO[:24], HELLO[24:], DONE]
RELOAD = b'{"session":{"id":"sess_r"},"messages":[]}'


def made(chunks: list[bytes] = CHUNKS, *, end: str = "ended", gap: float = 0.0) -> Recording:
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": "hi"}),
        RecordedResponse(
            200,
            (("content-type", "text/event-stream"), ("x-request-id", "req_r")),
            tuple(RecordedChunk(round(gap * (i + 1), 6), c) for i, c in enumerate(chunks)),
            end,  # type: ignore[arg-type]
            round(gap * (len(chunks) + 1), 6),
        ),
        RecordedReload(
            "/api/chat/sessions/sess_r", 200, (("content-type", "application/json"),), RELOAD
        ),
    )


def test_the_transport_replays_the_body_chunk_for_chunk() -> None:
    with (
        httpx.Client(transport=made().transport(), base_url=IN_PROCESS_URL) as http,
        http.stream("POST", "/anything", json={"message": "whatever"}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["x-request-id"] == "req_r"
        assert list(response.iter_raw()) == CHUNKS


async def test_the_async_transport_replays_the_body_chunk_for_chunk() -> None:
    async with (
        httpx.AsyncClient(transport=made().transport(), base_url=IN_PROCESS_URL) as http,
        http.stream("POST", "/anything", json={"message": "whatever"}) as response,
    ):
        assert [chunk async for chunk in response.aiter_raw()] == CHUNKS


def test_the_reload_answers_its_session_and_nothing_else() -> None:
    with httpx.Client(transport=made().transport(), base_url=IN_PROCESS_URL) as http:
        assert http.get("/api/chat/sessions/sess_r").content == RELOAD
        assert http.get("/other/prefix/sess_r").content == RELOAD  # matched by the id
        assert http.get("/api/chat/sessions/sess_other").status_code == 404
        assert http.delete("/api/chat/sessions/sess_r").status_code == 404


def test_the_client_reads_the_recorded_turn_and_its_reload() -> None:
    with made().client() as client, client.chat.stream("anything at all") as stream:
        turn = stream.until_done()
        session = client.sessions.get("sess_r")
        with pytest.raises(NotFoundError):
            client.sessions.get("sess_other")
    assert turn.text == "héllo"
    assert turn.session_id == "sess_r"
    assert turn.complete
    assert session.id == "sess_r"


def test_a_body_that_broke_off_breaks_off_again(monkeypatch: pytest.MonkeyPatch) -> None:
    for end, error in [("disconnected", StreamDisconnectedError), ("timeout", StreamTimeoutError)]:
        try:
            recording = made(CHUNKS[:2], end=end)
            slept: list[float] = []
            monkeypatch.setattr(time, "sleep", slept.append)
            with (
                pytest.raises(error) as caught,
                recording.client() as client,
                client.chat.stream("hi") as stream,
            ):
                stream.until_done()
            assert caught.value.turn.session_id == "sess_r"
            assert caught.value.turn.text == ""  # half an event arrived: not an event
            assert not caught.value.turn.complete
            # Without timing nothing waits, not even out the client's idle timeout.
            assert all(seconds == 0 for seconds in slept)
        except AssertionError as error:
            raise AssertionError(f"case {(end, error)!r}") from error


async def test_the_async_client_breaks_off_the_same_way() -> None:
    for end, error in [("disconnected", StreamDisconnectedError), ("timeout", StreamTimeoutError)]:
        try:
            recording = made(CHUNKS[:2], end=end)
            async with recording.async_client() as client:
                with pytest.raises(error) as caught:
                    async with client.chat.stream("hi") as stream:
                        await stream.until_done()
            assert caught.value.turn.session_id == "sess_r"
        except AssertionError as error:
            raise AssertionError(f"case {(end, error)!r}") from error


def test_with_timing_each_chunk_comes_no_earlier_than_recorded() -> None:
    recording = made(gap=0.05)
    arrivals = []
    with httpx.Client(transport=recording.transport(timing=True), base_url=IN_PROCESS_URL) as http:
        started = time.perf_counter()
        with http.stream("POST", "/api/claude", json={"message": "hi"}) as response:
            for _ in response.iter_raw():
                arrivals.append(time.perf_counter() - started)
    assert len(arrivals) == len(CHUNKS)
    for arrival, chunk in zip(arrivals, recording.response.chunks, strict=True):
        assert arrival >= chunk.at - 0.001


async def test_with_timing_the_async_twin_waits_too() -> None:
    recording = made(gap=0.05)
    async with recording.async_client(timing=True) as client:
        started = time.perf_counter()
        async with client.chat.stream("hi") as stream:
            await stream.until_done()
    assert time.perf_counter() - started >= recording.response.chunks[-1].at - 0.001


def test_with_timing_a_gap_longer_than_the_idle_timeout_times_out() -> None:
    recording = made(gap=0.3)
    with (
        pytest.raises(StreamTimeoutError),
        recording.client(timing=True, idle_timeout=0.05) as client,
        client.chat.stream("hi") as stream,
    ):
        stream.until_done()


def test_a_recorded_refusal_is_refused_again() -> None:
    server = ReferenceServer()
    recording = record_turn(
        "/scenario status-404", transport=server.transport(), base_url=IN_PROCESS_URL, token="t"
    )
    with (
        pytest.raises(NotFoundError) as caught,
        recording.client() as client,
        client.chat.stream("hi") as stream,
    ):
        stream.until_done()
    assert caught.value.status_code == 404


# -- several, by name ---------------------------------------------------------------------------


def named(message: str, session: str) -> Recording:
    body = (
        b'event: session\ndata: {"sessionId":"' + session.encode() + b'"}\n\n'
        b'event: text\ndata: {"text":"' + message.encode() + b'"}\n\n' + DONE
    )
    reload = json.dumps({"session": {"id": session, "title": message}, "messages": []})
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": message}),
        RecordedResponse(200, (("content-type", "text/event-stream"),), (RecordedChunk(0, body),)),
        RecordedReload(f"/api/chat/sessions/{session}", 200, (), reload.encode()),
    )


SERVER = ReplayServer({"first": named("one", "sess_1"), "second": named("two", "sess_2")})


def replay(message: str, server: ReplayServer = SERVER, **headers: str) -> str:
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(
            base_url=IN_PROCESS_URL, token="t", http_client=http, default_headers=headers
        ) as client,
        client.chat.stream(message) as stream,
    ):
        return stream.until_done().text


def test_a_request_picks_a_recording_by_header_or_message_else_the_first() -> None:
    assert replay("anything") == "one"
    assert replay("/recording second please") == "two"
    assert replay("anything", SERVER, **{SCENARIO_HEADER: "second"}) == "two"
    assert (
        replay("/recording second", SERVER, **{SCENARIO_HEADER: "first"}) == "one"
    )  # the header wins


def test_a_session_get_finds_the_recording_that_reloaded_it() -> None:
    with (
        httpx.Client(transport=SERVER.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
    ):
        assert client.sessions.get("sess_2").title == "two"
        assert client.sessions.get("sess_1").title == "one"
        with pytest.raises(NotFoundError):
            client.sessions.get("sess_3")


def test_an_unknown_name_or_a_missing_token_is_refused() -> None:
    with httpx.Client(transport=SERVER.transport(), base_url=IN_PROCESS_URL) as http:
        bearer = {"authorization": "Bearer t"}
        unknown = http.post("/api/claude", json={"message": "/recording third"}, headers=bearer)
        assert unknown.status_code == 400
        assert "first, second" in unknown.json()["error"]["message"]
        assert http.post("/api/claude", json={"message": "hi"}).status_code == 401
    strict = ReplayServer({"only": named("one", "sess_1")}, token="s3cret-replay")
    with httpx.Client(transport=strict.transport(), base_url=IN_PROCESS_URL) as http:
        wrong = http.post("/api/claude", json={"message": "hi"}, headers=bearer)
        assert wrong.status_code == 401
        assert "s3cret" not in repr(strict)


def test_from_files_names_each_by_its_stem_and_refuses_two_alike(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    named("one", "sess_1").save(tmp_path / "first.jsonl")
    named("two", "sess_2").save(tmp_path / "a" / "first.jsonl")
    named("three", "sess_3").save(tmp_path / "third.jsonl")
    server = ReplayServer.from_files([str(tmp_path / "third.jsonl"), str(tmp_path / "first.jsonl")])
    assert list(server.recordings) == ["third", "first"]
    assert replay("hi", server) == "three"
    with pytest.raises(ValueError, match="two recordings named 'first'"):
        ReplayServer.from_files(
            [str(tmp_path / "first.jsonl"), str(tmp_path / "a" / "first.jsonl")]
        )
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    with pytest.raises(RecordingFormatError) as caught:
        ReplayServer.from_files([str(tmp_path / "bad.jsonl")])
    assert caught.value.line == 1
    assert caught.value.path == str(tmp_path / "bad.jsonl")


async def test_the_async_client_replays_on_the_in_process_runner_too() -> None:
    http = httpx.AsyncClient(transport=SERVER.transport())
    async with (
        http,
        AsyncSilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
        client.chat.stream("/recording second") as stream,
    ):
        assert (await stream.until_done()).text == "two"
