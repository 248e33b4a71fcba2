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

pytestmark = pytest.mark.anyio


async def aread(server: ReferenceServer, scenario: str, **options: Any) -> list[bytes]:
    """The body of `scenario` read by an async httpx client (errors propagate)."""
    headers = {SCENARIO_HEADER: scenario, **AUTH}
    async with (
        httpx.AsyncClient(transport=server.transport(), base_url=IN_PROCESS_URL, **options) as c,
        c.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response,
    ):
        return [chunk async for chunk in response.aiter_bytes()]


def roles(server: ReferenceServer) -> list[object]:
    (session_id,) = list(server.sessions)
    return [message["role"] for message in server.sessions[session_id].messages]


async def test_a_turn_streams_the_contracts_events_as_read_and_reloads_as_streamed() -> None:
    server = ReferenceServer()
    with http(server) as client:
        with client.stream("POST", CHAT, json={"message": "How am I doing?"}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["x-request-id"].startswith("req_")
            chunks = response.iter_bytes()
            first = next(chunks)
            # The user's message is stored as the stream starts, the answer only at its end.
            assert roles(server) == ["user"]
            raw = first + b"".join(chunks)
        events = sse_events([raw])
        session = client.get(SESSIONS + events[0][1]["sessionId"]).json()
    names = [name for name, _ in events]
    assert names[0] == "session"
    assert names[-3:] == ["citations_summary", "message", "done"]
    assert set(names[1:-3]) == {"text", "citation"}
    assert b"\n: ping\n\n" in raw
    expected = expected_turn(server.scenarios["demo"])
    text = "".join(d["text"] for n, d in events if n == "text")
    inline = [d["citation"] for n, d in events if n == "citation"]
    assert (text, inline) == (expected.text, list(expected.inline_citations))
    assert events[-3][1] == {"citations": list(expected.citations)}
    assert "target" not in json.dumps(events[-2][1])  # the raw message carries no target
    assert events[-1][1] == {}
    user, assistant = session["messages"]
    assert (user["role"], user["content"]) == ("user", "How am I doing?")
    assert (assistant["role"], assistant["content"]) == ("assistant", text)
    assert assistant["citations"] == events[-3][1]["citations"]
    assert assistant["inline_citations"] == inline
    assert all(m["id"] and m["created_at"] for m in session["messages"])
    events = sse_events(await aread(server, "pooling"))  # the async side streams the same
    pooling = expected_turn(server.scenarios["pooling"])
    assert [d["citation"] for n, d in events if n == "citation"] == list(pooling.inline_citations)
    assert events[-1][0] == "done"


def stalling(seconds: float) -> Scenario:
    script = SCENARIOS["demo"].script
    return Scenario("stall", "A stall.", script=script, fault=Stall(seconds, after_events=3))


async def test_a_stall_past_the_read_timeout_times_out_and_a_drop_breaks_off_unanswered() -> None:
    server = ReferenceServer()
    server.register(stalling(60.0), replace(stalling(0.01), name="pause"))
    received: list[bytes] = []
    timeout = httpx.Timeout(5.0, read=0.05)
    with http(server, timeout=timeout) as client, pytest.raises(httpx.ReadTimeout):
        read_turn(client, "stall", received)
    assert [name for name, _ in sse_events(received)] == ["session", "text", "text"]
    with pytest.raises(httpx.ReadTimeout):
        await aread(server, "stall", timeout=timeout)
    pause: list[bytes] = []
    with http(server) as client:
        read_turn(client, "pause", pause)  # only a pause: the turn completes
    assert sse_events(pause)[-1][0] == "done"

    server = ReferenceServer()
    received = []
    with http(server) as client, pytest.raises(httpx.RemoteProtocolError):
        read_turn(client, "fault-drop", received)
    body = b"".join(received)
    assert sse_events([body])
    assert not body.endswith(b"\n\n")  # cut in the middle of an event
    assert roles(server) == ["user"]
    with pytest.raises(httpx.RemoteProtocolError):
        await aread(server, "fault-drop")


# -- refusals ----------------------------------------------------------------


def test_every_refusal_is_a_json_error_with_a_request_id_and_never_echoes_the_token() -> None:
    bearer = {"authorization": "Bearer s3cret-token"}
    BAD, DENIED, LOST = "invalid_request_error", "authentication_error", "not_found_error"

    def unknown(message: str) -> bytes:
        return json.dumps({"message": message, "sessionId": "sess_never_created"}).encode()

    hi = b'{"message": "hi"}'
    cases: list[tuple[str, str, bytes | None, dict[str, str], int, str]] = [
        # (method, path, body, headers, status, error type); the server requires `bearer`.
        ("POST", CHAT, hi, {}, 401, DENIED),
        ("POST", CHAT, hi, {"authorization": "Basic x"}, 401, DENIED),
        ("POST", CHAT, hi, {"authorization": "Bearer  "}, 401, DENIED),
        ("POST", CHAT, hi, {"authorization": "Bearer nope"}, 401, DENIED),
        ("GET", SESSIONS + "x", None, {"authorization": "Bearer nope"}, 401, DENIED),
        ("GET", CHAT, None, bearer, 405, BAD),
        ("POST", SESSIONS + "x", None, bearer, 405, BAD),
        ("POST", "/nope", None, bearer, 404, "not_found_error"),
        ("GET", SESSIONS, None, bearer, 404, "not_found_error"),
        ("POST", CHAT, b"{not json", bearer, 400, BAD),
        ("POST", CHAT, b"[]", bearer, 400, BAD),
        ("POST", CHAT, b'{"message": ""}', bearer, 400, BAD),
        ("POST", CHAT, b'{"message": "hi", "sessionId": 7}', bearer, 400, BAD),
        ("POST", CHAT, b'{"message": "/scenario nope"}', bearer, 400, BAD),
        ("POST", CHAT, hi, {**bearer, SCENARIO_HEADER: "nope"}, 400, BAD),
        # A turn in a session the server does not know is a 404, as the session GET is,
        # refused after what makes the body unreadable and after a status scenario.
        ("GET", SESSIONS + "sess_never_created", None, bearer, 404, LOST),
        ("POST", CHAT, unknown("hi"), bearer, 404, LOST),
        ("POST", CHAT, unknown("/scenario pooling"), bearer, 404, LOST),
        ("POST", CHAT, unknown("hi"), {**bearer, SCENARIO_HEADER: "fault-drop"}, 404, LOST),
        ("POST", CHAT, unknown(""), bearer, 400, BAD),
        ("POST", CHAT, unknown("/scenario no-such-thing"), bearer, 400, BAD),
        ("POST", CHAT, b'{"message": "hi", "sessionId": ""}', bearer, 400, BAD),
        ("POST", CHAT, unknown("hi"), {**bearer, SCENARIO_HEADER: "status-500"}, 500, "api_error"),
        ("POST", CHAT, unknown("/scenario status-429"), bearer, 429, "rate_limit_error"),
    ]
    # A status scenario answers its status on both routes, by header or by message.
    for status, error_type in [
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
    ]:
        named = {**bearer, SCENARIO_HEADER: f"status-{status}"}
        by_message = f'{{"message": "/scenario status-{status} please"}}'.encode()
        cases += [
            ("POST", CHAT, hi, named, status, error_type),
            ("POST", CHAT, by_message, bearer, status, error_type),
            ("GET", SESSIONS + "anything", None, named, status, error_type),
        ]
    server = ReferenceServer(token="s3cret-token")
    assert "s3cret" not in repr(server)
    with httpx.Client(transport=server.transport(), base_url=IN_PROCESS_URL) as client:
        for method, path, body, headers, status, error_type in cases:
            case = (method, path, body, headers)
            answer = client.request(method, path, content=body, headers=headers)
            assert answer.status_code == status, case
            assert answer.headers["content-type"] == "application/json", case
            assert answer.json()["error"]["type"] == error_type, case
            if error_type == LOST and "sess_never_created" in path + str(body):
                assert answer.json()["error"]["message"] == "Session not found.", case
            assert set(answer.json()["error"]) == {"type", "message"}, case
            assert answer.headers["x-request-id"].startswith("req_"), case
            assert (answer.headers.get("retry-after") == "2") == (status == 429), case
            assert "s3cret" not in answer.text, case
        assert len(server.sessions) == 0  # no refused turn made a session
        assert client.post(CHAT, content=hi, headers=bearer).status_code == 200
    with http(ReferenceServer()) as client:  # without `token=`, any bearer token will do
        assert client.post(CHAT, json={"message": "hi"}).status_code == 200


# -- sessions and the wire format --------------------------------------------


def test_a_legacy_session_has_no_target_keys_and_is_found_by_a_percent_encoded_id() -> None:
    server = ReferenceServer()
    session_id = server.seed_legacy_session(session_id="old/session id?")
    with http(server) as client:
        missing = client.get(SESSIONS + "old/session id?")
        body = client.get(SESSIONS + quote(session_id, safe="")).json()
    assert missing.status_code == 404
    citations = body["messages"][1]["citations"] + body["messages"][1]["inline_citations"]
    assert citations
    assert all("target" not in c for c in citations)
    assert citations[0]["source"] == "silvia://your-account/checking"


def test_a_custom_wire_format_changes_paths_events_and_keys() -> None:
    wire = WireFormat(
        chat_path="/v2/chat",
        session_path="/v2/sessions/",
        events=EventNames(text="delta", done="end"),
        text_key="t",
        error_key="problem",
    )
    server = ReferenceServer(wire=wire)
    with http(server) as client:
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
