"""`ChatStream` and `AsyncChatStream`: one chat turn, as typed events and then a `Turn`.

The request is sent when the stream is entered (or first iterated). Events are
read one at a time from the open response; every event is also applied to the
turn under construction, so `until_done()` after a full iteration has nothing
left to read. Leaving the `with` block, `close()`, breaking out of the loop, or
cancelling the task closes the response. A stream that fails hands back the
partial turn on the error (`error.turn`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING

import httpx

from .._responses import ResponseErrors
from .._sse import aiter_sse_fields, iter_sse_fields
from ..errors import (
    IncompleteTurnError,
    ServerStreamError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
)
from ._turn import Turn, TurnBuilder
from .events import ChatEvent, ErrorEvent, TextEvent, event_decoder

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["AsyncChatStream", "ChatStream"]


def _body(response: httpx.Response) -> Iterator[bytes]:
    # Without a Content-Encoding, `iter_bytes` is `iter_raw` behind two stages that
    # pass each chunk on unchanged; a stream's chunks are small and many.
    if "content-encoding" in response.headers:
        return response.iter_bytes()
    return response.iter_raw()


def _abody(response: httpx.Response) -> AsyncIterator[bytes]:
    if "content-encoding" in response.headers:
        return response.aiter_bytes()
    return response.aiter_raw()


class _StreamState:
    """What the twins share: the turn under construction and how a stream ended."""

    def __init__(self, errors: ResponseErrors, session_id: str | None) -> None:
        self._errors = errors
        self._decode_event = event_decoder(errors.wire)
        self._builder = TurnBuilder(session_id)
        self._failure: StreamError | None = None
        self._turn: Turn | None = None
        self._response: httpx.Response | None = None

    @property
    def session_id(self) -> str | None:
        """The session's id, once the server has said it (or the one you passed)."""
        return self._builder.session_id

    @property
    def request_id(self) -> str | None:
        """The server's id for this request, for support tickets."""
        response = self._response
        return None if response is None else self._errors.request_id(response)

    def _scrubbed(self, event: ErrorEvent) -> ErrorEvent:
        """The `error` event, its server text scrubbed in place before anyone sees it.

        The event is the one the turn keeps (`turn.error`), so both show the same.
        """
        scrub = self._errors.scrub
        event.message = scrub.text(event.message)
        event.error_type = scrub.optional(event.error_type)
        event.body = scrub.value(event.body)
        return event

    def _error(self, cls: type[StreamError], message: str) -> StreamError:
        """A `cls` carrying the partial turn and the ids, as far as the server said them."""
        turn = self._builder.build()
        session_id = self._errors.scrub.optional(turn.session_id)
        return cls(message, turn=turn, request_id=self.request_id, session_id=session_id)

    def _server_error(self, event: ErrorEvent) -> ServerStreamError:
        turn = self._builder.build()
        return ServerStreamError(
            f"the server reported an error: {event.message}",
            turn=turn,
            request_id=self.request_id,
            session_id=self._errors.scrub.optional(turn.session_id),
            error_type=event.error_type,
            body=event.body,
        )

    def _failed(self, error: BaseException) -> StreamError:
        self._errors.scrub.exception(error)
        if isinstance(error, httpx.TimeoutException):
            return self._error(StreamTimeoutError, "no data within the idle timeout")
        return self._error(
            StreamDisconnectedError, f"the connection dropped mid-stream: {type(error).__name__}"
        )

    def _ended_early(self) -> StreamError:
        return self._error(IncompleteTurnError, "the stream ended without `done`")

    def _result(self) -> Turn:
        if self._failure is not None:
            raise self._failure
        if not self._builder.done:
            raise self._error(IncompleteTurnError, "the stream was closed before `done`")
        if self._turn is None:
            self._turn = self._builder.build()
        return self._turn


