"""The reference server on a real socket: HTTP/1.1 on 127.0.0.1, standard library only.

Where things are: one asyncio loop in a background thread (a coroutine per
stream is cheap where a thread is not, and a task can be cancelled mid-read);
`LoopbackServer` starts, counts open connections and stops it. Streams are
chunked, so a drop shows as a body that never ended. `log=` hears one line per
request (method, path without query, status, scenario, duration; never a header,
token or body). `allowed_hosts=` answers 421 to a `Host` that is not an IP
literal, `localhost` or a listed name (`host_allowed`), against DNS rebinding.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import ipaddress
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote, urlsplit

from ._scenario import SCENARIO_HEADER, is_scenario_name
from ._steps import Drop, Effect, Encoded, Event, Pause, Raw, Repeat, Reply, Request
from ._transport import RequestHandler

_MAX_HEAD = 64 * 1024
_MAX_BODY = 1024 * 1024
_MAX_LOGGED_PATH = 200  # characters of a path a log line shows
_VISIBLE = "".join(map(chr, range(0x21, 0x7F)))  # what a log line shows as it is
_MISDIRECTED = Reply(
    421,
    (("content-type", "text/plain; charset=utf-8"),),
    b"This server does not answer for that host name.\n",
)


class _BadRequest(Exception):
    """A request the server cannot read: `args` are its status and the message."""


@dataclass(frozen=True)
class _Incoming:
    request: Request
    http11: bool
    keep_alive: bool


class LoopbackHandler(RequestHandler, Protocol):
    """What a loopback server serves: `ReferenceServer` and `ReplayServer` are ones."""

    def error_reply(self, status: int, error_type: str, message: str) -> Reply:
        """An error reply in the wire's error format (for a request the server never got)."""


