"""An httpx transport straight into a reference server: no sockets, same bytes.

Where things are: `InProcessTransport`, sync and async, produces a streamed
reply step by step as the client reads, through `PlayedStream` (which the
replay transport plays its recordings through too). A pause longer than the read timeout
raises `httpx.ReadTimeout`, a drop `httpx.RemoteProtocolError`, and a `Repeat`
is written one copy at a time for as long as the client reads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Protocol

import httpx

from ._steps import Drop, Effect, Encoded, Event, Pause, Raw, Repeat, Reply, Request, Step

IN_PROCESS_URL = "http://silvia.test"
"""A base URL for clients on the in-process transports (never resolved: no sockets)."""

_DROPPED = "peer closed connection without sending complete message body (incomplete chunked read)"


class RequestHandler(Protocol):
    """What the transport forwards to: `ReferenceServer` is one."""

    def handle(self, request: Request) -> Reply:
        """Answer one request."""


# The most one read hands the client, as a socket's read would (httpx reads 64 KiB).
_PIECE = 64 * 1024


def pieces(data: bytes) -> Iterator[bytes]:
    """`data` in socket-sized pieces, so the client's limits stop it as they would live."""
    for start in range(0, len(data), _PIECE):
        yield data[start : start + _PIECE]


def read_timeout(request: httpx.Request) -> float | None:
    """The read timeout httpx set on `request` (a stream's idle timeout), or None."""
    timeout = request.extensions.get("timeout", {})
    value = timeout.get("read") if isinstance(timeout, dict) else None
    return float(value) if value is not None else None


class PlayedStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body played from `plan`: bytes to hand over, or seconds to wait first.

    Sync or async, the one difference is how it waits; an error the plan raises
    comes where it is due. Closing the stream stops the plan before its next item,
    so nothing after that point runs (an `Effect` that stores the turn, say).
    """

    def __init__(self, plan: Iterator[bytes | float]) -> None:
        self._plan = plan
        self._closed = False

    def _next(self) -> bytes | float | None:
        return None if self._closed else next(self._plan, None)

    def __iter__(self) -> Iterator[bytes]:
        while (item := self._next()) is not None:
            if isinstance(item, bytes):
                yield item
            else:
                time.sleep(item)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (item := self._next()) is not None:
            if isinstance(item, bytes):
                yield item
            else:
                await asyncio.sleep(item)

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self._closed = True


def _played(steps: Sequence[Step], request: httpx.Request) -> Iterator[bytes | float]:
    """The plan of `steps`: a pause past the read timeout waits out the timeout, then raises."""
    timeout, idle = read_timeout(request), 0.0
    for step in steps:
        if isinstance(step, (Event, Raw, Encoded)):
            idle = 0.0
            yield step.encode()
        elif isinstance(step, (Repeat, Pause)):
            seconds, data = (
                (step.every, step.data) if isinstance(step, Repeat) else (step.seconds, b"")
            )
            for _ in step.copies() if isinstance(step, Repeat) else [None]:
                if timeout is not None and idle + seconds > timeout:
                    yield max(0.0, timeout - idle)
                    raise httpx.ReadTimeout("timed out waiting for the next event", request=request)
                idle += seconds
                yield seconds
                if data:
                    idle = 0.0
                    yield data
        elif isinstance(step, Drop):
            raise httpx.RemoteProtocolError(_DROPPED, request=request)
        elif isinstance(step, Effect):
            step.action()


class InProcessTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Sync and async httpx transport to a `ReferenceServer` (or any `RequestHandler`)."""

    def __init__(self, server: RequestHandler) -> None:
        self._server = server

    def _response(self, request: httpx.Request, body: bytes) -> httpx.Response:
        target = request.url.raw_path.decode("ascii")
        received = {name.lower(): value for name, value in request.headers.items()}
        reply = self._server.handle(Request(request.method, target, received, body))
        headers = list(reply.headers)
        if reply.steps is None:
            # A stream with its length, as a socket's body: never `content=`, which httpx
            # reads and decodes whole when the response is made (a gzip body inflated all
            # at once, before any limit), where a stream goes through the client's own
            # bounded body path.
            headers.append(("content-length", str(len(reply.body))))
            plan: Iterator[bytes | float] = pieces(reply.body)
        else:
            plan = _played(reply.steps, request)
        return httpx.Response(reply.status, headers=headers, stream=PlayedStream(plan))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Hand the request to the server and stream its reply back (httpx's transport API)."""
        return self._response(request, request.read())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Hand the request to the server and stream its reply back (httpx's transport API)."""
        return self._response(request, await request.aread())
