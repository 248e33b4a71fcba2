"""Servers the loopback benchmarks run in child processes, and the parent's handle on them.

Every server listens on 127.0.0.1 only, prints one line first (its address),
then answers one command a line on stdin (`count`, `cpu`, ...) with one line
on stdout, and stops at `stop` or when its stdin closes (so a parent that dies
takes its servers with it). `Child` is the parent's side of that.

* `Child`: a server process; `ask(command)`, `stop()`, a `with` block.
* `answer_commands(answer)`: the child's side, reading stdin in a thread.
* `Tls`, `make_tls(folder)`: a throwaway CA (`trustme`) and a certificate for
  127.0.0.1, written to `folder` for the server; the client's `SSLContext`
  trusts the CA.
* `serve_app(cert, key)`: uvicorn serving an sse-starlette app whose
  `POST /api/claude` answers a short turn (`session`, eight `text` deltas, a
  `citation` with a target, `citations_summary`, `done`), over TLS when given a
  certificate; the stack a Python Silvia would run. `python
  benchmarks/_servers.py app [--cert C --key K]`.
* `serve_delay_proxy(upstream, rtt)`: a TCP proxy that stands in for a
  network: each chunk reaches the other side half an RTT after it arrived,
  in each direction, and a connection's first chunk from the client waits one
  RTT more (the TCP handshake, which a proxy in user space cannot otherwise
  show). `count` answers the connections it accepted since the last `count`.
  `python benchmarks/_servers.py proxy --upstream PORT --rtt-ms 20`.
* `serve_raw(route)`: a small HTTP/1.1 server in asyncio, standard library
  only, whose streams are what `route(path)` yields: bytes, each sent as one
  chunk of a chunked body, and floats, seconds to wait after sending what came
  before (so a piece is computed, e.g. a clock read, just before it is sent).
  Keep-alive; `count` answers accepted and open connections, `cpu` the
  process's CPU seconds. For servers whose bytes a benchmark builds itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import select
import socket
import ssl
import subprocess
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

__all__ = [
    "SHORT_TURN_TEXT",
    "Child",
    "Route",
    "Tls",
    "answer_commands",
    "chunked",
    "make_tls",
    "raise_file_limit",
    "serve_app",
    "serve_delay_proxy",
    "serve_raw",
    "sse",
]

# --- the parent's side ---------------------------------------------------------------


class Child:
    """A server in a child process: its first line of output, then commands over a pipe."""

    def __init__(self, argv: list[str], *, timeout: float = 30.0) -> None:
        self._process = subprocess.Popen(
            [sys.executable, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._timeout = timeout
        self.first_line = self._read_line()
        if not self.first_line:
            self.stop()
            raise RuntimeError(f"the server {argv} ended before it printed its address")

    @property
    def pid(self) -> int:
        return self._process.pid

    def _read_line(self) -> str:
        """The child's next line; a child silent for `timeout` seconds is killed."""
        stdout = self._process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], self._timeout)
        if not ready:
            self._process.kill()
            self._process.wait()
            raise RuntimeError(f"the server did not answer in {self._timeout:g} s")
        return stdout.readline().strip()

    def ask(self, command: str) -> str:
        """Send one command, return the child's one-line answer."""
        assert self._process.stdin is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self._read_line()

    def stop(self) -> None:
        if self._process.poll() is not None:
            return
        assert self._process.stdin is not None
        with contextlib.suppress(BrokenPipeError, OSError):
            self._process.stdin.write("stop\n")
            self._process.stdin.close()
        try:
            self._process.wait(timeout=self._timeout)
        except subprocess.TimeoutExpired:  # uvicorn's graceful shutdown can hang
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> Child:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


# --- the child's side ----------------------------------------------------------------


def answer_commands(answer: Callable[[str], str]) -> None:
    """Answer each line of stdin with `answer(line)`, until `stop` or end of input."""
    for line in sys.stdin:
        command = line.strip()
        if command == "stop":
            break
        print(answer(command), flush=True)


