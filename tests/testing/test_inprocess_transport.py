"""The in-process transport: the wire contract, sync and async, stalls and drops, no sockets."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from silvia_client._wire import EventNames, WireFormat
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    SCENARIOS,
    ReferenceServer,
    Scenario,
    Stall,
    expected_turn,
)

from ._helpers import AUTH, CHAT, SESSIONS, http, read_turn, sse_events

DEMO_SCRIPT = SCENARIOS["demo"].script
_client = http


async def aread(server: ReferenceServer, scenario: str, **options: Any) -> list[bytes]:
    """The body of `scenario` read by an async httpx client (errors propagate)."""
    into: list[bytes] = []
    headers = {SCENARIO_HEADER: scenario, **AUTH}
    async with (
        httpx.AsyncClient(transport=server.transport(), base_url=IN_PROCESS_URL, **options) as c,
        c.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response,
    ):
        async for chunk in response.aiter_bytes():
            into.append(chunk)
    return into


def _turn(client: httpx.Client, message: str = "hi", **headers: str) -> list[tuple[str, object]]:
    with client.stream("POST", CHAT, json={"message": message}, headers=headers) as response:
        assert response.status_code == 200
        return sse_events(response.iter_bytes())


def test_a_turn_streams_the_contracts_events_in_order() -> None:
    server = ReferenceServer()
    with _client(server) as client, client.stream("POST", CHAT, json={"message": "hi"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-request-id"].startswith("req_")
        raw = b"".join(response.iter_bytes())
    events = sse_events([raw])
    names = [name for name, _ in events]
    assert names[0] == "session"
    assert names[-3:] == ["citations_summary", "message", "done"]
    assert set(names[1:-3]) == {"text", "citation"}
    assert b"\n: ping\n\n" in raw
    expected = expected_turn(server.scenarios["demo"])
    assert "".join(d["text"] for n, d in events if n == "text") == expected.text
    assert [d["citation"] for n, d in events if n == "citation"] == list(expected.inline_citations)
    assert events[-3][1] == {"citations": list(expected.citations)}
    assert "target" not in json.dumps(events[-2][1])  # the raw message carries no target
    assert events[-1][1] == {}


def test_the_body_is_produced_as_it_is_read_not_before() -> None:
    server = ReferenceServer()
    with _client(server) as client, client.stream("POST", CHAT, json={"message": "hi"}) as response:
        chunks = response.iter_bytes()
        first = next(chunks)
        (session_id,) = list(server.sessions)
        # The user's message is stored as the stream starts, the answer only at its end.
        assert [m["role"] for m in server.sessions[session_id].messages] == ["user"]
        rest = b"".join(chunks)
    assert sse_events([first + rest])[-1][0] == "done"
    assert [m["role"] for m in server.sessions[session_id].messages] == ["user", "assistant"]


@pytest.mark.anyio
async def test_the_async_transport_streams_the_same_turn() -> None:
    server = ReferenceServer()
    events = sse_events(await aread(server, "pooling"))
    expected = expected_turn(server.scenarios["pooling"])
    assert [d["citation"] for n, d in events if n == "citation"] == list(expected.inline_citations)
    assert events[-1][0] == "done"


def _stalling(seconds: float) -> Scenario:
    return Scenario("stall", "A stall.", script=DEMO_SCRIPT, fault=Stall(seconds, after_events=3))


@pytest.mark.anyio
async def test_a_stall_longer_than_the_read_timeout_is_one_after_the_events_before_it() -> None:
    server = ReferenceServer()
    server.register(_stalling(60.0), replace(_stalling(0.01), name="pause"))
    received: list[bytes] = []
    timeout = httpx.Timeout(5.0, read=0.05)
    with _client(server, timeout=timeout) as client, pytest.raises(httpx.ReadTimeout):
        read_turn(client, "stall", received)
    assert [name for name, _ in sse_events(received)] == ["session", "text", "text"]
    with pytest.raises(httpx.ReadTimeout):
        await aread(server, "stall", timeout=timeout)
    with _client(server, timeout=httpx.Timeout(5.0)) as client:
        assert _turn(client, **{SCENARIO_HEADER: "pause"})[-1][0] == "done"  # only a pause


@pytest.mark.anyio
async def test_a_drop_raises_mid_body_and_the_turn_is_not_stored_as_answered() -> None:
    server = ReferenceServer()
    received: list[bytes] = []
    with _client(server) as client, pytest.raises(httpx.RemoteProtocolError):
        read_turn(client, "fault-drop", received)
    body = b"".join(received)
    assert sse_events([body])
    assert not body.endswith(b"\n\n")  # cut in the middle of an event
    (session_id,) = list(server.sessions)
    assert [m["role"] for m in server.sessions[session_id].messages] == ["user"]
    with pytest.raises(httpx.RemoteProtocolError):
        await aread(server, "fault-drop")


# -- statuses and errors -------------------------------------------------------


def test_status_scenarios_answer_with_a_json_error_body() -> None:
    for name, status, error_type in [
        ("status-401", 401, "authentication_error"),
        ("status-403", 403, "permission_error"),
        ("status-404", 404, "not_found_error"),
        ("status-429", 429, "rate_limit_error"),
        ("status-500", 500, "api_error"),
    ]:
        try:
            with _client(ReferenceServer()) as client:
                response = client.post(
                    CHAT, json={"message": "hi"}, headers={SCENARIO_HEADER: name}
                )
                by_message = client.post(CHAT, json={"message": f"/scenario {name} please"})
                on_sessions = client.get(SESSIONS + "anything", headers={SCENARIO_HEADER: name})
            for answer in (response, by_message, on_sessions):
                assert answer.status_code == status
                assert answer.json()["error"]["type"] == error_type
                assert answer.headers["x-request-id"]
            assert (response.headers.get("retry-after") == "2") == (status == 429)
        except AssertionError as error:
            raise AssertionError(f"case {(name, status, error_type)!r}") from error


def test_any_non_empty_bearer_token_is_accepted_by_default() -> None:
    with _client(ReferenceServer()) as client:
        missing = client.post(CHAT, json={"message": "hi"}, headers={"authorization": ""})
        wrong_scheme = client.post(
            CHAT, json={"message": "hi"}, headers={"authorization": "Basic x"}
        )
        empty = client.post(CHAT, json={"message": "hi"}, headers={"authorization": "Bearer  "})
        ok = client.post(CHAT, json={"message": "hi"}, headers={"authorization": "Bearer anything"})
    assert [r.status_code for r in (missing, wrong_scheme, empty, ok)] == [401, 401, 401, 200]
    assert missing.json()["error"]["type"] == "authentication_error"


def test_a_required_token_is_enforced_and_never_echoed() -> None:
    server = ReferenceServer(token="s3cret-token")
    assert "s3cret" not in repr(server)
    with _client(server) as client:
        wrong = client.post(CHAT, json={"message": "hi"})
        right = client.post(
            CHAT, json={"message": "hi"}, headers={"authorization": "Bearer s3cret-token"}
        )
        session = client.get(SESSIONS + "x", headers={"authorization": "Bearer nope"})
    assert (wrong.status_code, right.status_code, session.status_code) == (401, 200, 401)
    assert "s3cret" not in wrong.text + right.text


def test_bad_requests_get_json_errors() -> None:
    for method, path, body, status in [
        ("GET", CHAT, None, 405),
        ("POST", SESSIONS + "x", None, 405),
        ("POST", "/nope", None, 404),
        ("GET", SESSIONS, None, 404),
        ("POST", CHAT, b"{not json", 400),
        ("POST", CHAT, b"[]", 400),
        ("POST", CHAT, b'{"message": ""}', 400),
        ("POST", CHAT, b'{"message": "hi", "sessionId": 7}', 400),
        ("POST", CHAT, b'{"message": "/scenario no-such-thing"}', 400),
        ("POST", CHAT, b'{"message": "hi"}', 400),  # with an unknown scenario header
    ]:
        try:
            scenario = {SCENARIO_HEADER: "nope"} if body == b'{"message": "hi"}' else {}
            with _client(ReferenceServer()) as client:
                response = client.request(method, path, content=body, headers=scenario)
            assert response.status_code == status
            assert set(response.json()["error"]) == {"type", "message"}
        except AssertionError as error:
            raise AssertionError(f"case {(method, path, body, status)!r}") from error


# -- sessions ------------------------------------------------------------------


def test_reloading_the_session_gives_what_the_stream_gave() -> None:
    server = ReferenceServer()
    with _client(server) as client:
        events = _turn(client, "How am I doing?")
        session_id = events[0][1]["sessionId"]  # type: ignore[index]
        body = client.get(SESSIONS + session_id).json()
    assert body["session"]["id"] == session_id
    user, assistant = body["messages"]
    assert (user["role"], user["content"]) == ("user", "How am I doing?")
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "".join(d["text"] for n, d in events if n == "text")  # type: ignore[index]
    assert assistant["citations"] == events[-3][1]["citations"]  # type: ignore[index]
    assert assistant["inline_citations"] == [d["citation"] for n, d in events if n == "citation"]  # type: ignore[index]
    assert all(m["id"] and m["created_at"] for m in body["messages"])


def test_a_legacy_session_has_no_target_keys_and_is_found_by_a_percent_encoded_id() -> None:
    server = ReferenceServer()
    session_id = server.seed_legacy_session(session_id="old/session id?")
    with _client(server) as client:
        missing = client.get(SESSIONS + "old/session id?")
        body = client.get(SESSIONS + quote(session_id, safe="")).json()
    assert missing.status_code == 404
    citations = body["messages"][1]["citations"] + body["messages"][1]["inline_citations"]
    assert citations
    assert all("target" not in c for c in citations)
    assert citations[0]["source"] == "silvia://your-account/checking"


# -- the server speaks the WireFormat it is given -------------------------------


def test_a_custom_wire_format_changes_paths_events_and_keys() -> None:
    wire = WireFormat(
        chat_path="/v2/chat",
        session_path="/v2/sessions/",
        events=EventNames(text="delta", done="end"),
        text_key="t",
        error_key="problem",
    )
    server = ReferenceServer(wire=wire)
    with _client(server) as client:
        with client.stream("POST", "/v2/chat", json={"message": "hi"}) as response:
            events = sse_events(response.iter_bytes())
        session = client.get("/v2/sessions/" + events[0][1]["sessionId"])
        old_path = client.post(CHAT, json={"message": "hi"})
    assert {n for n, _ in events} >= {"delta", "end"}
    assert "text" not in {n for n, _ in events}
    assert all(set(d) == {"t"} for n, d in events if n == "delta")
    assert session.status_code == 200
    assert old_path.status_code == 404
    assert "problem" in old_path.json()
    assert expected_turn(server.scenarios["demo"], wire=wire).complete
