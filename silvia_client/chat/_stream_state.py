"""What `ChatStream` and `AsyncChatStream` share: the turn being built, and how a stream ended.

Where things are: `RawEvent`, an event as the server sent it; `_StreamState`,
the twins' common half: the builder of the turn, the event decoder, the ids
(`session_id`, `request_id`), the repr, and every `StreamError` a stream can
end with, each carrying the partial turn and the ids, the server's text
scrubbed. The reading loops, sync and async, are in `_stream.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from .._deadline import Halt
from .._responses import ResponseErrors
from ..errors import (
    IncompleteTurnError,
    ServerStreamError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    StreamTooLargeError,
)
from ._turn import Turn, TurnBuilder
from .events import ErrorEvent, event_decoder

if TYPE_CHECKING:
    from .._options import Call

__all__ = ["RawEvent"]


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One SSE event as the server sent it: its name (`event:`) and its data, unread.

    The data may hold citation targets, and their providers: it is kept out of
    the repr.
    """

    name: str
    data: str = field(repr=False)


class _StreamState:
    """What the twins share: the turn under construction and how a stream ended."""

    def __init__(self, errors: ResponseErrors, call: Call, session_id: str | None) -> None:
        self._errors = errors
        self._call = call
        self._decode = event_decoder(errors.wire)
        self._builder = TurnBuilder(session_id)
        self._failure: StreamError | None = None
        self._turn: Turn | None = None
        self._response: httpx.Response | None = None
        self._began = False  # whether the first event has been asked for
        self._closed = False

    @property
    def session_id(self) -> str | None:
        """The session's id, once the server has said it (or the one you passed)."""
        return self._builder.session_id

    @property
    def request_id(self) -> str | None:
        """The server's id for this request, for support tickets."""
        response = self._response
        return None if response is None else self._errors.request_id(response)

    def _state(self) -> str:
        if self._failure is not None:
            return "failed"
        if self._builder.done:
            return "done"
        if self._closed:
            return "closed"
        return "not started" if self._response is None else "open"

    def __repr__(self) -> str:
        session_id = self._errors.scrub.optional(self.session_id)
        return (
            f"{type(self).__name__}(request_id={self.request_id!r}, "
            f"session_id={session_id!r}, state={self._state()!r})"
        )

    def _scrubbed(self, event: ErrorEvent) -> ErrorEvent:
        """The `error` event, its server text scrubbed in place before anyone sees it.

        The event is the one the turn keeps (`turn.error`), so both show the same.
        """
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

    def _too_many(self, max_objects: int) -> StreamError:
        message = (
            f"the stream holds more than {max_objects:,} events and JSON objects, the most "
            "a stream of max_response_bytes may (max_response_bytes // 64)"
        )
        return self._error(StreamTooLargeError, message, limit=self._call.max_response_bytes)

    def _halted(self, halt: Halt) -> StreamError:
        """The error for a read its guard, or a size limit, stopped."""
        if halt.limit is not None:
            return self._too_large("the stream is longer than max_response_bytes", halt.limit)
        if halt.reason == "deadline":
            return self._error(
                StreamTimeoutError, f"the turn's deadline of {self._call.seconds:g} s passed"
            )
        return self._error(IncompleteTurnError, "the stream was closed before `done`")

    def _stopped(self) -> Halt | None:
        """Why the guard stopped the read, if it did (or the deadline passed)."""
        guard = self._call.guard
        if guard is not None and guard.reason is not None:
            return guard.halt()
        if self._call.left() <= 0:
            return Halt("deadline")
        return None

    def _failed(self, error: BaseException) -> StreamError:
        if (halt := self._stopped()) is not None:  # the guard ended the read
            return self._halted(halt)
        self._errors.scrub.exception(error)
        if isinstance(error, httpx.TimeoutException):
            idle = self._call.idle_timeout
            return self._error(StreamTimeoutError, f"no data within the idle timeout ({idle:g} s)")
        return self._error(
            StreamDisconnectedError, f"the connection dropped mid-stream: {type(error).__name__}"
        )

    def _ended_early(self) -> StreamError:
        if (halt := self._stopped()) is not None:  # the guard's shutdown looked like an end
            return self._halted(halt)
        return self._error(IncompleteTurnError, "the stream ended without `done`")

    def _result(self) -> Turn:
        if self._failure is not None:
            raise self._failure
        if not self._builder.done:
            raise self._error(IncompleteTurnError, "the stream was closed before `done`")
        if self._turn is None:
            self._turn = self._builder.build()
        return self._turn

    def _raced_close(self) -> StreamError:
        # `close()` in another thread was closing the reader as this thread resumed it.
        return self._error(IncompleteTurnError, "the stream was closed before `done`")
