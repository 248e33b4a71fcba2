"""A hostile HTTP server on 127.0.0.1: raw sockets, every byte it writes chosen by the test.

`HostileServer(respond)` hands each request to `respond(request, connection)`, which
writes what it likes and may pause; the helpers below build a whole response, a chunked
head and chunks, SSE events. Stopping closes every connection and joins every thread,
each with a timeout, so a test never hangs on the server.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass
class Request:
    """What the client sent: the request line, the headers (lower-case names), the body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


@dataclass
class Connection:
    """One accepted connection, as `respond` sees it."""

    sock: socket.socket
    stopping: threading.Event

    def send(self, data: bytes) -> bool:
        """Write `data`; False if the client has gone (or the server is stopping)."""
        if self.stopping.is_set():
            return False
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True

    def sleep(self, seconds: float) -> bool:
        """Wait; False as soon as the server is stopping."""
        return not self.stopping.wait(seconds)

    def wait_for_close(self, timeout: float) -> bool:
        """Wait until the client closes its end (or `timeout`); True if it did."""
        self.sock.settimeout(timeout)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            return False
        return True


Respond = Callable[[Request, Connection], None]


def _read_request(sock: socket.socket) -> Request | None:
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            return None
        data += more
    head_bytes, _, body = data.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        more = sock.recv(65536)
        if not more:
            break
        body += more
    return Request(method, path, headers, body)


class HostileServer:
    """Runs `respond` for every request (`requests`, in order), on a free port, in threads;
    a connection is kept alive unless `respond` closes it."""

    def __init__(self, respond: Respond) -> None:
        self._respond = respond
        self._stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self._threads: list[threading.Thread] = []
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def __enter__(self) -> HostileServer:
        thread = threading.Thread(target=self._accept, name="hostile-accept", daemon=True)
        self._threads.append(thread)
        thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            socks = list(self._socks)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for thread in list(self._threads):
            thread.join(timeout=10)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._socks.append(sock)
            thread = threading.Thread(
                target=self._serve, args=(sock,), name="hostile-conn", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _serve(self, sock: socket.socket) -> None:
        connection = Connection(sock, self._stopping)
        with contextlib.suppress(OSError, ValueError):
            while not self._stopping.is_set():
                request = _read_request(sock)
                if request is None:
                    return
                self.requests.append(request)
                self._respond(request, connection)
                if sock.fileno() == -1:
                    return


def head(
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    *,
    reason: str = "OK",
    chunked: bool = False,
) -> bytes:
    """A status line and headers, ended by the blank line."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if chunked:
        lines.append("transfer-encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def response(
    status: int = 200,
    body: bytes = b"",
    headers: Mapping[str, str] | None = None,
    *,
    reason: str = "OK",
) -> bytes:
    """A whole response with a Content-Length."""
    return head(status, {**(headers or {}), "content-length": str(len(body))}, reason=reason) + body


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (`chunk(b"")` ends the body)."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def event(name: str, data: object) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"event: {name}\ndata: {payload}\n\n".encode()


SSE = {"content-type": "text/event-stream"}