class ChatStream(_StreamState):
    """A chat turn being streamed. Iterate it for events, or call `until_done()`."""

    def __init__(
        self,
        open_response: Callable[[], httpx.Response],
        *,
        errors: ResponseErrors,
        session_id: str | None = None,
    ) -> None:
        super().__init__(errors, session_id)
        self._open = open_response
        self._events: Iterator[ChatEvent] | None = None

    def _started(self) -> Iterator[ChatEvent]:
        if self._events is None:
            self._response = self._open()
            self._events = self._read(self._response)
        return self._events

    def _read(self, response: httpx.Response) -> Iterator[ChatEvent]:
        # The per-event loop of the whole SDK: names looked up once, no calls but
        # the decoder's and the builder's.
        builder = self._builder
        decode, apply = self._decode_event, builder.apply
        try:
            for name, data, _, _ in iter_sse_fields(_body(response)):
                event = decode(name, data, builder.text_length)
                apply(event)
                if builder.error is None:
                    yield event
                    if builder.done:
                        return
                else:  # an `error` event: the turn failed on the server
                    yield self._scrubbed(builder.error)
                    raise self._server_error(builder.error)
            raise self._ended_early()
        except httpx.RequestError as error:
            raise self._failed(error) from error
        finally:
            response.close()

    def __iter__(self) -> Iterator[ChatEvent]:
        events = self._started()
        finished = False
        try:
            yield from events
            finished = True
        except StreamError as error:
            self._failure = error
            finished = True
            raise
        finally:
            if not finished:  # the caller broke out of the loop
                self.close()

    @property
    def text_stream(self) -> Iterator[str]:
        """The answer's text, piece by piece (the other events still build the turn)."""
        events = iter(self)
        try:
            for event in events:
                if isinstance(event, TextEvent):
                    yield event.text
        finally:
            events.close()  # type: ignore[attr-defined]

    def until_done(self) -> Turn:
        """Read whatever is left and return the complete `Turn` (raises a `StreamError` if not)."""
        try:
            # Straight from the reader, not through `__iter__`: nothing is handed out,
            # and the reader closes the response however it ends.
            deque(self._started(), maxlen=0)
        except StreamError as error:
            self._failure = error
            raise
        return self._result()

    def close(self) -> None:
        if self._events is not None:
            self._events.close()  # type: ignore[attr-defined]
        # Closing a generator that never started does not run its `finally`, so a
        # stream entered but not read would keep its response open: close it here.
        if self._response is not None:
            self._response.close()

    def __enter__(self) -> Self:
        self._started()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncChatStream(_StreamState):
    """The async twin of `ChatStream`: `async with`, `async for`, `await until_done()`."""

    def __init__(
        self,
        open_response: Callable[[], Awaitable[httpx.Response]],
        *,
        errors: ResponseErrors,
        session_id: str | None = None,
    ) -> None:
        super().__init__(errors, session_id)
        self._open = open_response
        self._events: AsyncIterator[ChatEvent] | None = None

    async def _started(self) -> AsyncIterator[ChatEvent]:
        if self._events is None:
            self._response = await self._open()
            self._events = self._read(self._response)
        return self._events

    async def _read(self, response: httpx.Response) -> AsyncIterator[ChatEvent]:
        builder = self._builder
        decode, apply = self._decode_event, builder.apply
        try:
            async for name, data, _, _ in aiter_sse_fields(_abody(response)):
                event = decode(name, data, builder.text_length)
                apply(event)
                if builder.error is None:
                    yield event
                    if builder.done:
                        return
                else:  # an `error` event: the turn failed on the server
                    yield self._scrubbed(builder.error)
                    raise self._server_error(builder.error)
            raise self._ended_early()
        except httpx.RequestError as error:
            raise self._failed(error) from error
        finally:
            await response.aclose()

    async def __aiter__(self) -> AsyncIterator[ChatEvent]:
        events = await self._started()
        finished = False
        try:
            async for event in events:
                yield event
            finished = True
        except StreamError as error:
            self._failure = error
            finished = True
            raise
        finally:
            if not finished:  # the caller broke out of the loop, or the task was cancelled
                await self.close()

    @property
    async def text_stream(self) -> AsyncIterator[str]:
        """The answer's text, piece by piece (the other events still build the turn)."""
        events = self.__aiter__()
        try:
            async for event in events:
                if isinstance(event, TextEvent):
                    yield event.text
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    async def until_done(self) -> Turn:
        """Read whatever is left and return the complete `Turn` (raises a `StreamError` if not)."""
        try:
            async for _ in await self._started():  # as in `ChatStream.until_done`
                pass
        except StreamError as error:
            self._failure = error
            raise
        return self._result()

    async def close(self) -> None:
        if self._events is not None:
            await self._events.aclose()  # type: ignore[attr-defined]
        # As in `ChatStream.close`: an unstarted generator's `finally` never runs.
        if self._response is not None:
            await self._response.aclose()

    async def __aenter__(self) -> Self:
        await self._started()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
