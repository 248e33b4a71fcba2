"""`client.chat` (`AsyncChat`) and `AsyncChatStream`: a chat turn, its events, then a `Turn`.

`_sync/_stream.py` is generated from this module. `AsyncChat.stream` checks every
argument and hands the stream its client's opener, bound to the call; the request goes
out when the stream is entered or first read. Then one loop, `_read`: the body's chunks
into the SSE decoder, each event read into a typed event, applied to the turn.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Mapping
from functools import partial
from time import perf_counter
from typing import TYPE_CHECKING, Any, NoReturn

import httpx
from httpx_sse import ServerSentEvent

from .._base import ResponseErrors
from .._deadline import Call, Halt, check
from .._sse import EventTooLarge, SSEDecoder, most_values
from .._wire import DEFAULTS
from ..chat._turn import Turn, TurnBuilder
from ..chat.events import ChatEvent, RawEvent, TextEvent, event_decoder
from ..errors import (
    IncompleteTurnError,
    ServerStreamError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    StreamTooLargeError,
)
from ._backend import ALREADY_RUNNING, Opener
from ._body import drain, guarded

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._client import AsyncSilviaClient


Pair = tuple[ServerSentEvent, ChatEvent]
CLOSED_EARLY = "the stream was closed before `done`"


class AsyncChatStream:
    """A chat turn being streamed: `async with`, `async for`, `await until_done()`.

    Iterate it for events, or call `until_done()`. Every `StreamError` it ends with
    holds the partial turn. `close()` may be called from any thread or task: a read
    blocked elsewhere then ends too (the call's guard shuts its socket down).
    """

    def __init__(
        self, opener: Opener, *, errors: ResponseErrors, call: Call, session_id: str | None = None
    ) -> None:
        self._open = opener
        self._errors = errors
        self._call = call
        self._decode = event_decoder(errors.wire)
        self._builder = TurnBuilder(session_id)
        self._pairs: AsyncGenerator[Pair, None] | None = None
        self._failure: StreamError | None = None
        self._turn: Turn | None = None
        self._response: httpx.Response | None = None
        self._began = False  # whether the first event has been asked for
        self._closed = False

    async def __aenter__(self) -> Self:
        if self._pairs is None:  # the request goes out once, on entering or first reading
            builder = self._builder
            builder.started_at = perf_counter()  # `Turn.timings` count from here
            self._response, body = await self._open()
            builder.first_byte_at = perf_counter()
            builder.request_id = self._errors.request_id(self._response)
            self._pairs = self._read(self._response, body)
        return self

    async def _read(
        self, response: httpx.Response, body: AsyncIterable[bytes]
    ) -> AsyncGenerator[Pair, None]:
        self._began = True
        call, builder = self._call, self._builder
        options, guard = call.options, call.guard
        assert guard is not None, "the call was started"
        decoder = SSEDecoder(options.max_event_bytes)
        kept, most = 0, options.max_values  # events and JSON values read, and the cap
        chunks: AsyncGenerator[bytes, None] | None = None
        try:
            call.wait_between_events(response.request)  # the head came: `idle_timeout` now
            chunks = guarded(body, guard, options.max_response_bytes)
            async for chunk in chunks:
                for sse in decoder.feed(chunk):
                    kept += 1 + most_values(sse.data)  # an event, and the values in it
                    if kept > most:
                        message = (
                            f"the stream holds more than {most:,} events and JSON values, the "
                            "most a stream of max_response_bytes may (max_response_bytes // "
                            f"{DEFAULTS.bytes_per_value})"
                        )
                        limit = options.max_response_bytes
                        raise self._error(StreamTooLargeError, message, limit=limit)
                    event = self._decode(sse.event, sse.data, builder.text_length)
                    builder.apply(event)
                    if (reported := builder.error) is not None:  # an `error` event
                        # Scrubbed in place, before anyone sees it: the turn keeps it.
                        scrub = self._errors.scrub
                        reported.message = scrub.text(reported.message)
                        reported.error_type = scrub.optional(reported.error_type)
                        reported.body = scrub.value(reported.body)
                        yield sse, reported
                        message = f"the server reported an error: {reported.message}"
                        details = {"error_type": reported.error_type, "body": reported.body}
                        raise self._error(ServerStreamError, message, **details)
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
                await drain(chunks, guard)
            # Unwatched first: a late alarm must not touch a connection back in the pool.
            guard.release()
            await response.aclose()
            if chunks is not None:
                await chunks.aclose()

    async def _ended(self, error: BaseException) -> NoReturn:
        """A reader's loop ended with `error`: note a `StreamError`, or close the stream."""
        if isinstance(error, StreamError):
            self._failure = error
        elif isinstance(error, ALREADY_RUNNING) and self._closed:
            # "generator already executing": `close()` from elsewhere was closing the loop
            raise self._error(IncompleteTurnError, CLOSED_EARLY) from None
        else:  # a break out of the loop, a cancelled task, `close()` from elsewhere
            await self.close()
        raise error

    async def __aiter__(self) -> AsyncIterator[ChatEvent]:
        pairs = (await self.__aenter__())._pairs  # entered here if not by a `with`
        assert pairs is not None
        try:
            async for _, event in pairs:
                yield event
        except BaseException as error:
            await self._ended(error)

    async def aiter_with_raw(self) -> AsyncIterator[tuple[RawEvent, ChatEvent]]:
        """Each event beside its `RawEvent` (the name and data as sent), for tools that judge
        the wire. It ends as iterating does."""
        pairs = (await self.__aenter__())._pairs
        assert pairs is not None
        try:
            async for sse, event in pairs:
                yield RawEvent(sse.event, sse.data), event
        except BaseException as error:
            await self._ended(error)

    @property
    async def text_stream(self) -> AsyncIterator[str]:
        """The answer's text, piece by piece (the other events still build the turn)."""
        pairs = (await self.__aenter__())._pairs
        assert pairs is not None
        try:
            async for _, event in pairs:
                if isinstance(event, TextEvent):
                    yield event.text
        except BaseException as error:
            await self._ended(error)

    async def until_done(self) -> Turn:
        """Read whatever is left and return the complete `Turn` (raises a `StreamError` if not)."""
        pairs = (await self.__aenter__())._pairs
        assert pairs is not None
        try:
            async for _ in pairs:
                pass
        except BaseException as error:
            await self._ended(error)
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

    @property
    def request_id(self) -> str | None:
        """The server's id for this request (x-request-id), once its response has come."""
        return self._builder.request_id

    @property
    def response(self) -> httpx.Response | None:
        """The turn's `httpx.Response` once its head has come (None before): its status and
        headers. Its body is this stream: read the events, not the response."""
        return self._response

    @property
    def session_id(self) -> str | None:
        """The session's id, once the server has said it (or the one you passed)."""
        return self._builder.session_id

    @property
    def current_turn(self) -> Turn:
        """The `Turn` so far while you read (`complete` False until `done`, its `text` the text
        so far); after `until_done()`, the final turn.

        Reading it costs O(1), after every event if you like: it is the same object until
        an event changes the turn, and its text and rows are copied out on first use.
        """
        return self._turn if self._turn is not None else self._builder.snapshot()

    def __repr__(self) -> str:
        state = "not started" if self._response is None else "open"
        if self._failure is not None:
            state = "failed"
        elif self._builder.done:
            state = "done"
        elif self._closed:
            state = "closed"
        session_id = self._errors.scrub.optional(self.session_id)
        return (
            f"{type(self).__name__}(request_id={self.request_id!r}, "
            f"session_id={session_id!r}, state={state!r})"
        )

    def _error(self, cls: type[StreamError], message: str, **details: Any) -> StreamError:
        if self._call.trace is not None:  # raised next: the turn's span ends with it
            self._call.trace.error(cls)
        turn = self._builder.build()
        session_id = self._errors.scrub.optional(turn.session_id)
        return cls(message, turn=turn, request_id=self.request_id, session_id=session_id, **details)

    def _halted(self, halt: Halt | EventTooLarge) -> StreamError:
        if halt.limit is not None:
            what = "the stream is longer than max_response_bytes"
            if isinstance(halt, EventTooLarge):
                what = "an event or line is longer than max_event_bytes"
            message = f"{what} ({halt.limit:,} bytes)"
            return self._error(StreamTooLargeError, message, limit=halt.limit)
        if halt.reason == "deadline":
            seconds = self._call.options.deadline
            return self._error(StreamTimeoutError, f"the turn's deadline of {seconds:g} s passed")
        return self._error(IncompleteTurnError, CLOSED_EARLY)

    def _failed(self, error: httpx.RequestError | None) -> StreamError:
        """The error for a read that failed with `error`, or a body that ended (None): either
        may be the guard's doing (its shutdown of the socket), or the deadline's."""
        reason = None if self._call.guard is None else self._call.guard.reason
        if reason is not None or self._call.left() <= 0:
            return self._halted(Halt(reason or "deadline"))
        if error is None:
            return self._error(IncompleteTurnError, "the stream ended without `done`")
        self._errors.scrub.exception(error)
        if isinstance(error, httpx.TimeoutException):
            idle = self._call.options.idle_timeout
            return self._error(StreamTimeoutError, f"no data within the idle timeout ({idle:g} s)")
        return self._error(
            StreamDisconnectedError, f"the connection dropped mid-stream: {type(error).__name__}"
        )


class AsyncChat:
    """`client.chat`: a turn as a stream of typed events, or sent and read whole."""

    def __init__(self, client: AsyncSilviaClient) -> None:
        self._client = client

    def stream(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, object] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> AsyncChatStream:
        """Start a turn; the request is sent when the stream is entered or first read.

        Pass `session_id` to continue a session; leave it out to start one. Each argument
        is checked first, nothing sent if one is refused: another type than `str` is a
        `TypeError`; an empty or blank message, or text that cannot go out as UTF-8, a
        `ConfigurationError` (docs/configuration.md). The other keywords are this turn's
        options, each None for the client's setting (`RequestOptions`): `timeout` bounds
        the wait for the answer to start; `idle_timeout`, each silence between its events.
        """
        check("message", message)
        if session_id is not None:  # None: a new session
            check("session_id", session_id)
        client = self._client
        call = client._call(
            "chat",
            extra_headers=extra_headers,
            extra_body=extra_body,
            extra_query=extra_query,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        )
        opener = partial(client._open_chat, message, session_id, call)
        return AsyncChatStream(opener, errors=client._errors, call=call, session_id=session_id)

    async def send(
        self,
        message: str,
        *,
        session_id: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, object] | None = None,
        extra_query: Mapping[str, str | int | float] | None = None,
        timeout: float | httpx.Timeout | None = None,
        idle_timeout: float | None = None,
        deadline: float | None = None,
        max_event_bytes: int | None = None,
        max_response_bytes: int | None = None,
    ) -> Turn:
        """Run a turn to its end and return the `Turn`: `stream(...)` and `until_done()`.

        The keywords are `stream`'s. A turn that does not finish raises its
        `StreamError`, with the partial turn as `error.turn`.
        """
        # `until_done` closes what it opened, however it ends: no `async with` needed.
        stream = self.stream(
            message,
            session_id=session_id,
            extra_headers=extra_headers,
            extra_body=extra_body,
            extra_query=extra_query,
            timeout=timeout,
            idle_timeout=idle_timeout,
            deadline=deadline,
            max_event_bytes=max_event_bytes,
            max_response_bytes=max_response_bytes,
        )
        return await stream.until_done()
