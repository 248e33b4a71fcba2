"""The hostile faults as the server writes them: the bytes, their laziness, what they imply.

What a client makes of them is for `tests/e2e/test_hostile_faults.py`; here,
read with plain httpx (raw bytes, no SDK), each fault writes what it says, a
gzip bomb is a valid gzip body of exactly the size it claims, and the server's
memory does not grow with what it sends.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    SCENARIOS,
    EchoToken,
    Fault,
    KeepAliveForever,
    ReferenceServer,
    Scenario,
    SendEndlessLine,
    SendGzipBomb,
    SendOversizedEvent,
    Trickle,
    expected_turn,
)
from silvia_client.testing._faults import GzipBody, crc32_combine
from silvia_client.testing._steps import Effect, Event

from ._helpers import AUTH, sse_events

MiB = 1024 * 1024
CHAT = "/api/claude"
SESSIONS = "/api/chat/sessions/"
TOKEN = "test-token"  # what `AUTH` sends
HOSTILE = (
    "fault-endless-line",
    "fault-oversized-event",
    "fault-gzip-bomb",
    "fault-trickle",
    "fault-keep-alive-forever",
    "fault-echo-token",
)

DEMO_SCRIPT = SCENARIOS["demo"].script


def served(*scenarios: Scenario) -> ReferenceServer:
    server = ReferenceServer()
    server.register(*scenarios)
    return server


def in_process(server: ReferenceServer, **options: object) -> httpx.Client:
    return httpx.Client(
        transport=server.transport(),
        base_url=IN_PROCESS_URL,
        headers=AUTH,
        **options,  # type: ignore[arg-type]
    )


def raw_chat(client: httpx.Client, scenario: str) -> Iterator[bytes]:
    """The chat body of `scenario` as sent (still encoded), chunk by chunk."""
    headers = {SCENARIO_HEADER: scenario}
    with client.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response:
        assert response.status_code == 200
        yield from response.iter_raw()


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def peak_growth(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def demo_text_before(events: int) -> str:
    """The text of the demo turn's first `events` events."""
    steps = SCENARIOS["demo"].steps(session_id="s", wire=ReferenceServer().wire)
    text, seen = [], 0
    for step in steps:
        if isinstance(step, Event):
            if seen == events:
                break
            seen += 1
            if step.name == "text":
                assert isinstance(step.data, dict)
                text.append(step.data["text"])
    return "".join(text)


# ------------------------------------------------------------------------------- the gzip body


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_crc32_combine_is_the_crc_of_the_concatenation(first: bytes, second: bytes) -> None:
    combined = crc32_combine(zlib.crc32(first), zlib.crc32(second), len(second))
    assert combined == zlib.crc32(first + second)