async def _until_stopped(answer: Callable[[str], str]) -> None:
    """`answer_commands` in a thread, from inside an event loop: returns when it ends.

    The answers are computed on the loop's thread, so they see its state whole.
    """
    loop = asyncio.get_running_loop()

    def on_loop(command: str) -> str:
        return asyncio.run_coroutine_threadsafe(_call(answer, command), loop).result(30)

    await asyncio.to_thread(answer_commands, on_loop)


async def _call(answer: Callable[[str], str], command: str) -> str:
    return answer(command)


def raise_file_limit() -> None:
    """Let this process open as many sockets as its hard limit allows (for many streams)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def _listener() -> socket.socket:
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY on the connections only
    # then, and without it Nagle's algorithm holds each body write for the client's
    # delayed ACK (40 ms a response).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    return listener


# --- TLS material --------------------------------------------------------------------


@dataclass(frozen=True)
class Tls:
    """A certificate for 127.0.0.1 on disk (for the server) and a context trusting its CA."""

    context: ssl.SSLContext
    cert: str
    key: str


def make_tls(folder: Path) -> Tls:
    import trustme

    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1")
    context = ssl.create_default_context()
    ca.configure_trust(context)
    cert, key = folder / "cert.pem", folder / "key.pem"
    certificate.cert_chain_pems[0].write_to_path(str(cert))
    for pem in certificate.cert_chain_pems[1:]:
        pem.write_to_path(str(cert), append=True)
    certificate.private_key_pem.write_to_path(str(key))
    return Tls(context, str(cert), str(key))


# --- the uvicorn + sse-starlette app ---------------------------------------------------

SHORT_TURN_TEXT = ("Your ", "checking ", "balance ", "is ", "$4,210.00 ", "as ", "of ", "today.")
_CITATION = {
    "type": "search_result_location",
    "source": "silvia://your-account/checking",
    "title": "Checking",
    "cited_text": "Balance: $4,210.00",
    "target": {"kind": "account", "accountId": "acc_5f2b9c1e7d4a4b8e9f0a", "provider": "plaid"},
}


def serve_app(cert: str | None, key: str | None) -> None:
    """Serve the short turn on a free loopback port (TLS with `cert`); print the port."""
    import uvicorn
    from sse_starlette.sse import EventSourceResponse
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.routing import Route

    async def events() -> AsyncIterator[dict[str, str]]:
        yield {"event": "session", "data": json.dumps({"sessionId": "sess_bench"})}
        for piece in SHORT_TURN_TEXT:
            yield {"event": "text", "data": json.dumps({"text": piece})}
        yield {"event": "citation", "data": json.dumps({"citation": _CITATION})}
        yield {"event": "citations_summary", "data": json.dumps({"citations": [_CITATION]})}
        yield {"event": "done", "data": "{}"}

    async def chat(request: Request) -> EventSourceResponse:
        await request.body()
        return EventSourceResponse(events())

    app = Starlette(routes=[Route("/api/claude", chat, methods=["POST"])])
    listener = _listener()
    print(listener.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app, ssl_certfile=cert, ssl_keyfile=key, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[listener]))
        await _until_stopped(lambda command: "?")
        server.should_exit = True
        await task

    asyncio.run(main())


# --- the delay proxy -----------------------------------------------------------------


def serve_delay_proxy(upstream: int, rtt: float) -> None:
    """Forward 127.0.0.1:<new port> to 127.0.0.1:`upstream`, delayed as a network of `rtt` s."""
    accepted = 0
    half = rtt / 2
    connections: set[asyncio.Task[None]] = set()

    async def forward(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hold_first: float
    ) -> None:
        """Copy `reader` to `writer`, each chunk `half` s after it arrived (the first later)."""
        loop = asyncio.get_running_loop()
        pending: deque[tuple[float, bytes]] = deque()  # (when it is due, data); b"": the end
        arrived = asyncio.Event()

        async def receive() -> None:
            extra = hold_first
            while True:
                try:
                    data = await reader.read(65536)
                except ConnectionError:
                    data = b""
                pending.append((loop.time() + half + extra, data))
                extra = 0.0
                arrived.set()
                if not data:
                    return

        async def send() -> None:
            while True:
                await arrived.wait()
                wait = pending[0][0] - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                # Whatever is due by now goes in one write, as a socket buffer would
                # hand it over; order is kept (a held first chunk holds what follows).
                now, parts, ended = loop.time(), [], False
                while pending and pending[0][0] <= now and not ended:
                    data = pending.popleft()[1]
                    ended = not data
                    parts.append(data)
                if not pending:
                    arrived.clear()
                writer.write(b"".join(parts))
                await writer.drain()
                if ended:
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return

        tasks = [asyncio.ensure_future(receive()), asyncio.ensure_future(send())]
        try:
            await asyncio.gather(*tasks)
        except ConnectionError:
            pass
        finally:
            for task in tasks:
                task.cancel()

    async def connection(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        task = asyncio.current_task()
        assert task is not None
        connections.add(task)
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", upstream)
        except OSError:
            connections.discard(task)
            client_w.close()
            return
        try:
            await asyncio.gather(
                forward(client_r, server_w, rtt),  # the handshake: one RTT before anything
                forward(server_r, client_w, 0.0),
            )
        except asyncio.CancelledError:
            pass  # stopping
        finally:
            connections.discard(task)
            for writer in (client_w, server_w):
                writer.close()

    def answer(command: str) -> str:
        nonlocal accepted
        if command == "count":
            count, accepted = accepted, 0
            return str(count)
        return "?"

    async def main() -> None:
        listener = _listener()
        server = await asyncio.start_server(connection, sock=listener)
        print(listener.getsockname()[1], flush=True)
        await _until_stopped(answer)
        server.close()
        for task in list(connections):
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)

    asyncio.run(main())


# --- the raw HTTP/1.1 server ---------------------------------------------------------

Route = Callable[[str], Iterable[bytes | float] | None]
"""A path to the pieces of its stream (bytes: a chunk; float: seconds to wait), or None: 404."""

_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
)
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"


def sse(event: str, data: object) -> bytes:
    """One SSE event as a server writes it: compact JSON, non-ASCII as is."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"event: {event}\ndata: {text}\n\n".encode()


def chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def serve_raw(route: Route) -> None:
    """Serve `route`'s streams on a free loopback port; print the URL; stop at end of stdin."""
    raise_file_limit()
    accepted = 0
    open_now = 0
    connections: set[asyncio.Task[None]] = set()

    async def respond(writer: asyncio.StreamWriter, pieces: Iterable[bytes | float]) -> None:
        pending = [_HEAD]
        for piece in pieces:
            if isinstance(piece, bytes):
                pending.append(chunked(piece))
                continue
            writer.write(b"".join(pending))
            pending = []
            await writer.drain()
            await asyncio.sleep(piece)
        pending.append(b"0\r\n\r\n")
        writer.write(b"".join(pending))
        await writer.drain()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted, open_now
        accepted += 1
        open_now += 1
        task = asyncio.current_task()
        assert task is not None
        connections.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1].split("?")[0]
                headers = {
                    name.strip().lower(): value.strip()
                    for name, _, value in (line.partition(":") for line in lines[1:] if line)
                }
                await reader.readexactly(int(headers.get("content-length", "0")))
                pieces = route(path)
                if pieces is None:
                    writer.write(_NOT_FOUND)
                    await writer.drain()
                else:
                    await respond(writer, pieces)
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # stopping
        finally:
            open_now -= 1
            connections.discard(task)
            writer.close()

    def answer(command: str) -> str:
        if command == "count":
            return f"{accepted} {open_now}"
        if command == "cpu":
            return repr(time.process_time())
        return "?"

    async def main() -> None:
        listener = _listener()
        server = await asyncio.start_server(connection, sock=listener, backlog=4096)
        print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
        await _until_stopped(answer)
        server.close()
        for task in list(connections):
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)

    asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description="A benchmark's server (see the docstring).")
    commands = parser.add_subparsers(dest="command", required=True)
    app = commands.add_parser("app")
    app.add_argument("--cert")
    app.add_argument("--key")
    proxy = commands.add_parser("proxy")
    proxy.add_argument("--upstream", type=int, required=True)
    proxy.add_argument("--rtt-ms", type=float, default=20.0)
    args = parser.parse_args()
    if args.command == "app":
        serve_app(args.cert, args.key)
    else:
        serve_delay_proxy(args.upstream, args.rtt_ms / 1e3)


if __name__ == "__main__":
    main()
