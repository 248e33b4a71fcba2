"""`AsyncChatStream`: one chat turn, as typed events and then a `Turn`.

Where things are: `StreamState` (`chat/_stream.py`) is what both streams share
without I/O; `_sync/_stream.py` (`ChatStream`) is generated from this module by
`tools/unasync.py`. The request goes out when a stream is entered (or first
read). Then one loop (`_read`) feeds the body's chunks (`_body.py`: bounded,
guarded) to the SSE decoder (`_sse.py`), reads each SSE event into a typed event
(`events.py`) and applies it to the turn (`TurnBuilder.apply`). It yields both:
iterating the stream gives the typed event, `aiter_with_raw()` both, for tools
that judge the wire (QA).

Leaving the `async with` block, `close()`, breaking out of the loop, or cancelling
the task closes the response. `close()` from elsewhere stops the call's guard
(`_deadline.py`), which shuts the socket down: the blocked read ends, and its
reader gets the `StreamError`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from time import perf_counter
from typing import TYPE_CHECKING

import httpx

from .._deadline import Halt
from .._json import most_values
from .._sse import EventTooLarge, SSEDecoder
from ..chat._stream import CLOSED_EARLY, Pair, RawEvent, StreamState
from ..chat._turn import Turn
from ..chat.events import ChatEvent, TextEvent
from ..errors import IncompleteTurnError, StreamError
from ._backend import ALREADY_RUNNING, Opener
from ._body import body_chunks, drain, guarded

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["AsyncChatStream"]


class AsyncChatStream(StreamState[Opener]):
    """A chat turn being streamed: `async with`, `async for`, `await until_done()`.

    Iterate it for events, or call `until_done()`. `close()` may be called from
    any thread or task: a read blocked elsewhere then ends within a second or
    two, with a `StreamError` holding the partial turn. `request_id` is the
    server's id for the request, for support tickets.
    """

    _pairs: AsyncGenerator[Pair, None] | None = None

    async def __aenter__(self) -> Self:
        if self._pairs is None:  # the request goes out once, on entering or first reading
            self._builder.started_at = perf_counter()  # `Turn.timings` count from here
            self._pairs = self._read(self._opened(await self._open()))
        return self

    async def _read(self, response: httpx.Response) -> AsyncGenerator[Pair, None]:
        """The one loop: each SSE event of the body read into a typed event, applied to the turn."""
        self._began = True
        call, builder = self._call, self._builder
        guard = call.guard
        assert guard is not None, "the call was started"
        decoder = SSEDecoder(call.max_event_bytes)
        kept, most = 0, call.max_values  # events and JSON values read, and the cap
        chunks: AsyncGenerator[bytes, None] | None = None
        try:
            call.wait_between_events(response.request)  # the head came: `idle_timeout` now
            chunks = guarded(body_chunks(response), guard, call.max_response_bytes)
            async for chunk in chunks:
                for sse in decoder.feed(chunk):
                    kept += 1 + most_values(sse.data)  # an event, and the values in it
                    if kept > most:
                        raise self._too_many(most)
                    event = self._decode(sse.event, sse.data, builder.text_length)
                    builder.apply(event)
                    if builder.error is not None:  # an `error` event: the turn failed
                        yield sse, self._scrubbed(builder.error)
                        raise self._server_error(builder.error)
                    yield sse, event
                    if builder.done:
                        return
            decoder.close()
            raise self._failed(None)
        except httpx.RequestError as error:
            raise self._failed(error) from error
        except (Halt, EventTooLarge) as halt:
            raise self._halted(halt) from None
        finally:
            if call.trace is not None:  # first: a drain that fails cannot keep it open
                call.trace.end_turn(builder)
            if chunks is not None and builder.done:
                await drain(chunks, guard)  # the rest of the body (see `_body.drain`)
            # Unwatched first: a late alarm must not touch a connection back in the pool.
            guard.release()
            await response.aclose()
            if chunks is not None:
                await chunks.aclose()

    async def _each(self) -> AsyncGenerator[Pair, None]:
        """The loop's pairs, for a reader: records how the stream ended, closes it on a break."""
        pairs = (await self.__aenter__())._pairs  # entered here if not by a `with`
        assert pairs is not None
        try:
            async for pair in pairs:
                yield pair
        except StreamError as error:
            self._failure = error
            raise
        except ALREADY_RUNNING:  # "generator already executing": `close()` from elsewhere
            if self._closed:  # was closing the loop as this reader resumed it
                raise self._error(IncompleteTurnError, CLOSED_EARLY) from None
            await self.close()
            raise
        except BaseException:  # the caller broke out of the loop, or the task was cancelled
            await self.close()
            raise

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
        if self._failure is not None:
            raise self._failure
        if not self._builder.done:
            raise self._error(IncompleteTurnError, CLOSED_EARLY)
        if self._turn is None:
            self._turn = self._builder.build()
        return self._turn

    async def close(self) -> None:
        """Close the response. From elsewhere, a blocked read ends with a `StreamError`."""
        self._closed = True
        guard = self._call.guard
        if guard is not None:
            guard.stop("closed")  # wakes a read blocked in another thread or task
        if self._pairs is None:  # never entered
            return
        try:
            await self._pairs.aclose()
        except ALREADY_RUNNING:  # another reader is reading: the stop above ends it
            return
        # Closing a generator that never started does not run its `finally`, so a
        # stream entered but not read would keep its response open: close it here.
        if not self._began and self._response is not None and guard is not None:
            if self._call.trace is not None:
                self._call.trace.end_turn(self._builder)
            guard.release()
            await self._response.aclose()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
