"""An httpx transport straight into a reference server: no sockets, same bytes.

Where things are: `InProcessTransport`, sync and async, produces a streamed
reply step by step as the client reads. A pause longer than the read timeout
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

__all__ = ["IN_PROCESS_URL", "InProcessTransport", "RequestHandler"]

IN_PROCESS_URL = "http://silvia.test"
"""A base URL for clients on the in-process transports (never resolved: no sockets)."""

_DROPPED = "peer closed connection without sending complete message body (incomplete chunked read)"


class RequestHandler(Protocol):
    """What the transport forwards to: `ReferenceServer` is one."""

    def handle(self, request: Request) -> Reply:
        """Answer one request."""


def _server_request(request: httpx.Request, body: bytes) -> Request:
    headers = {name.lower(): value for name, value in request.headers.items()}
    return Request(request.method, request.url.raw_path.decode("ascii"), headers, body)


def _read_timeout(request: httpx.Request) -> float | None:
    timeout = request.extensions.get("timeout", {})
    value = timeout.get("read") if isinstance(timeout, dict) else None
    return float(value) if value is not None else None


class _IdleClock:
    """Silence since the last bytes, against the read timeout."""

    def __init__(self, request: httpx.Request) -> None:
        self._request = request
        self._timeout = _read_timeout(request)
        self._idle = 0.0

    def heard(self) -> None:
        self._idle = 0.0

    def pause(self, seconds: float) -> tuple[float, bool]:
        """How long to sleep for a pause, and whether the read times out after that."""
        if self._timeout is not None and self._idle + seconds > self._timeout:
            return max(0.0, self._timeout - self._idle), True
        self._idle += seconds
        return seconds, False

    def timeout_error(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout("timed out waiting for the next event", request=self._request)


class _SyncSteps(httpx.SyncByteStream):
    def __init__(self, steps: Sequence[Step], request: httpx.Request) -> None:
        self._steps = steps
        self._request = request
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        clock = _IdleClock(self._request)
        for step in self._steps:
            if self._closed:
                return
            if isinstance(step, (Event, Raw, Encoded)):
                clock.heard()
                yield step.encode()
            elif isinstance(step, Repeat):
                for _ in step.copies():
                    if self._closed:
                        return
                    seconds, times_out = clock.pause(step.every)
                    time.sleep(seconds)
                    if times_out:
                        raise clock.timeout_error()
                    clock.heard()
                    yield step.data
            elif isinstance(step, Pause):
                seconds, times_out = clock.pause(step.seconds)
                time.sleep(seconds)
                if times_out:
                    raise clock.timeout_error()
            elif isinstance(step, Drop):
                raise httpx.RemoteProtocolError(_DROPPED, request=self._request)
            elif isinstance(step, Effect):
                step.action()

    def close(self) -> None:
        self._closed = True


class _AsyncSteps(httpx.AsyncByteStream):
    def __init__(self, steps: Sequence[Step], request: httpx.Request) -> None:
        self._steps = steps
        self._request = request
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        clock = _IdleClock(self._request)
        for step in self._steps:
            if self._closed:
                return
            if isinstance(step, (Event, Raw, Encoded)):
                clock.heard()
                yield step.encode()
            elif isinstance(step, Repeat):
                for _ in step.copies():
                    if self._closed:
                        return
                    seconds, times_out = clock.pause(step.every)
                    await asyncio.sleep(seconds)
                    if times_out:
                        raise clock.timeout_error()
                    clock.heard()
                    yield step.data
            elif isinstance(step, Pause):
                seconds, times_out = clock.pause(step.seconds)
                await asyncio.sleep(seconds)
                if times_out:
                    raise clock.timeout_error()
            elif isinstance(step, Drop):
                raise httpx.RemoteProtocolError(_DROPPED, request=self._request)
            elif isinstance(step, Effect):
                step.action()

    async def aclose(self) -> None:
        self._closed = True


def _response(reply: Reply, stream: httpx.SyncByteStream | httpx.AsyncByteStream) -> httpx.Response:
    return httpx.Response(reply.status, headers=list(reply.headers), stream=stream)


class InProcessTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Sync and async httpx transport to a `ReferenceServer` (or any `RequestHandler`)."""

    def __init__(self, server: RequestHandler) -> None:
        self._server = server

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Hand the request to the server and stream its reply back (httpx's transport API)."""
        reply = self._server.handle(_server_request(request, request.read()))
        if reply.steps is None:
            return httpx.Response(reply.status, headers=list(reply.headers), content=reply.body)
        return _response(reply, _SyncSteps(reply.steps, request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Hand the request to the server and stream its reply back (httpx's transport API)."""
        reply = self._server.handle(_server_request(request, await request.aread()))
        if reply.steps is None:
            return httpx.Response(reply.status, headers=list(reply.headers), content=reply.body)
        return _response(reply, _AsyncSteps(reply.steps, request))