class LoopbackServer:
    """A `ReferenceServer` (or a `ReplayServer`) on a loopback socket, in a background thread.

    ::

        with server.serve_loopback(port=0) as url:
            httpx.post(f"{url}/api/claude", ...)

    `start()` / `stop()` do the same without a `with`. `log` is called from the
    server's thread (what it raises is ignored); `allowed_hosts=None` answers any
    `Host` (both: see the module docstring).
    """

    def __init__(
        self,
        server: LoopbackHandler,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        backlog: int = 1024,
        log: Callable[[str], None] | None = None,
        allowed_hosts: Iterable[str] | None = None,
    ) -> None:
        self._server = server
        self._log = log
        self._allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)
        self._host = host
        self._port = port
        self._backlog = backlog
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.url: str = ""

    # -- lifecycle -----------------------------------------------------------

    def start(self, timeout: float = 10.0) -> str:
        """Bind, start serving, and return the base URL (`http://127.0.0.1:<port>`)."""
        if self._thread is not None:
            raise RuntimeError("this loopback server was already started")
        self._thread = threading.Thread(
            target=self._run, name="silvia-reference-server", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the reference server did not start in time")
        if self._startup_error is not None:
            self._thread.join(timeout)  # it is ending: it failed to bind
            raise self._startup_error
        return self.url

    def stop(self, timeout: float = 10.0) -> None:
        """Close every connection (streams in progress are cut) and join the thread."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None or not thread.is_alive():
            return
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def open_connections(self) -> int:
        """Connections open right now (a benchmark checks none is left behind)."""
        return len(self._connections)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # reported to start(), which re-raises it
            self._startup_error = error
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        listener = await asyncio.start_server(
            self._serve_connection, self._host, self._port, backlog=self._backlog, limit=_MAX_HEAD
        )
        port = listener.sockets[0].getsockname()[1]
        host = f"[{self._host}]" if ":" in self._host else self._host
        self.url = f"http://{host}:{port}"
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            listener.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await listener.wait_closed()

    # -- connections ---------------------------------------------------------

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    incoming = await _read_request(reader, writer)
                except _BadRequest as bad:
                    status, message = bad.args
                    error = self._server.error_reply(status, "invalid_request_error", message)
                    await self._write_fixed(writer, error, keep_alive=False)
                    break
                if incoming is None:
                    break
                if not await self._respond(incoming, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping: close below
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _respond(
        self, incoming: _Incoming, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request (and log it, if asked); True when the connection may serve another."""
        started = time.perf_counter()
        allowed = self._allowed_hosts
        if allowed is not None and not host_allowed(incoming.request.headers.get("host"), allowed):
            reply = _MISDIRECTED
            incoming = _Incoming(incoming.request, incoming.http11, keep_alive=False)
        else:
            try:
                reply = self._server.handle(incoming.request)
            except Exception:  # a bug in a scenario or the server: answer, do not hang
                reply = self._server.error_reply(500, "api_error", "The reference server failed.")
        try:
            return await self._write_reply(incoming, reply, reader, writer)
        finally:  # also when the client left mid-stream, or the server is stopping
            request, milliseconds = incoming.request, (time.perf_counter() - started) * 1000
            with contextlib.suppress(Exception):  # a log that fails never ends a connection
                if self._log is not None:
                    self._log(
                        f"{_visible(request.method, 16)} {_visible(urlsplit(request.target).path)} "
                        f"{reply.status} scenario={_logged_scenario(self._server, request) or '-'} "
                        f"{milliseconds:.1f}ms"
                    )

    async def _write_reply(
        self,
        incoming: _Incoming,
        reply: Reply,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if reply.steps is None:
            await self._write_fixed(writer, reply, keep_alive=incoming.keep_alive)
            return incoming.keep_alive
        # An HTTP/1.0 client cannot read chunks: its stream ends with the connection.
        chunked = incoming.http11
        keep_alive = incoming.keep_alive and chunked
        framing = ("transfer-encoding", "chunked") if chunked else ("connection", "close")
        writer.write(
            _head(reply, [framing, ("connection", "keep-alive")] if keep_alive else [framing])
        )
        for step in reply.steps:
            if isinstance(step, (Event, Raw, Encoded)):
                writer.write(_framed(step.encode(), chunked))
                await writer.drain()
            elif isinstance(step, Repeat):
                if not await _write_repeated(step, reader, writer, chunked):
                    return False
            elif isinstance(step, Pause):
                if await _client_left_during(reader, step.seconds):
                    return False
            elif isinstance(step, Drop):
                await writer.drain()
                return False  # closed without the last chunk: the body never ends
            elif isinstance(step, Effect):
                step.action()
        if chunked:
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep_alive

    @staticmethod
    async def _write_fixed(writer: asyncio.StreamWriter, reply: Reply, *, keep_alive: bool) -> None:
        extra = [("content-length", str(len(reply.body)))]
        extra.append(("connection", "keep-alive" if keep_alive else "close"))
        writer.write(_head(reply, extra) + reply.body)
        await writer.drain()


def host_allowed(host: str | None, names: Iterable[str] = ()) -> bool:
    """Whether a request's `Host` header names this server, for `allowed_hosts`.

    True for an IP literal (`127.0.0.1`, `[::1]`), `localhost`, or one of
    `names`, with or without a port; a name in any case, with one trailing dot
    or none. False for anything else, a missing header included: a client that
    sends none (HTTP/1.0) cannot be told from a page whose name was dropped.
    """
    if host is None or not host.isascii():  # ASCII only: `lower()` then maps nothing else in
        return False
    if host.startswith("["):  # an IPv6 literal, the only form with colons inside
        literal, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")) or not _is_port(rest[1:]):
            return False
        return _is_address(ipaddress.IPv6Address, literal)
    name, _, port = host.partition(":")
    if not name or not _is_port(port):
        return False
    if _is_address(ipaddress.IPv4Address, name):
        return True
    key = _host_key(name)
    return key == "localhost" or key in map(_host_key, names)


def _is_port(text: str) -> bool:
    """What follows a host's `:`: digits, or nothing (RFC 3986 allows an empty port)."""
    return not text or text.isdigit()


def _is_address(kind: Callable[[str], object], text: str) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


def _host_key(name: str) -> str:
    """A host name as `host_allowed` compares it: lower case, one trailing dot dropped."""
    lowered = name.lower()
    return lowered[:-1] if lowered.endswith(".") else lowered


def _visible(text: str, limit: int = _MAX_LOGGED_PATH) -> str:
    """`text` for a log line: visible ASCII as it is, anything else percent-encoded, cut short."""
    shown = quote(text[:limit], safe=_VISIBLE, errors="surrogatepass")
    return shown + ("..." if len(text) > limit else "") or "-"


def _logged_scenario(server: LoopbackHandler, request: Request) -> str | None:
    """The scenario a log line names: the handler's word, else a valid name in the header."""
    scenario_for = getattr(server, "scenario_for", None)
    if callable(scenario_for):
        named = scenario_for(request)
    else:
        named = request.headers.get(SCENARIO_HEADER, "").strip()
    return named if is_scenario_name(named) else None


def _head(reply: Reply, extra: list[tuple[str, str]]) -> bytes:
    try:
        reason = http.HTTPStatus(reply.status).phrase
    except ValueError:
        reason = ""
    lines = [f"HTTP/1.1 {reply.status} {reason}"]
    lines += [f"{name}: {value}" for name, value in (*reply.headers, *extra)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _framed(data: bytes, chunked: bool) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if chunked else data


async def _write_repeated(
    step: Repeat, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, chunked: bool
) -> bool:
    """Write `step`'s copies as they are due; False if the client left meanwhile (or a
    `ConnectionError` from `drain`). Each copy yields to the loop: an endless write
    into a fast reader never starves the other connections."""
    framed = _framed(step.data, chunked)
    for _ in step.copies():
        if step.every > 0:
            if await _client_left_during(reader, step.every):
                return False
        else:
            await asyncio.sleep(0)
        writer.write(framed)
        await writer.drain()
    return True


async def _client_left_during(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Sleep `seconds`, watching the socket: True if the client closed it meanwhile (a
    client reading a stream sends nothing, so anything readable is the end)."""
    if seconds <= 0:
        return False
    try:
        await asyncio.wait_for(reader.read(1), seconds)
    except asyncio.TimeoutError:
        return False
    return True


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> _Incoming | None:
    """The next request on the connection, or None when the client closed it between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as eof:
        if eof.partial.strip():
            raise _BadRequest(400, "The request ended inside its head.") from None
        return None
    except asyncio.LimitOverrunError:
        raise _BadRequest(431, "The request head is too large.") from None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest(400, "Malformed request line.")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in header_lines:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise _BadRequest(400, "Malformed header line.")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await _read_body(reader, headers)
    http11 = version == "HTTP/1.1"
    connection = headers.get("connection", "").lower()
    keep_alive = "close" not in connection if http11 else "keep-alive" in connection
    return _Incoming(Request(method, target, headers, body), http11, keep_alive)


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise _BadRequest(400, "Malformed chunk size.") from None
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers, ignored
                return bytes(body)
            if len(body) + size > _MAX_BODY:
                raise _BadRequest(413, "The request body is too large.")
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest(400, "Malformed Content-Length.") from None
    if not 0 <= length <= _MAX_BODY:
        raise _BadRequest(413, "The request body is too large.")
    return await reader.readexactly(length)
