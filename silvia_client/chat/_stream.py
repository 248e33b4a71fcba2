"""`ChatStream` and `AsyncChatStream`: one chat turn, as typed events and then a `Turn`.

The request is sent when the stream is entered (or first iterated). Then one
loop (`_read`) takes the body's chunks (`_body.py`: bounded, guarded), feeds
them to the SSE decoder (`_sse.py`), reads each SSE event into a typed event
(`events.py`, one table) and applies it to the turn (`TurnBuilder.apply`).
It yields each typed event beside the SSE event it came from: iterating the
stream gives the first, `iter_with_raw()` both, for tools that judge the wire
(QA); `until_done()` reads to the end. A stream that fails hands back the
partial turn on the error (`error.turn`).

Leaving the `with` block, `close()`, breaking out of the loop, or cancelling
the task closes the response. `ChatStream.close()` from another thread stops
the call's guard (`_deadline.py`), which shuts the socket down: a read blocked
in the reading thread ends, and that thread gets the `StreamError`.

What the twins share (the turn being built, the errors a stream ends with) is
`_StreamState`, in `_stream_state.py`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from time import perf_counter
from types import TracebackType
from typing import TYPE_CHECKING

import httpx
from httpx_sse import ServerSentEvent

from .._body import abody_chunks, adrain, aguarded, body_chunks, drain, guarded
from .._deadline import Halt
from .._responses import ResponseErrors
from .._sse import EventTooLarge, SSEDecoder
from ..errors import StreamError
from ._stream_state import RawEvent, _StreamState
from ._turn import Turn
from .events import ChatEvent, TextEvent

if TYPE_CHECKING:
    from typing_extensions import Self

    from .._options import Call

__all__ = ["AsyncChatStream", "ChatStream", "RawEvent"]

Pair = tuple[ServerSentEvent, ChatEvent]


class ChatStream(_StreamState):
    """A chat turn being streamed. Iterate it for events, or call `until_done()`.

    `close()` may be called from any thread: a read blocked in another thread
    then ends within a second or two, with a `StreamError` holding the partial
    turn.
    """

    def __init__(
        self,
        open_response: Callable[[], httpx.Response],
        *,
        errors: ResponseErrors,
        call: Call,
        session_id: str | None = None,
    ) -> None:
        super().__init__(errors, call, session_id)
        self._open = open_response
        self._pairs: Generator[Pair, None, None] | None = None

    def _started(self) -> Generator[Pair, None, None]:
        if self._pairs is None:
            self._builder.started_at = perf_counter()  # `Turn.timings` count from here
            self._response = self._open()
            self._builder.first_byte_at = perf_counter()
            self._builder.request_id = self.request_id
            self._pairs = self._read(self._response)
        return self._pairs

    def _read(self, response: httpx.Response) -> Generator[Pair, None, None]:
        """The one loop: chunks, SSE events, typed events, each applied to the turn."""
        self._began = True
        call, builder = self._call, self._builder
        assert call.guard is not None, "the call was started"
        decoder = SSEDecoder(call.max_event_bytes)
        kept, most = 0, call.max_objects  # events and JSON objects read, and the cap
        chunks: Generator[bytes, None, None] | None = None
        try:
            chunks = guarded(body_chunks(response), call.guard, call.max_response_bytes)
            for chunk in chunks:
                for sse in decoder.feed(chunk):
                    kept += 1 + sse.data.count("{")  # an event, and the objects in it
                    if kept > most:
                        raise self._too_many(most)
                    if call.trace is not None:
                        call.trace.event()
                    event = self._decode(sse.event, sse.data, builder.text_length)
                    builder.apply(event)
                    if builder.error is not None:  # an `error` event: the turn failed
                        yield sse, self._scrubbed(builder.error)
                        raise self._server_error(builder.error)
                    yield sse, event
                    if builder.done:
                        return
            decoder.close()
            raise self._ended_early()
        except httpx.RequestError as error:
            raise self._failed(error) from error
        except Halt as halt:
            raise self._halted(halt) from None
        except EventTooLarge as error:
            raise self._too_large(
                "an event or line is longer than max_event_bytes", error.limit
            ) from None
        finally:
            self._finish(response, chunks if builder.done else None)
            if chunks is not None:
                chunks.close()

    def _finish(self, response: httpx.Response, rest: Iterator[bytes] | None = None) -> None:
        """Close the response; after `done`, drain the `rest` first (see `_body.drain`)."""
        if self._call.trace is not None:  # first: a drain that fails cannot keep it open
            self._call.trace.end_turn(self._builder)
        guard = self._call.guard
        assert guard is not None, "the call was started"
        if rest is not None:
            drain(response, rest, guard)
        # Unwatched first: a late alarm must not touch a connection back in the pool.
        guard.release()
        response.close()

    def _each(self) -> Generator[Pair, None, None]:
        """The loop's pairs, for a reader: records how the stream ended, closes it on a break."""
        pairs = self._started()
        finished = False
        try:
            for pair in pairs:  # noqa: UP028 (as its async twin must: tests/test_twins.py)
                yield pair
            finished = True
        except StreamError as error:
            self._failure = error
            finished = True
            raise
        except ValueError:  # "generator already executing": see `_raced_close`
            if not self._closed:
                raise
            finished = True
            raise self._raced_close() from None
        finally:
            if not finished:  # the caller broke out of the loop
                self.close()

    def __iter__(self) -> Iterator[ChatEvent]:
        pairs = self._each()
        try:
            for _, event in pairs:
                yield event
        finally:
            pairs.close()

    def iter_with_raw(self) -> Iterator[tuple[RawEvent, ChatEvent]]:
        """Each event beside its `RawEvent` (the name and data as sent), for tools that judge
        the wire. It ends as iterating does."""
        pairs = self._each()
        try:
            for sse, event in pairs:
                yield RawEvent(sse.event, sse.data), event
        finally:
            pairs.close()

    @property
    def text_stream(self) -> Iterator[str]:
        """The answer's text, piece by piece (the other events still build the turn)."""
        pairs = self._each()
        try:
            for _, event in pairs:
                if isinstance(event, TextEvent):
                    yield event.text
        finally:
            pairs.close()

    def until_done(self) -> Turn:
        """Read whatever is left and return the complete `Turn` (raises a `StreamError` if not)."""
        for _ in self._each():
            pass
        return self._result()

    def close(self) -> None:
        """Close the response. From another thread, a blocked read ends with a `StreamError`."""
        self._closed = True
        if self._call.guard is not None:
            self._call.guard.stop("closed")  # wakes a read blocked in another thread
        if self._pairs is not None:
            try:
                self._pairs.close()
            except ValueError:  # another thread is reading: the stop above ends it
                return
        # Closing a generator that never started does not run its `finally`, so a
        # stream entered but not read would keep its response open: close it here.
        if self._response is not None and not self._began:
            self._finish(self._response)

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
        call: Call,
        session_id: str | None = None,
    ) -> None:
        super().__init__(errors, call, session_id)
        self._open = open_response
        self._pairs: AsyncGenerator[Pair, None] | None = None

    async def _started(self) -> AsyncGenerator[Pair, None]:
        if self._pairs is None:
            self._builder.started_at = perf_counter()  # `Turn.timings` count from here
            self._response = await self._open()
            self._builder.first_byte_at = perf_counter()
            self._builder.request_id = self.request_id
            self._pairs = self._read(self._response)
        return self._pairs

    async def _read(self, response: httpx.Response) -> AsyncGenerator[Pair, None]:
        """The one loop: chunks, SSE events, typed events, each applied to the turn."""
        self._began = True
        call, builder = self._call, self._builder
        assert call.guard is not None, "the call was started"
        decoder = SSEDecoder(call.max_event_bytes)
        kept, most = 0, call.max_objects  # events and JSON objects read, and the cap
        chunks: AsyncGenerator[bytes, None] | None = None
        try:
            chunks = aguarded(abody_chunks(response), call.guard, call.max_response_bytes)
            async for chunk in chunks:
                for sse in decoder.feed(chunk):
                    kept += 1 + sse.data.count("{")  # an event, and the objects in it
                    if kept > most:
                        raise self._too_many(most)
                    if call.trace is not None:
                        call.trace.event()
                    event = self._decode(sse.event, sse.data, builder.text_length)
                    builder.apply(event)
                    if builder.error is not None:  # an `error` event: the turn failed
                        yield sse, self._scrubbed(builder.error)
                        raise self._server_error(builder.error)
                    yield sse, event
                    if builder.done:
                        return
            decoder.close()
            raise self._ended_early()
        except httpx.RequestError as error:
            raise self._failed(error) from error
        except Halt as halt:
            raise self._halted(halt) from None
        except EventTooLarge as error:
            raise self._too_large(
                "an event or line is longer than max_event_bytes", error.limit
            ) from None
        finally:
            await self._finish(response, chunks if builder.done else None)
            if chunks is not None:
                await chunks.aclose()

    async def _finish(
        self, response: httpx.Response, rest: AsyncIterator[bytes] | None = None
    ) -> None:
        """Close the response; after `done`, drain the `rest` first (see `_body.drain`)."""
        if self._call.trace is not None:  # first: a drain that fails cannot keep it open
            self._call.trace.end_turn(self._builder)
        guard = self._call.guard
        assert guard is not None, "the call was started"
        if rest is not None:
            await adrain(response, rest, guard)
        # Unwatched first: a late alarm must not touch a connection back in the pool.
        guard.release()
        await response.aclose()

    async def _each(self) -> AsyncGenerator[Pair, None]:
        """The loop's pairs, for a reader: records how the stream ended, closes it on a break."""
        pairs = await self._started()
        finished = False
        try:
            async for pair in pairs:
                yield pair
            finished = True
        except StreamError as error:
            self._failure = error
            finished = True
            raise
        except RuntimeError:  # "asynchronous generator is already running": see `_raced_close`
            if not self._closed:
                raise
            finished = True
            raise self._raced_close() from None
        finally:
            if not finished:  # the caller broke out of the loop, or the task was cancelled
                await self.close()

    async def __aiter__(self) -> AsyncIterator[ChatEvent]:
        pairs = self._each()
        try:
            async for _, event in pairs:
                yield event
        finally:
            await pairs.aclose()

    async def aiter_with_raw(self) -> AsyncIterator[tuple[RawEvent, ChatEvent]]:
        """Each event beside its `RawEvent` (the name and data as sent), for tools that judge
        the wire. It ends as iterating does."""
        pairs = self._each()
        try:
            async for sse, event in pairs:
                yield RawEvent(sse.event, sse.data), event
        finally:
            await pairs.aclose()

    @property
    async def text_stream(self) -> AsyncIterator[str]:
        """The answer's text, piece by piece (the other events still build the turn)."""
        pairs = self._each()
        try:
            async for _, event in pairs:
                if isinstance(event, TextEvent):
                    yield event.text
        finally:
            await pairs.aclose()

    async def until_done(self) -> Turn:
        """Read whatever is left and return the complete `Turn` (raises a `StreamError` if not)."""
        async for _ in self._each():
            pass
        return self._result()

    async def close(self) -> None:
        """Close the response. From another task, a blocked read ends with a `StreamError`."""
        self._closed = True
        if self._call.guard is not None:
            self._call.guard.stop("closed")  # wakes a read blocked in another task
        if self._pairs is not None:
            try:
                await self._pairs.aclose()
            except RuntimeError:  # another task is reading: the stop above ends it
                return
        # As in `ChatStream.close`: an unstarted generator's `finally` never runs.
        if self._response is not None and not self._began:
            await self._finish(self._response)

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
