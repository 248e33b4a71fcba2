"""What both chat streams share without I/O: `RawEvent`, and `StreamState`.

Where things are: `StreamState` holds the turn being built (`current_turn`: a
`TurnSoFar` while it is), the ids, the repr, and every `StreamError` a stream
can end with, each carrying the partial turn.
The streams that read (`AsyncChatStream`, and `ChatStream` generated from it)
are `_async/_stream.py` and `_sync/_stream.py`: one loop (`_read`) feeds the
body's chunks (bounded, guarded) to the SSE decoder (`_sse.py`), reads each SSE
event into a typed event (`events.py`) and applies it to the turn
(`TurnBuilder.apply`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx
from httpx_sse import ServerSentEvent

from .._deadline import Halt
from .._responses import ResponseErrors
from .._sse import EventTooLarge
from .._wire import DEFAULTS
from ..errors import (
    IncompleteTurnError,
    ServerStreamError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    StreamTooLargeError,
)
from ._turn import Turn, TurnBuilder
from .events import ChatEvent, ErrorEvent, event_decoder

if TYPE_CHECKING:
    from .._options import Call

__all__ = ["CLOSED_EARLY", "Pair", "RawEvent", "StreamState"]

Pair = tuple[ServerSentEvent, ChatEvent]
Opener = TypeVar("Opener")  # how a stream opens its response: sync, or awaited
CLOSED_EARLY = "the stream was closed before `done`"


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One SSE event as the server sent it: its name (`event:`) and its data, unread.

    The data may hold citation targets, and their providers: it is kept out of
    the repr.
    """

    name: str
    data: str = field(repr=False)


class StreamState(Generic[Opener]):
    """What both streams share: the turn under construction and how a stream ended."""

    def __init__(
        self,
        open_response: Opener,
        *,
        errors: ResponseErrors,
        call: Call,
        session_id: str | None = None,
    ) -> None:
        self._open = open_response
        self._errors = errors
        self._call = call
        self._decode = event_decoder(errors.wire)
        self._builder = TurnBuilder(session_id)
        self._failure: StreamError | None = None
        self._turn: Turn | None = None
        self._response: httpx.Response | None = None
        self._began = False  # whether the first event has been asked for
        self._closed = False

    def _opened(self, response: httpx.Response) -> httpx.Response:
        """Note what the response's head says: when it came, and the server's id for it."""
        self._response = response
        self._builder.first_byte_at = perf_counter()
        self._builder.request_id = self._errors.request_id(response)
        return response

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

    def _scrubbed(self, event: ErrorEvent) -> ErrorEvent:
        # In place, before anyone sees it: the turn keeps this event (`turn.error`).
        scrub = self._errors.scrub
        event.message = scrub.text(event.message)
        event.error_type = scrub.optional(event.error_type)
        event.body = scrub.value(event.body)
        return event

    def _error(self, cls: type[StreamError], message: str, **details: Any) -> StreamError:
        """A `cls` carrying the partial turn and the ids, as far as the server said them."""
        if self._call.trace is not None:  # raised next: the turn's span ends with it
            self._call.trace.error(cls)
        turn = self._builder.build()
        session_id = self._errors.scrub.optional(turn.session_id)
        return cls(message, turn=turn, request_id=self.request_id, session_id=session_id, **details)

    def _server_error(self, event: ErrorEvent) -> StreamError:
        message = f"the server reported an error: {event.message}"
        return self._error(ServerStreamError, message, error_type=event.error_type, body=event.body)

    def _too_large(self, what: str, limit: int) -> StreamError:
        return self._error(StreamTooLargeError, f"{what} ({limit:,} bytes)", limit=limit)

    def _too_many(self, max_values: int) -> StreamError:
        message = (
            f"the stream holds more than {max_values:,} events and JSON values, the most a "
            f"stream of max_response_bytes may (max_response_bytes // {DEFAULTS.bytes_per_value})"
        )
        return self._error(StreamTooLargeError, message, limit=self._call.max_response_bytes)

    def _halted(self, halt: Halt | EventTooLarge) -> StreamError:
        """The error for a read its guard, or a size limit, stopped."""
        if isinstance(halt, EventTooLarge):
            return self._too_large("an event or line is longer than max_event_bytes", halt.limit)
        if halt.limit is not None:
            return self._too_large("the stream is longer than max_response_bytes", halt.limit)
        if halt.reason == "deadline":
            return self._error(
                StreamTimeoutError, f"the turn's deadline of {self._call.seconds:g} s passed"
            )
        return self._error(IncompleteTurnError, CLOSED_EARLY)

    def _failed(self, error: httpx.RequestError | None) -> StreamError:
        """The error for a read that failed with `error`, or for a body that ended (None).

        Either may be the guard's doing (its shutdown of the socket), or the deadline's.
        """
        guard = self._call.guard
        if guard is not None and guard.reason is not None:
            return self._halted(guard.halt())
        if self._call.left() <= 0:
            return self._halted(Halt("deadline"))
        if error is None:
            return self._error(IncompleteTurnError, "the stream ended without `done`")
        self._errors.scrub.exception(error)
        if isinstance(error, httpx.TimeoutException):
            idle = self._call.idle_timeout
            return self._error(StreamTimeoutError, f"no data within the idle timeout ({idle:g} s)")
        return self._error(
            StreamDisconnectedError, f"the connection dropped mid-stream: {type(error).__name__}"
        )
