"""The loopback server: real sockets on 127.0.0.1, started and stopped by each test."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from silvia_client.testing import LoopbackServer, ReferenceServer

from ._helpers import AUTH, CHAT, SESSIONS, http, read_turn, sse_events, wait_until


@pytest.fixture
def server() -> ReferenceServer:
    return ReferenceServer()


@pytest.fixture
def loopback(server: ReferenceServer) -> Iterator[LoopbackServer]:
    running = server.serve_loopback()
    running.start()
    yield running
    running.stop()


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


def test_one_connection_serves_several_requests_and_streams_are_chunked(
    loopback: LoopbackServer,
) -> None:
    limits = httpx.Limits(max_connections=1)
    with httpx.Client(base_url=loopback.url, headers=AUTH, limits=limits) as client:
        with client.stream("POST", CHAT, json={"message": "hi"}) as response:
            assert response.headers["transfer-encoding"] == "chunked"
            assert response.headers["x-request-id"].startswith("req_")
            session_id = sse_events(response.iter_bytes())[0][1]["sessionId"]
        for _ in range(3):
            assert client.get(SESSIONS + session_id).status_code == 200
        assert client.get(SESSIONS + "missing").status_code == 404
        assert loopback.open_connections == 1
    assert wait_until(lambda: loopback.open_connections == 0)


def test_raw_requests_get_what_http_says(loopback: LoopbackServer) -> None:
    body = b'{"message": "hi"}'
    head = b"POST /api/claude HTTP/1.%s\r\nAuthorization: Bearer t\r\n"
    length = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    # A drop closes the socket mid-event, without the last chunk.
    raw = _raw_exchange(loopback.url, head % b"1" + b"X-Silvia-Scenario: fault-drop\r\n" + length)
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"event: citation" in raw
    assert not raw.endswith(b"0\r\n\r\n")
    # An HTTP/1.0 client gets a stream ended by closing.
    head10, _, stream = _raw_exchange(loopback.url, head % b"0" + length).partition(b"\r\n\r\n")
    assert b"connection: close" in head10
    assert b"chunked" not in head10
    assert sse_events([stream])[-1] == ("done", {})
    # A chunked request body is read.
    raw = _raw_exchange(
        loopback.url,
        b"GET /api/chat/sessions/nope HTTP/1.1\r\nAuthorization: Bearer t\r\n"
        b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    )
    assert raw.startswith(b"HTTP/1.1 404 Not Found\r\n")
    assert b'"not_found_error"' in raw
    # A malformed request gets a 400 and a closed connection.
    raw = _raw_exchange(loopback.url, b"NONSENSE\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"connection: close" in raw
    assert b'"invalid_request_error"' in raw


def test_a_client_giving_up_on_a_stall_frees_its_connection(loopback: LoopbackServer) -> None:
    timeout = httpx.Timeout(5.0, read=0.2)
    with (
        httpx.Client(base_url=loopback.url, headers=AUTH, timeout=timeout) as client,
        pytest.raises(httpx.ReadTimeout),
    ):
        read_turn(client, "fault-stall", [])
    # The server is in a 300 s stall, yet notices the client left.
    assert wait_until(lambda: loopback.open_connections == 0)


def test_dozens_of_concurrent_streams_all_complete(
    server: ReferenceServer, loopback: LoopbackServer
) -> None:
    with http(ReferenceServer()) as plain:
        expected_events = len(sse_events([plain.post(CHAT, json={"message": "hi"}).content]))

    async def run() -> list[int]:
        limits = httpx.Limits(max_connections=None)
        async with httpx.AsyncClient(base_url=loopback.url, headers=AUTH, limits=limits) as client:

            async def one() -> int:
                async with client.stream("POST", CHAT, json={"message": "hi"}) as response:
                    return len(sse_events([b"".join([c async for c in response.aiter_bytes()])]))

            return await asyncio.gather(*(one() for _ in range(40)))

    assert asyncio.run(run()) == [expected_events] * 40
    assert len(server.sessions) == 40
    assert wait_until(lambda: loopback.open_connections == 0)


def test_stopping_cuts_open_streams_closes_the_port_and_joins_the_thread() -> None:
    threads_before = threading.active_count()
    server = ReferenceServer()
    running = server.serve_loopback()
    address = _address(running.start())
    sock = socket.create_connection(address, timeout=5)
    try:
        body = b'{"message": "hi"}'
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


def test_a_server_starts_once_and_reports_a_port_in_use() -> None:
    server = ReferenceServer()
    with server.serve_loopback() as url:
        port = urlsplit(url).port
        assert port
        with pytest.raises(OSError, match="in use"):
            server.serve_loopback(port=port).start()
    running = server.serve_loopback()
    with running, pytest.raises(RuntimeError, match="already"):
        running.start()