def test_a_gzip_body_with_padding_decodes_to_exactly_what_it_claims() -> None:
    for total in [0, 1, 1000, 3 * MiB, 3 * MiB + 12_345]:
        try:
            body = GzipBody()
            line = b": padding\n"
            wire = body.piece(b"before\n")
            first, padding = body.padding(line, total)
            wire += first + padding.segment * padding.times + padding.rest
            wire += body.piece(b"after") + body.end()
            expected = b"before\n" + (line * (total // len(line) + 1))[:total] + b"after"
            assert gzip.decompress(wire) == expected  # which checks the CRC and the length too
        except AssertionError as error:
            raise AssertionError(f"case {(total,)!r}") from error


def test_the_padding_is_compressed_once_however_much_it_inflates_to() -> None:
    _, padding = GzipBody().padding(b" ", 1024 * MiB)
    assert len(padding.segment) < 2048  # for each MiB inflated
    assert padding.times == 1024
    assert padding.rest == b""


# ----------------------------------------------------------------------------- what is written


def test_an_endless_line_never_ends_and_its_server_stays_small() -> None:
    # 32 MiB of one line, read raw over a socket: the server keeps one 64 KiB copy.
    server = served(Scenario("endless", "d", script=DEMO_SCRIPT, fault=SendEndlessLine()))
    received = 0
    last_newline = -1

    def read() -> None:
        nonlocal received, last_newline
        with server.serve_loopback() as url, httpx.Client(base_url=url, headers=AUTH) as client:
            for chunk in raw_chat(client, "endless"):
                if (at := chunk.rfind(b"\n")) >= 0:
                    last_newline = received + at
                received += len(chunk)
                if received > 32 * MiB:
                    break

    assert peak_growth(read) < 2 * MiB
    assert received > 32 * MiB
    assert 0 < last_newline < 64 * 1024  # the events before it; none since


def test_an_oversized_event_is_one_well_formed_event_of_exactly_its_size() -> None:
    fault = SendOversizedEvent(data_bytes=3 * MiB + 7, after_events=4)
    server = served(Scenario("big", "d", script=DEMO_SCRIPT, fault=fault))
    with in_process(server) as client:
        events = sse_events(raw_chat(client, "big"))
    *before, (name, data) = events
    assert len(before) == 4
    assert name == "text"
    assert len(json.dumps(data, separators=(",", ":"))) == fault.data_bytes
    assert set(data["text"]) == {"x"}
    assert "done" not in [n for n, _ in events]  # the body ends there


def test_a_gzip_bombed_stream_inflates_to_its_events_then_exactly_its_padding() -> None:
    for inflated in [5 * MiB + 3, 100]:
        try:
            server = served(
                Scenario(
                    "bomb",
                    "d",
                    script=DEMO_SCRIPT,
                    fault=SendGzipBomb(inflated_bytes=inflated, after_events=4),
                )
            )
            with in_process(server) as client:
                wire = b"".join(raw_chat(client, "bomb"))
            body = gzip.decompress(wire)  # which checks the CRC and the length too
            events, padding = body[:-inflated], body[-inflated:]
            assert set(padding) <= set(b": \n")  # comment lines, all of it
            assert padding.startswith(b":")
            assert events.endswith(b"\n\n")
            read = sse_events([events])
            assert read[0][0] == "session"
            assert len(read) == 4
            assert "".join(
                data["text"] for name, data in read if name == "text"
            ) == demo_text_before(4)
            assert sse_events([body]) == read  # the padding adds no event
        except AssertionError as error:
            raise AssertionError(f"case {(inflated,)!r}") from error


def test_the_default_gzip_bomb_is_a_few_mib_on_the_wire_and_the_server_stays_small() -> None:
    server = ReferenceServer()
    sizes: list[int] = []

    def read() -> None:
        headers = {SCENARIO_HEADER: "fault-gzip-bomb"}
        with (
            server.serve_loopback() as url,
            httpx.Client(base_url=url, headers=AUTH) as client,
            client.stream("GET", SESSIONS + "sess_1", headers=headers) as response,
        ):
            assert response.headers["content-encoding"] == "gzip"
            sizes.append(sum(len(chunk) for chunk in response.iter_raw()))  # never inflated

    assert peak_growth(read) < 2 * MiB
    (size,) = sizes
    assert 1 * MiB < size < 3 * MiB  # for 1 GiB inflated


def test_a_gzip_bombed_session_body_is_valid_json_of_its_session() -> None:
    fault = SendGzipBomb(inflated_bytes=2 * MiB + 1)
    server = served(Scenario("bomb", "d", script=DEMO_SCRIPT, fault=fault))
    with in_process(server) as client:
        response = client.get(SESSIONS + "sess_x", headers={SCENARIO_HEADER: "bomb"})
    assert response.headers["content-encoding"] == "gzip"
    assert len(response.content) > fault.inflated_bytes  # httpx inflated it all
    assert response.json() == {"session": {"id": "sess_x"}, "messages": []}


def test_a_pace_longer_than_the_read_timeout_is_a_read_timeout_in_process() -> None:
    faults: list[Fault] = [
        Trickle(every=5.0, after_events=4),
        KeepAliveForever(every=5.0, after_events=4),
    ]
    for fault in faults:
        try:
            server = served(Scenario("paced", "d", script=DEMO_SCRIPT, fault=fault))
            received: list[bytes] = []
            with in_process(server, timeout=0.2) as client, pytest.raises(httpx.ReadTimeout):
                received.extend(raw_chat(client, "paced"))
            assert b"".join(received).count(b"event: ") == 4  # the events before it came first
        except AssertionError as error:
            raise AssertionError(f"case {(fault,)!r}") from error


def test_bytes_forever_keep_coming_at_their_pace_until_the_client_leaves() -> None:
    cases: list[tuple[Fault, bytes]] = [
        (Trickle(every=0.01, after_events=4), b"x"),
        (KeepAliveForever(every=0.01), b": ping\n\n"),
    ]
    for fault, copy in cases:
        try:
            server = served(Scenario("paced", "d", script=DEMO_SCRIPT, fault=fault))
            loopback = server.serve_loopback()
            url = loopback.start()
            try:
                with httpx.Client(base_url=url, headers=AUTH) as client:
                    received = b""
                    for chunk in raw_chat(client, "paced"):
                        received += chunk
                        if received.endswith(copy * 20):
                            break
                    # The client left: the server, between two copies, notices and lets go.
                    assert wait_until(lambda: loopback.open_connections == 0)  # noqa: B023
            finally:
                loopback.stop()
        except AssertionError as error:
            raise AssertionError(f"case {(fault, copy)!r}") from error


def test_an_endless_line_ends_when_the_client_leaves() -> None:
    server = ReferenceServer()
    loopback = server.serve_loopback()
    url = loopback.start()
    try:
        with httpx.Client(base_url=url, headers=AUTH) as client:
            received = 0
            for chunk in raw_chat(client, "fault-endless-line"):
                received += len(chunk)
                if received > 4 * MiB:
                    break
            assert wait_until(lambda: loopback.open_connections == 0)
    finally:
        loopback.stop()


def test_an_echoed_token_is_the_requests_own() -> None:
    server = ReferenceServer()
    with in_process(server) as client:
        events = sse_events(raw_chat(client, "fault-echo-token"))
        status = client.post(
            CHAT, json={"message": "hi"}, headers={SCENARIO_HEADER: "fault-echo-token-401"}
        )
        session = client.get(SESSIONS + "s", headers={SCENARIO_HEADER: "fault-echo-token-401"})
    name, data = events[-1]
    assert name == "error"
    assert data["error"]["message"] == f"Request failed for Authorization: Bearer {TOKEN}"
    for response in (status, session):
        assert response.status_code == 401
        assert response.json()["error"]["message"] == f"Invalid bearer token: {TOKEN}"


# ---------------------------------------------------------------------------- what is implied


def test_a_hostile_turn_is_expected_to_end_before_its_flood_and_never_complete() -> None:
    for name in HOSTILE:
        try:
            expected = expected_turn(SCENARIOS[name], token="secret-token")
            assert not expected.complete
            assert expected.fault == SCENARIOS[name].fault.kind  # type: ignore[union-attr]
            assert expected.text == demo_text_before(12)
            assert expected.inline_citations
            if name == "fault-echo-token":
                assert expected.error is not None
                assert (
                    expected.error["message"]
                    == "Request failed for Authorization: Bearer secret-token"
                )
            else:
                assert expected.error is None
        except AssertionError as error:
            raise AssertionError(f"case {(name,)!r}") from error


def test_a_token_echoing_status_is_expected_as_that_status() -> None:
    expected = expected_turn(SCENARIOS["fault-echo-token-401"], token="secret-token")
    assert (expected.status, expected.fault) == (401, "echo_token")
    assert expected.error == {
        "type": "authentication_error",
        "message": "Invalid bearer token: secret-token",
    }


def test_no_hostile_turn_stores_its_answer() -> None:
    for name in HOSTILE:
        try:

            def start() -> None:
                pass

            def complete() -> None:
                pass

            steps = SCENARIOS[name].steps(
                session_id="s", wire=ReferenceServer().wire, on_start=start, on_complete=complete
            )
            actions = [step.action for step in steps if isinstance(step, Effect)]
            assert actions == [start]
        except AssertionError as error:
            raise AssertionError(f"case {(name,)!r}") from error


def test_bad_sizes_and_paces_are_refused_when_built() -> None:
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: SendOversizedEvent(data_bytes=0), "data_bytes"),
        (lambda: SendGzipBomb(inflated_bytes=-1), "inflated_bytes"),
        (lambda: SendGzipBomb(inflated_bytes=True), "inflated_bytes"),
        (lambda: Trickle(every=0), "every"),
        (lambda: KeepAliveForever(every=-1.0), "every"),
        (lambda: EchoToken(status=200), "status"),
    ]
    for make, named in cases:
        try:
            with pytest.raises(ValueError, match=named):
                make()
        except AssertionError as error:
            raise AssertionError(f"case {(make, named)!r}") from error
