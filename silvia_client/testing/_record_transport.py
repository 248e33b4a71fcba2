"""Capturing recordings: a transport that keeps what went by, and `record_turn` on top of it.

Where things are: `record_turn` / `arecord_turn` play one turn through a fresh
client and reload its session; `RecordingTransport(inner)` wraps a transport of
your own, keeping what passes inside `with transport.capture() as capture:`
(per thread or task) for `capture.recording()`. Times come from
`time.perf_counter` as the client reads; bodies are asked unencoded; the token
is scrubbed (`_redact.scrub_secret`) and request headers are never kept.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from .. import AsyncSilviaClient, SilviaClient
from ..errors import APIConnectionError, SilviaError
from ._recording import Recording
from ._recording_parts import (
    BodyEnd,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
)
from ._redact import scrub_secret


class _Exchange:
    """One request and its response as they pass; finished when the body ends or closes."""

    def __init__(self, request: httpx.Request, started: float) -> None:
        self.method = request.method
        self.path = request.url.raw_path.decode("ascii")
        self.body = _json_body(request)
        self.secrets = _credentials(request)
        self.started = started
        self.status = 0
        self.headers: list[tuple[str, str]] = []
        self.chunks: list[RecordedChunk] = []
        self.end: BodyEnd | None = None
        self.ended_at: float | None = None

    def since(self) -> float:
        return round(time.perf_counter() - self.started, 6)

    def add(self, data: bytes) -> None:
        if data:
            self.chunks.append(RecordedChunk(self.since(), data))

    def finish(self, how: BodyEnd) -> None:
        if self.end is None:
            self.end, self.ended_at = how, self.since()

    def outcome(self, error: BaseException) -> BodyEnd:
        return "timeout" if isinstance(error, httpx.TimeoutException) else "disconnected"


def _json_body(request: httpx.Request) -> Any:
    try:
        content = request.content
    except httpx.RequestNotRead:  # a streamed upload: the SDK never sends one
        return None
    try:
        return json.loads(content) if content else None
    except (ValueError, RecursionError):
        return content.decode("utf-8", errors="replace")


def _credentials(request: httpx.Request) -> list[str]:
    secrets = []
    for name in ("authorization", "proxy-authorization"):
        for value in request.headers.get_list(name):
            scheme, _, credentials = value.strip().partition(" ")
            secrets.append(credentials.strip() or scheme)
    return [secret for secret in secrets if secret]


class Capture:
    """What passed through a `RecordingTransport` inside one `capture()` block."""

    def __init__(self) -> None:
        self._exchanges: list[_Exchange] = []

    def recording(self) -> Recording | None:
        """The chat turn (the last POST) and its reload (the last GET after it), or None if
        no chat request got a response; call it once the turn's response is closed."""
        exchanges = self._exchanges
        chats = [i for i, exchange in enumerate(exchanges) if exchange.method == "POST"]
        if not chats:
            return None
        chat = exchanges[chats[-1]]
        reloads = [exchange for exchange in exchanges[chats[-1] + 1 :] if exchange.method == "GET"]
        recording = Recording(
            RecordedRequest(chat.method, chat.path, chat.body),
            RecordedResponse(
                chat.status,
                tuple(chat.headers),
                tuple(chat.chunks),
                chat.end or "closed",
                chat.ended_at,
            ),
            _reload(reloads[-1]) if reloads else None,
        )
        for exchange in (chat, *reloads[-1:]):
            for secret in exchange.secrets:
                recording = scrub_secret(recording, secret)
        return recording


def _reload(exchange: _Exchange) -> RecordedReload:
    body = b"".join(chunk.data for chunk in exchange.chunks)
    return RecordedReload(exchange.path, exchange.status, tuple(exchange.headers), body)


_capture: contextvars.ContextVar[Capture | None] = contextvars.ContextVar(
    "silvia_recording_capture", default=None
)


class _CapturedStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """`inner`, a sync or an async body, passed on and kept in `exchange` as it goes."""

    def __init__(self, inner: httpx.SyncByteStream | httpx.AsyncByteStream, exchange: _Exchange):
        self._inner = inner
        self._exchange = exchange

    def __iter__(self) -> Iterator[bytes]:
        exchange, inner = self._exchange, self._inner
        assert isinstance(inner, httpx.SyncByteStream)
        try:
            for chunk in inner:
                exchange.add(chunk)
                yield chunk
        except httpx.TransportError as error:
            exchange.finish(exchange.outcome(error))
            raise
        exchange.finish("ended")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        exchange, inner = self._exchange, self._inner
        assert isinstance(inner, httpx.AsyncByteStream)
        try:
            async for chunk in inner:
                exchange.add(chunk)
                yield chunk
        except httpx.TransportError as error:
            exchange.finish(exchange.outcome(error))
            raise
        exchange.finish("ended")

    def close(self) -> None:
        self._exchange.finish("closed")
        assert isinstance(self._inner, httpx.SyncByteStream)
        self._inner.close()

    async def aclose(self) -> None:
        self._exchange.finish("closed")
        assert isinstance(self._inner, httpx.AsyncByteStream)
        await self._inner.aclose()


class RecordingTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Sends through `inner` (default: a new httpx HTTP transport) and keeps what went by.

    ::

        recorder = RecordingTransport()
        http = httpx.Client(transport=recorder)
        with http, SilviaClient(base_url=..., http_client=http) as client:
            with recorder.capture() as capture:
                with client.chat.stream("How much is in checking?") as stream:
                    turn = stream.until_done()
                client.sessions.get(turn.session_id)
        recording = capture.recording()

    Closing it closes `inner` only when it made `inner` itself.
    """

    def __init__(self, inner: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner
        self._owned: list[httpx.BaseTransport | httpx.AsyncBaseTransport] = []

    @contextmanager
    def capture(self) -> Iterator[Capture]:
        """Keep what passes in this block (this thread or task, and what it starts)."""
        capture = Capture()
        reset = _capture.set(capture)
        try:
            yield capture
        finally:
            _capture.reset(reset)

    def _begin(self, request: httpx.Request) -> _Exchange | None:
        if _capture.get() is None:
            return None
        request.headers["accept-encoding"] = "identity"
        return _Exchange(request, time.perf_counter())

    @staticmethod
    def _answered(exchange: _Exchange | None, response: httpx.Response) -> httpx.Response:
        if exchange is None:  # outside a `capture()` block
            return response
        # Kept once answered: a request that got no response has nothing to replay.
        exchange.status, exchange.headers = response.status_code, response.headers.multi_items()
        capture = _capture.get()
        if capture is not None:
            capture._exchanges.append(exchange)
        assert isinstance(response.stream, (httpx.SyncByteStream, httpx.AsyncByteStream))
        return httpx.Response(
            response.status_code,
            headers=response.headers.raw,
            stream=_CapturedStream(response.stream, exchange),
            extensions=response.extensions,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request on to `inner`, keeping the exchange inside a `capture()` block."""
        inner = self._inner
        if inner is None:
            inner = self._inner = httpx.HTTPTransport()
            self._owned.append(inner)
        if not isinstance(inner, httpx.BaseTransport):
            raise TypeError("this RecordingTransport wraps an async transport")
        exchange = self._begin(request)
        return self._answered(exchange, inner.handle_request(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request on to `inner`, keeping the exchange inside a `capture()` block."""
        inner = self._inner
        if inner is None:
            inner = self._inner = httpx.AsyncHTTPTransport()
            self._owned.append(inner)
        if not isinstance(inner, httpx.AsyncBaseTransport):
            raise TypeError("this RecordingTransport wraps a sync transport")
        exchange = self._begin(request)
        return self._answered(exchange, await inner.handle_async_request(request))

    def close(self) -> None:
        """Close the transport this one made (never an `inner` it was given)."""
        for inner in self._owned:
            if isinstance(inner, httpx.BaseTransport):
                inner.close()

    async def aclose(self) -> None:
        """Close the transport this one made (never an `inner` it was given)."""
        for inner in self._owned:
            if isinstance(inner, httpx.AsyncBaseTransport):
                await inner.aclose()


def _recorded(capture: Capture, failure: SilviaError | None) -> Recording:
    recording = capture.recording()
    if recording is None:
        # No response at all: there is nothing to replay, so the error is the answer.
        raise failure if failure is not None else APIConnectionError("no chat response")
    return recording


def record_turn(
    message: str,
    *,
    session_id: str | None = None,
    transport: httpx.BaseTransport | None = None,
    **client_options: Any,
) -> Recording:
    """Record one live turn, and its session reloaded when it completed.

    The turn goes through a fresh `SilviaClient(**client_options)` (`base_url`,
    `token`, timeouts, `wire`, `default_headers`, ...: not `http_client`) over
    `transport` (default: real HTTP). A turn that fails is recorded too (its
    replay fails the same way); only a request that got no response at all
    raises, with the client's error.
    """
    recorder = RecordingTransport(transport)
    failure: SilviaError | None = None
    with (
        httpx.Client(transport=recorder) as http,
        SilviaClient(**client_options, http_client=http) as client,
        recorder.capture() as capture,
    ):
        try:
            with client.chat.stream(message, session_id=session_id) as stream:
                turn = stream.until_done()
            if turn.session_id:
                client.sessions.get(turn.session_id)
        except SilviaError as error:  # what came back is recorded; the replay shows it
            failure = error
    return _recorded(capture, failure)


async def arecord_turn(
    message: str,
    *,
    session_id: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    **client_options: Any,
) -> Recording:
    """The async twin of `record_turn`, through an `AsyncSilviaClient`."""
    recorder = RecordingTransport(transport)
    failure: SilviaError | None = None
    async with (
        httpx.AsyncClient(transport=recorder) as http,
        AsyncSilviaClient(**client_options, http_client=http) as client,
    ):
        with recorder.capture() as capture:
            try:
                async with client.chat.stream(message, session_id=session_id) as stream:
                    turn = await stream.until_done()
                if turn.session_id:
                    await client.sessions.get(turn.session_id)
            except SilviaError as error:
                failure = error
    return _recorded(capture, failure)
