"""`ChatStream` and `AsyncChatStream`: one chat turn, as typed events and then a `Turn`.

The request is sent when the stream is entered (or first iterated). Events are
read one at a time from the open response; every event is also applied to the
turn under construction, so `until_done()` after a full iteration has nothing
left to read. Leaving the `with` block, `close()`, breaking out of the loop, or
cancelling the task closes the response. A stream that fails hands back the
partial turn on the error (`error.turn`).

The body is read through the call's bounds (see `_body.py` and
`_deadline.py`): at most `max_response_bytes` in all, `max_event_bytes` per
event, and no later than the deadline. `ChatStream.close()` from another
thread stops the call's guard, which shuts the socket down: a read blocked in
the reading thread ends, and that thread gets the `StreamError`.

`iter_with_raw()` / `aiter_with_raw()` give each event beside its `RawEvent`,
the name and data as the server sent them, for tools that judge the wire (QA).

What the twins share (the turn being built, the errors a stream ends with) is
`_StreamState`, in `_stream_state.py`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING

import httpx

from .._body import abody_chunks, adrain, aguarded, body_chunks, drain, guarded
from .._deadline import Halt
from .._responses import ResponseErrors
from .._sse import EventTooLarge, aiter_sse_batches, iter_sse_batches
from ..errors import StreamError
from ._stream_state import RawEvent, _StreamState
from ._turn import Turn
from .events import ChatEvent, CitationEvent, TextEvent

if TYPE_CHECKING:
    from typing_extensions import Self

    from .._options import Call

__all__ = ["AsyncChatStream", "ChatStream", "RawEvent"]


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
        self._events: Iterator[ChatEvent] | None = None

    def _started(self) -> Iterator[ChatEvent]:
        if self._events is None:
            self._sent()
            self._response = self._open()
            self._answered()
            self._events = self._read(self._response)
        return self._events

    def _read(self, response: httpx.Response) -> Iterator[ChatEvent]:
        # The per-event loop of the whole SDK: names looked up once, no calls but
        # the decoder's and the builder's. The SSE reader hands over the events of
        # each chunk at once; a text event comes read already (name "", see
        # `EventDecoder.quick`), and cannot end the turn.
        self._began = True
        builder = self._builder
        decode, apply = self._decode_event, builder.apply
        pieces, inline = builder.pieces, builder.inline
        add_piece = pieces.append
        citation_name, read_citation = self._citation_name, self._read_citation
        length = builder.text_length  # the answer's, kept here: a citation's offset
        call = self._call
        chunks = batches = None
        try:
            chunks = guarded(body_chunks(response), call.guard, call.max_response_bytes)
            batches = iter_sse_batches(chunks, self._quick, max_event_bytes=call.max_event_bytes)
            for batch in batches:
                for text, name, data in batch:
                    if not name:  # `builder.add_text(text)`, inlined
                        if not pieces:
                            builder.first_text()
                        add_piece(text)
                        length += len(text)
                        yield TextEvent(text)
                        continue
                    if name == citation_name:  # `apply(decode(...))`, inlined
                        citation = read_citation(data, length)
                        if type(citation) is CitationEvent:
                            inline.append(citation.citation)
                        else:
                            apply(citation)
                        yield citation
                        continue
                    event = decode(name, data, length)
                    apply(event)
                    if type(event) is TextEvent:
                        length += len(event.text)
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
        except Halt as halt:
            raise self._halted(halt) from None
        except EventTooLarge as error:
            raise self._event_too_large(error.limit) from None
        finally:
            # The parser is closed only after the drain, which reads on from `chunks`.
            self._finish(response, chunks if builder.done else None)
            if batches is not None:
                batches.close()

    def _finish(self, response: httpx.Response, rest: Iterator[bytes] | None = None) -> None:
        """Close the response; after `done`, drain the `rest` first (see `_body.drain`)."""
        guard = self._call.guard
        if rest is not None:
            drain(response, rest, guard)
        # Unwatched first: a late alarm must not touch a connection back in the pool.
        guard.release()
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
        except ValueError:  # "generator already executing": see `_raced_close`
            if not self._closed:
                raise
            finished = True
            raise self._raced_close() from None
        finally:
            if not finished:  # the caller broke out of the loop
                self.close()

    def iter_with_raw(self) -> Iterator[tuple[RawEvent, ChatEvent]]:
        """Each event beside its `RawEvent` (the name and data as sent), for tools that judge
        the wire. It must be the first read of the stream; it ends as iterating does."""
        self._recording()
        for event in self:
            assert self._raw is not None
            yield self._raw, event

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
        except ValueError:  # "generator already executing": see `_raced_close`
            if not self._closed:
                raise
            raise self._raced_close() from None
        return self._result()

    def close(self) -> None:
        """Close the response. From another thread, a blocked read ends with a `StreamError`."""
        self._closed = True
        guard = self._guard()
        if guard is not None:
            guard.stop("closed")  # wakes a read blocked in another thread
        if self._events is not None:
            try:
                self._events.close()  # type: ignore[attr-defined]
            except ValueError:  # another thread is reading: the stop above ends it
                return
        # Closing a generator that never started does not run its `finally`, so a
        # stream entered but not read would keep its response open: close it here.
        if self._response is not None:
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
        self._events: AsyncIterator[ChatEvent] | None = None

    async def _started(self) -> AsyncIterator[ChatEvent]:
        if self._events is None:
            self._sent()
            self._response = await self._open()
            self._answered()
            self._events = self._read(self._response)
        return self._events

    async def _read(self, response: httpx.Response) -> AsyncIterator[ChatEvent]:
        self._began = True
        builder = self._builder
        decode, apply = self._decode_event, builder.apply
        pieces, inline = builder.pieces, builder.inline
        add_piece = pieces.append
        citation_name, read_citation = self._citation_name, self._read_citation
        length = builder.text_length  # the answer's, kept here: a citation's offset
        call = self._call
        chunks = batches = None
        try:
            chunks = aguarded(abody_chunks(response), call.guard, call.max_response_bytes)
            batches = aiter_sse_batches(chunks, self._quick, max_event_bytes=call.max_event_bytes)
            async for batch in batches:
                for text, name, data in batch:
                    if not name:  # `builder.add_text(text)`, inlined
                        if not pieces:
                            builder.first_text()
                        add_piece(text)
                        length += len(text)
                        yield TextEvent(text)
                        continue
                    if name == citation_name:  # `apply(decode(...))`, inlined
                        citation = read_citation(data, length)
                        if type(citation) is CitationEvent:
                            inline.append(citation.citation)
                        else:
                            apply(citation)
                        yield citation
                        continue
                    event = decode(name, data, length)
                    apply(event)
                    if type(event) is TextEvent:
                        length += len(event.text)
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
        except Halt as halt:
            raise self._halted(halt) from None
        except EventTooLarge as error:
            raise self._event_too_large(error.limit) from None
        finally:
            # The parser is closed only after the drain, which reads on from `chunks`.
            await self._finish(response, chunks if builder.done else None)
            if batches is not None:
                await batches.aclose()

    async def _finish(
        self, response: httpx.Response, rest: AsyncIterator[bytes] | None = None
    ) -> None:
        """Close the response; after `done`, drain the `rest` first (see `_body.drain`)."""
        guard = self._call.guard
        if rest is not None:
            await adrain(response, rest, guard)
        # Unwatched first: a late alarm must not touch a connection back in the pool.
        guard.release()
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
        except RuntimeError:  # "asynchronous generator is already running": see `_raced_close`
            if not self._closed:
                raise
            finished = True
            raise self._raced_close() from None
        finally:
            if not finished:  # the caller broke out of the loop, or the task was cancelled
                await self.close()

    async def aiter_with_raw(self) -> AsyncIterator[tuple[RawEvent, ChatEvent]]:
        """Each event beside its `RawEvent` (the name and data as sent), for tools that judge
        the wire. It must be the first read of the stream; it ends as iterating does."""
        self._recording()
        async for event in self:
            assert self._raw is not None
            yield self._raw, event

    @property
    async def text_stream(self) -> AsyncIterator[str]:
        """The answer's text, piece by piece (the other events still build the turn)."""
        events = aiter(self)
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
        except RuntimeError:  # "asynchronous generator is already running": see `_raced_close`
            if not self._closed:
                raise
            raise self._raced_close() from None
        return self._result()

    async def close(self) -> None:
        """Close the response. From another task, a blocked read ends with a `StreamError`."""
        self._closed = True
        guard = self._guard()
        if guard is not None:
            guard.stop("closed")  # wakes a read blocked in another task
        if self._events is not None:
            try:
                await self._events.aclose()  # type: ignore[attr-defined]
            except RuntimeError:  # another task is reading: the stop above ends it
                return
        # As in `ChatStream.close`: an unstarted generator's `finally` never runs.
        if self._response is not None:
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
