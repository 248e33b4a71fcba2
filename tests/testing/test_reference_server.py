"""The reference server, in this order: on the wire with plain httpx (the in-process
transport: the contract, stalls, drops, refusals; the loopback server on 127.0.0.1; the
hostile faults as written, the server's memory flat; what a client makes of them is
`tests/e2e`'s), then its ready clients `.client()` / `.async_client()`, sync and async.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from silvia_client import (
    AsyncSilviaClient,
    AuthenticationError,
    NotFoundError,
    SilviaClient,
    parse_citation_target,
)
from silvia_client._wire import EventNames, WireFormat
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    SCENARIOS,
    DropMidEvent,
    EchoToken,
    Fault,
    KeepAliveForever,
    ReferenceServer,
    Say,
    Scenario,
    SendEndlessLine,
    SendGzipBomb,
    SendOversizedEvent,
    Stall,
    Trickle,
    expected_turn,
)

from ..depth import examples
from ._helpers import AUTH, CHAT, SESSIONS, MiB, http, peak, sse_events, wait_until

pytestmark = pytest.mark.anyio


async def test_a_turn_streams_the_contract_and_reloads_a_stall_times_out_a_drop_breaks() -> None:
    def roles(server: ReferenceServer) -> list[object]:
        (session_id,) = list(server.sessions)
        return [message["role"] for message in server.sessions[session_id].messages]

    def read_turn(client: httpx.Client, scenario: str, into: list[bytes]) -> None:
        headers = {SCENARIO_HEADER: scenario}
        with client.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response:
            into.extend(response.iter_bytes())  # chunk by chunk, until an error

    async def aread(server: ReferenceServer, scenario: str, **options: Any) -> list[bytes]:
        headers, transport = {SCENARIO_HEADER: scenario, **AUTH}, server.transport()
        async with (
            httpx.AsyncClient(transport=transport, base_url=IN_PROCESS_URL, **options) as c,
            c.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response,
        ):
            return [chunk async for chunk in response.aiter_bytes()]

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
    # A stall past the read timeout times out (a pause does not), a drop breaks off.
    stalled, paused = served(Stall(60.0, after_events=3)), served(Stall(0.01, after_events=3))
    received: list[bytes] = []
    timeout = httpx.Timeout(5.0, read=0.05)
    with http(stalled, timeout=timeout) as client, pytest.raises(httpx.ReadTimeout):
        read_turn(client, "f", received)
    assert [name for name, _ in sse_events(received)] == ["session", "text", "text"]
    with pytest.raises(httpx.ReadTimeout):
        await aread(stalled, "f", timeout=timeout)
    with http(paused) as client:  # only a pause: the turn completes
        body = client.post(CHAT, json={"message": "hi"}, headers={SCENARIO_HEADER: "f"}).content
    assert sse_events([body])[-1][0] == "done"

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


DEMO_SCRIPT = SCENARIOS["demo"].script


def served(fault: Fault) -> ReferenceServer:
    """A server whose scenario `f` is the demo turn with `fault`."""
    server = ReferenceServer()
    server.register(Scenario("f", "d", script=DEMO_SCRIPT, fault=fault))
    return server


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
        ("POST", "/nope", None, bearer, 404, LOST),
        ("GET", SESSIONS, None, bearer, 404, LOST),
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
        (401, DENIED),
        (403, "permission_error"),
        (404, LOST),
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


def test_a_legacy_session_has_no_targets_and_a_custom_wire_changes_paths_events_and_keys() -> None:
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
    # A custom wire format changes the paths, the events and the keys.
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


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname
    assert parts.port
    return parts.hostname, parts.port


def _raw_exchange(url: str, request: bytes) -> bytes:
    """Send `request` on a fresh socket and read until the server closes it."""
    with socket.create_connection(_address(url), timeout=5) as sock:
        sock.sendall(request)
        received = bytearray()
        while chunk := sock.recv(65536):
            received += chunk
    return bytes(received)


async def test_the_loopback_server_speaks_http_keeps_alive_serves_dozens_and_stops_clean() -> None:
    server = ReferenceServer()
    loopback = server.serve_loopback()
    limits = httpx.Limits(max_connections=1)
    with loopback as url, httpx.Client(base_url=url, headers=AUTH, limits=limits) as client:
        with client.stream("POST", CHAT, json={"message": "hi"}) as response:
            assert response.headers["transfer-encoding"] == "chunked"
            assert response.headers["x-request-id"].startswith("req_")
            events = sse_events(response.iter_bytes())
        for _ in range(3):
            assert client.get(SESSIONS + events[0][1]["sessionId"]).status_code == 200
        assert client.get(SESSIONS + "missing").status_code == 404
        assert loopback.open_connections == 1
        client.close()
        assert wait_until(lambda: loopback.open_connections == 0)
        # Dozens of streams at once all complete.
        limits = httpx.Limits(max_connections=None)
        async with httpx.AsyncClient(base_url=url, headers=AUTH, limits=limits) as aclient:

            async def one() -> int:
                async with aclient.stream("POST", CHAT, json={"message": "hi"}) as response:
                    return len(sse_events([b"".join([c async for c in response.aiter_bytes()])]))

            assert await asyncio.gather(*(one() for _ in range(40))) == [len(events)] * 40
        assert len(server.sessions) == 41
        assert wait_until(lambda: loopback.open_connections == 0)
    # Raw requests get what HTTP says.
    with ReferenceServer().serve_loopback() as url:
        body = b'{"message": "hi"}'
        head = b"POST /api/claude HTTP/1.%s\r\nAuthorization: Bearer t\r\n"
        length = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        # A drop closes the socket mid-event, without the last chunk.
        raw = _raw_exchange(url, head % b"1" + b"X-Silvia-Scenario: fault-drop\r\n" + length)
        assert raw.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"event: citation" in raw
        assert not raw.endswith(b"0\r\n\r\n")
        # An HTTP/1.0 client gets a stream ended by closing.
        head10, _, stream = _raw_exchange(url, head % b"0" + length).partition(b"\r\n\r\n")
        assert b"connection: close" in head10
        assert b"chunked" not in head10
        assert sse_events([stream])[-1] == ("done", {})
        # A chunked request body is read.
        raw = _raw_exchange(
            url,
            b"GET /api/chat/sessions/nope HTTP/1.1\r\nAuthorization: Bearer t\r\n"
            b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        )
        assert raw.startswith(b"HTTP/1.1 404 Not Found\r\n")
        assert b'"not_found_error"' in raw
        # A malformed request gets a 400 and a closed connection.
        raw = _raw_exchange(url, b"NONSENSE\r\n\r\n")
        assert raw.startswith(b"HTTP/1.1 400 Bad Request\r\n")
        assert b"connection: close" in raw
        assert b'"invalid_request_error"' in raw
    # A loopback server starts once; stopping it cuts its streams, closes the port, joins.
    threads_before = threading.active_count()
    server = ReferenceServer()
    running = server.serve_loopback()
    address = _address(running.start())
    sock = socket.create_connection(address, timeout=5)
    try:
        sock.sendall(
            b"POST /api/claude HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n"
            b"X-Silvia-Scenario: fault-stall\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert wait_until(lambda: running.open_connections == 1)
        running.stop()
        while sock.recv(65536):  # the stream in its stall is cut: the socket reaches EOF
            pass
    finally:
        sock.close()
    assert threading.active_count() == threads_before
    assert running.open_connections == 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=1).close()
    running.stop()  # a second stop is harmless
    with server.serve_loopback() as url:
        port = urlsplit(url).port
        assert port
        with pytest.raises(OSError, match="in use"):
            server.serve_loopback(port=port).start()
    running = server.serve_loopback()
    with running, pytest.raises(RuntimeError, match="already"):
        running.start()


def raw_chat(client: httpx.Client, scenario: str) -> Iterator[bytes]:
    """The chat body of `scenario` as sent (still encoded), chunk by chunk."""
    headers = {SCENARIO_HEADER: scenario}
    with client.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response:
        assert response.status_code == 200
        yield from response.iter_raw()


def test_the_floods_are_written_as_promised_and_the_servers_memory_stays_flat() -> None:
    # 32 MiB of one line, read raw over a socket: the server keeps one 64 KiB copy.
    server = served(SendEndlessLine())
    received, last_newline = 0, -1
    with (
        peak() as used,
        server.serve_loopback() as url,
        httpx.Client(base_url=url, headers=AUTH) as client,
    ):
        for chunk in raw_chat(client, "f"):
            if (at := chunk.rfind(b"\n")) >= 0:
                last_newline = received + at
            received += len(chunk)
            if received > 32 * MiB:
                break
    assert used[0] < 2 * MiB
    assert received > 32 * MiB
    assert 0 < last_newline < 64 * 1024  # the events before it; none since
    # An oversized event is one well-formed event of exactly its size.
    fault = SendOversizedEvent(data_bytes=3 * MiB + 7, after_events=4)
    server = served(fault)
    with http(server) as client:
        events = sse_events(raw_chat(client, "f"))
    *before, (name, data) = events
    assert len(before) == 4
    assert name == "text"
    assert len(json.dumps(data, separators=(",", ":"))) == fault.data_bytes
    assert set(data["text"]) == {"x"}
    assert "done" not in [n for n, _ in events]  # the body ends there
    # A gzip bomb inflates to its events (the demo turn's first four: their text `cut`),
    # then to exactly its padding; it is sent small.
    cut = expected_turn(Scenario("cut", "d", script=DEMO_SCRIPT, fault=DropMidEvent(4))).text
    for inflated in [1, 100, 3 * MiB + 12_345]:
        bomb = SendGzipBomb(inflated_bytes=inflated, after_events=4)
        server = served(bomb)
        with http(server) as client:
            wire = b"".join(raw_chat(client, "f"))
        body = gzip.decompress(wire)  # which checks the CRC and the length too
        before_padding, padding = body[:-inflated], body[-inflated:]
        assert set(padding) <= set(b": \n"), inflated  # comment lines, all of it
        assert padding.startswith(b":"), inflated
        assert before_padding.endswith(b"\n\n"), inflated
        read = sse_events([before_padding])
        assert [name for name, _ in read][:1] == ["session"], inflated
        assert len(read) == 4, inflated
        text = "".join(data["text"] for name, data in read if name == "text")
        assert text == cut, inflated
        assert sse_events([body]) == read, inflated  # the padding adds no event
    # A session body: small on the wire, and (a smaller one, inflated whole) valid JSON.
    headers = {SCENARIO_HEADER: "fault-gzip-bomb"}
    with (
        peak() as used,
        ReferenceServer().serve_loopback() as url,
        httpx.Client(base_url=url, headers=AUTH) as client,
        client.stream("GET", SESSIONS + "sess_1", headers=headers) as response,
    ):
        assert response.headers["content-encoding"] == "gzip"
        size = sum(len(chunk) for chunk in response.iter_raw())  # never inflated
    assert used[0] < 2 * MiB
    assert 1 * MiB < size < 3 * MiB  # for 1 GiB inflated
    smaller = SendGzipBomb(inflated_bytes=2 * MiB + 1)
    with http(served(smaller)) as client:
        response = client.get(SESSIONS + "sess_x", headers={SCENARIO_HEADER: "f"})
    assert response.headers["content-encoding"] == "gzip"
    assert len(response.content) > smaller.inflated_bytes  # httpx inflated it all
    assert response.json() == {"session": {"id": "sess_x"}, "messages": []}


def test_bytes_forever_keep_coming_at_their_pace_until_the_client_leaves_bad_ones_refused() -> None:
    cases: list[tuple[Fault, bytes]] = [
        (Trickle(every=0.01, after_events=4), b"x" * 20),
        (KeepAliveForever(every=0.01), b": ping\n\n" * 20),
        (SendEndlessLine(), b"x" * 1024),
    ]
    for fault, copies in cases:
        server = served(fault)
        loopback = server.serve_loopback()
        with loopback as url, httpx.Client(base_url=url, headers=AUTH) as client:
            received = b""
            for chunk in raw_chat(client, "f"):
                received = (received + chunk)[-len(copies) :]
                if received == copies:
                    break
            client.close()
            # The client left: the server, between two copies, notices and lets go.
            assert wait_until(lambda: loopback.open_connections == 0), fault  # noqa: B023
    # Bad sizes and paces are refused when built.
    refused: list[tuple[Callable[[], object], str]] = [
        (lambda: SendOversizedEvent(data_bytes=0), "data_bytes"),
        (lambda: SendGzipBomb(inflated_bytes=-1), "inflated_bytes"),
        (lambda: SendGzipBomb(inflated_bytes=True), "inflated_bytes"),
        (lambda: Trickle(every=0), "every"),
        (lambda: KeepAliveForever(every=-1.0), "every"),
        (lambda: EchoToken(status=200), "status"),
    ]
    for make, named in refused:
        with pytest.raises(ValueError, match=named):
            make()


POOLED = "silvia://your-account/credit-card"
LONE = "Half \ud800 of a pair, \udfff, \udc00\ud800 backwards, and a whole one: \U0001f600 é."
RUNNERS = ("in-process", "loopback")


@asynccontextmanager
async def clients(
    server: ReferenceServer, runner: str = "in-process", **options: Any
) -> AsyncIterator[tuple[SilviaClient, AsyncSilviaClient]]:
    """A sync and an async client of `server`, in-process or over a loopback socket."""
    if runner == "in-process":
        with server.client(**options) as client:
            async with server.async_client(**options) as aclient:
                yield client, aclient
        return
    options = {"token": "t", "max_retries": 0, **options}
    with server.serve_loopback() as url, SilviaClient(base_url=url, **options) as client:
        async with AsyncSilviaClient(base_url=url, **options) as aclient:
            yield client, aclient


async def test_a_ready_client_sends_the_servers_token_and_keywords_and_finds_sessions() -> None:
    expected = ReferenceServer().expected_turn("pooling")
    server = ReferenceServer(token="kit-s3cret")
    headers = {SCENARIO_HEADER: "pooling"}
    async with clients(server, timeout=3.0, idle_timeout=2.0, default_headers=headers) as (
        client,
        aclient,
    ):
        assert (type(client), type(aclient)) == (SilviaClient, AsyncSilviaClient)
        assert "kit-s3cret" not in repr(client) + repr(aclient)
        for each in (client, aclient):
            assert each.base_url == IN_PROCESS_URL
            assert each.timeout == httpx.Timeout(3.0)
            assert each.idle_timeout == 2.0
        turn, aturn = client.chat.send("hi"), await aclient.chat.send("hi")
        assert turn.session_id is not None
        assert aturn.session_id is not None
        reloaded = client.sessions.get(turn.session_id)
        areloaded = await aclient.sessions.get(aturn.session_id)
        # Clients of one server share its sessions.
        assert (await aclient.sessions.get(turn.session_id)).messages == reloaded.messages
    for played, session in ((turn, reloaded), (aturn, areloaded)):
        assert played.target_for(POOLED) == parse_citation_target(expected.target_for(POOLED))
        assert session.messages[-1].citations == played.citations
    assert len(server.sessions) == 2  # this server's store, not another's
    assert client._pool.get().is_closed  # the httpx clients they made, closed with them
    assert aclient._pool.get().is_closed
    # Given another token, they send it (shown in no 401: tests/client/test_privacy.py).
    async with clients(server, token="a-wrong-token") as (client, aclient):
        with pytest.raises(AuthenticationError):
            client.chat.send("hello")
        with pytest.raises(AuthenticationError):
            await aclient.chat.send("hello")
    for make in (server.client, server.async_client):
        with httpx.Client() as own, pytest.raises(TypeError, match=r"server\.transport\(\)"):
            make(http_client=own)
    # A turn in an unknown session is not found, a known one continues.
    for runner in RUNNERS:
        server = ReferenceServer()
        server.register(Scenario("lone", "Text holding lone surrogates.", script=(Say(LONE),)))
        seeded = server.seed_session([], session_id="sess_seeded")
        async with clients(server, runner, max_retries=0) as (client, aclient):
            with pytest.raises(NotFoundError):
                client.chat.send("hi", session_id="sess_never_created")
            with pytest.raises(NotFoundError):
                async with aclient.chat.stream("hi", session_id="sess_never_created") as stream:
                    await stream.until_done()
            assert len(server.sessions) == 1, runner  # the seeded one: the refused turns made none
            # Text holding lone surrogates streams and reloads as a JSON server writes it.
            first = client.chat.send("/scenario lone")
            assert first.session_id is not None
            second = await aclient.chat.send("/scenario lone", session_id=first.session_id)
            third = client.chat.send("/scenario lone", session_id=seeded)
            history = await aclient.sessions.get(first.session_id)
            assert client.sessions.get(seeded).messages[-1].text == LONE, runner
        assert (second.session_id, third.session_id) == (first.session_id, seeded), runner
        assert (first.text, second.text, third.text) == (LONE, LONE, LONE), runner
        assert [m.role for m in history.messages] == ["user", "assistant"] * 2
        assert [m.text for m in history.messages[1::2]] == [LONE, LONE], runner
        assert sorted(server.sessions) == sorted([first.session_id, seeded])
    with ReferenceServer().client(max_retries=0) as other, pytest.raises(NotFoundError):
        other.chat.send("hi", session_id=first.session_id)  # known to another server only

    # Deterministic servers store the same sessions, others random ids.
    def run(server: ReferenceServer) -> tuple[list[str | None], str]:
        with server.client() as client:
            ids = [client.chat.send(m).session_id for m in ("hi", "/scenario market-data")]
            client.chat.send("again", session_id=ids[0])
        return ids, json.dumps([server.sessions.body(str(i)) for i in ids])

    ids, bodies = run(ReferenceServer(deterministic=True))
    assert run(ReferenceServer(deterministic=True)) == (ids, bodies)
    assert ids == ["sess_0001", "sess_0002"]
    messages = json.loads(bodies)[0]["messages"]
    assert [m["id"] for m in messages] == ["msg_0001", "msg_0002", "msg_0005", "msg_0006"]
    assert {m["created_at"] for m in messages} == {"2025-01-01T00:00:00.000Z"}
    ids, _ = run(ReferenceServer())
    again, _ = run(ReferenceServer())
    assert all(i and i.startswith("sess_") and len(i) == 37 for i in ids + again)
    assert set(ids).isdisjoint(again)


def as_javascript_reads(text: str) -> str:
    """`text` with each surrogate pair joined into its character, as UTF-16 strings hold it."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


