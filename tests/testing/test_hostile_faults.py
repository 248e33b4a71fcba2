"""The hostile faults as the server writes them: the bytes, their laziness, what they imply.

What a client makes of them, and what `expected_turn` says of them, is for `tests/e2e`; here,
read with plain httpx (raw bytes, no SDK), each fault writes what it says, a
gzip bomb is a valid gzip body of exactly the size it claims, and the server's
memory does not grow with what it sends.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Callable, Iterator

import httpx
import pytest

from silvia_client.testing import (
    SCENARIO_HEADER,
    SCENARIOS,
    DropMidEvent,
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

from ._helpers import AUTH, MiB, http, sse_events, wait_until

CHAT = "/api/claude"
SESSIONS = "/api/chat/sessions/"

DEMO_SCRIPT = SCENARIOS["demo"].script


def served(fault: Fault) -> ReferenceServer:
    """A server whose scenario `f` is the demo turn with `fault`."""
    server = ReferenceServer()
    server.register(Scenario("f", "d", script=DEMO_SCRIPT, fault=fault))
    return server


def raw_chat(client: httpx.Client, scenario: str) -> Iterator[bytes]:
    """The chat body of `scenario` as sent (still encoded), chunk by chunk."""
    headers = {SCENARIO_HEADER: scenario}
    with client.stream("POST", CHAT, json={"message": "hi"}, headers=headers) as response:
        assert response.status_code == 200
        yield from response.iter_raw()


def peak_growth(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def text_before(events: int) -> str:
    """The text of the demo turn's first `events` events, as the server expects them."""
    scenario = Scenario("cut", "d", script=DEMO_SCRIPT, fault=DropMidEvent(events))
    return expected_turn(scenario).text


# ----------------------------------------------------------------------------- what is written


def test_an_endless_line_never_ends_and_its_server_stays_small() -> None:
    # 32 MiB of one line, read raw over a socket: the server keeps one 64 KiB copy.
    server = served(SendEndlessLine())
    received = 0
    last_newline = -1

    def read() -> None:
        nonlocal received, last_newline
        with server.serve_loopback() as url, httpx.Client(base_url=url, headers=AUTH) as client:
            for chunk in raw_chat(client, "f"):
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
    server = served(fault)
    with http(server) as client:
        events = sse_events(raw_chat(client, "f"))
    *before, (name, data) = events
    assert len(before) == 4
    assert name == "text"
    assert len(json.dumps(data, separators=(",", ":"))) == fault.data_bytes
    assert set(data["text"]) == {"x"}
    assert "done" not in [n for n, _ in events]  # the body ends there


def test_a_gzip_bombed_stream_inflates_to_its_events_then_exactly_its_padding() -> None:
    # Inflated to exactly its size: gzip checks the CRC and the length of the whole.
    for inflated in [1, 100, 3 * MiB + 12_345]:
        bomb = SendGzipBomb(inflated_bytes=inflated, after_events=4)
        server = served(bomb)
        with http(server) as client:
            wire = b"".join(raw_chat(client, "f"))
        body = gzip.decompress(wire)  # which checks the CRC and the length too
        events, padding = body[:-inflated], body[-inflated:]
        assert set(padding) <= set(b": \n"), inflated  # comment lines, all of it
        assert padding.startswith(b":"), inflated
        assert events.endswith(b"\n\n"), inflated
        read = sse_events([events])
        assert [name for name, _ in read][:1] == ["session"], inflated
        assert len(read) == 4, inflated
        text = "".join(data["text"] for name, data in read if name == "text")
        assert text == text_before(4), inflated
        assert sse_events([body]) == read, inflated  # the padding adds no event


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
    server = served(fault)
    with http(server) as client:
        response = client.get(SESSIONS + "sess_x", headers={SCENARIO_HEADER: "f"})
    assert response.headers["content-encoding"] == "gzip"
    assert len(response.content) > fault.inflated_bytes  # httpx inflated it all
    assert response.json() == {"session": {"id": "sess_x"}, "messages": []}


def test_bytes_forever_keep_coming_at_their_pace_until_the_client_leaves() -> None:
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
        with pytest.raises(ValueError, match=named):
            make()