@settings(max_examples=examples(150), deadline=None)
@given(st.text(alphabet=st.characters() | st.integers(0xD800, 0xDFFF).map(chr), min_size=1))
@example("a\udc00b\U0001f600é")
@example("\ud800\udc00")  # two halves JavaScript reads as one character
def test_any_text_streams_as_utf8_json_that_reads_back(text: str) -> None:
    server = ReferenceServer()
    server.register(Scenario("say", "Says it.", script=(Say(text),)))
    with http(server) as client:
        body = client.post(CHAT, json={"message": "/scenario say"}).content
    datas = [
        line.removeprefix(b"data: ")
        for line in body.split(b"\n")
        if line.startswith(b'data: {"text"')
    ]
    texts = [json.loads(data.decode("utf-8", errors="strict"))["text"] for data in datas]
    assert as_javascript_reads("".join(texts)) == as_javascript_reads(text)
    if text == "a\udc00b\U0001f600é":  # escaped as JSON.stringify writes it (ES2019)
        assert b"".join(datas) == '{"text":"a\\udc00b😀é"}'.encode()
    if any(0xD800 <= ord(character) <= 0xDFFF for character in text):
        return  # a surrogate escaped (a pair's halves read back joined): checked above
    for data, part in zip(datas, texts, strict=True):
        plain = json.dumps({"text": part}, ensure_ascii=False, separators=(",", ":")).encode()
        assert data == plain  # text without surrogates goes out exactly as before
