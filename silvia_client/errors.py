"""Every exception the SDK raises, under one root.

    SilviaError
    ├── ConfigurationError          no base URL, a bad argument
    ├── RecordingFormatError        a recording file that cannot be read (`testing`)
    ├── InvalidAccountIdError       an account id no link can carry (`citations`)
    ├── ClientClosedError           a call on a client that was closed
    │   └── EventLoopChangedError   an async client called from a second event loop
    ├── APIError                    something went wrong talking to the server
    │   ├── APIConnectionError      could not connect, or the connection broke
    │   │   └── APITimeoutError     connect/read timed out, or the deadline passed
    │   ├── UnexpectedResponseError a 2xx that is not what the endpoint answers
    │   ├── ResponseTooLargeError   a body over max_response_bytes
    │   └── APIStatusError          a non-2xx status, before any event
    │       ├── BadRequestError         400
    │       ├── AuthenticationError     401
    │       ├── PermissionDeniedError   403
    │       ├── NotFoundError           404
    │       ├── ConflictError           409
    │       ├── RequestTooLargeError    413
    │       ├── UnprocessableEntityError 422
    │       ├── RateLimitError          429 (.retry_after)
    │       └── InternalServerError     5xx
    └── StreamError                 a chat stream that did not finish; carries .turn
        ├── ServerStreamError       the server sent an in-band `error` event
        ├── StreamDisconnectedError the connection dropped mid-stream
        ├── StreamTimeoutError      no event within the idle timeout, or the deadline passed
        ├── StreamTooLargeError     an event over max_event_bytes, or a stream over
        │                           max_response_bytes
        └── IncompleteTurnError     the stream ended (or was closed) without `done`

No message holds the bearer token or an account's provider: messages are made from
status codes, request ids and the server's own error text, scrubbed first. Every error
pickles, so one raised in a worker process reaches the parent as itself. This module
imports nothing of the SDK: every module, the ground floor's included, raises from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from .chat._turn import Turn

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ClientClosedError",
    "ConfigurationError",
    "ConflictError",
    "EventLoopChangedError",
    "IncompleteTurnError",
    "InternalServerError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestTooLargeError",
    "ResponseTooLargeError",
    "ServerStreamError",
    "SilviaError",
    "StreamDisconnectedError",
    "StreamError",
    "StreamTimeoutError",
    "StreamTooLargeError",
    "UnexpectedResponseError",
    "UnprocessableEntityError",
]


class SilviaError(Exception):
    """The root of every error the SDK raises."""

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt without `__init__` (most take keyword-only arguments), then the attributes
        # put back but an `APIStatusError`'s `response`: no HTTP object crosses a process.
        state = {name: value for name, value in self.__dict__.items() if name != "response"}
        return (_rebuilt, (type(self), self.args), state)


def _rebuilt(cls: type[SilviaError], args: tuple[object, ...]) -> SilviaError:
    return cls.__new__(cls, *args)


class ConfigurationError(SilviaError, ValueError):
    """The client was configured in a way that cannot work."""


class ClientClosedError(SilviaError):
    """The client was closed (`close()`, or its `with` block ended): make a new one."""


class EventLoopChangedError(ClientClosedError):
    """An `AsyncSilviaClient` called from an event loop other than the first it ran on.

    Its connections belong to that first loop, so it serves that loop only (nothing
    was sent): make the client inside the loop that uses it, one per `asyncio.run`.
    """


class APIError(SilviaError):
    """A request to the server failed."""


class APIConnectionError(APIError):
    """The connection could not be made, or broke before a response arrived."""


class APITimeoutError(APIConnectionError):
    """Connecting or reading took longer than the configured timeout, or the deadline passed."""


class UnexpectedResponseError(APIError):
    """A success status whose body is not what the endpoint answers (`content_type` says what)."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        request_id: str | None,
        content_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.request_id = request_id
        self.content_type = content_type


class ResponseTooLargeError(APIError):
    """A response body (decoded) longer than `max_response_bytes`; reading stopped there."""

    def __init__(self, message: str, *, limit: int, request_id: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.request_id = request_id


class APIStatusError(APIError):
    """The server answered with a non-2xx status.

    `response` is an `httpx.Response` holding what the SDK read of it: the status,
    the headers and at most the first 64 KiB of the body, already read (`.content`),
    the token blanked in each as in every other field; its request is only the
    method and the URL. It is None once the error has been pickled or copied.
    """

    response: httpx.Response | None = None  # what a pickled error comes back with

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        request_id: str | None = None,
        error_type: str | None = None,
        body: object = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.request_id = request_id
        self.error_type = error_type
        self.body = body
        self.response = response

    @property
    def headers(self) -> httpx.Headers:
        """The response's headers (the token blanked); empty without a `response`."""
        if self.response is not None:
            return self.response.headers
        import httpx  # here: this module imports nothing at run time but when asked

        return httpx.Headers()

    def __str__(self) -> str:
        suffix = f" (request id {self.request_id})" if self.request_id else ""
        return f"{self.status_code}: {self.message}{suffix}"


class BadRequestError(APIStatusError):
    """400: the server refused the request as malformed (its message says why)."""


class AuthenticationError(APIStatusError):
    """401: the token is missing, wrong or expired."""


class PermissionDeniedError(APIStatusError):
    """403: the token may not do this."""


class NotFoundError(APIStatusError):
    """404: no such session or endpoint."""


class ConflictError(APIStatusError):
    """409: the request conflicts with the session's state (a turn already running, say)."""


class RequestTooLargeError(APIStatusError):
    """413: the request (the message) is larger than the server accepts."""


class UnprocessableEntityError(APIStatusError):
    """422: the request is well-formed, but the server cannot act on what it says."""


class RateLimitError(APIStatusError):
    """429: too many requests; `retry_after` is the server's wait in seconds, if it said."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 429,
        request_id: str | None = None,
        error_type: str | None = None,
        body: object = None,
        retry_after: float | None = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(
            message,
            status_code=status_code,
            request_id=request_id,
            error_type=error_type,
            body=body,
            response=response,
        )
        self.retry_after = retry_after


class InternalServerError(APIStatusError):
    """5xx: the server failed."""


class StreamError(SilviaError):
    """A chat stream that stopped before `done`. `.turn` holds what arrived.

    `request_id` is the server's id for the request, and `session_id` the
    session's, when the server said them.
    """

    def __init__(
        self,
        message: str,
        *,
        turn: Turn,
        request_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.turn = turn
        self.request_id = request_id
        self.session_id: str | None = session_id if session_id is not None else turn.session_id

    def __str__(self) -> str:
        ids = [f"request id {self.request_id}"] if self.request_id else []
        if self.session_id:
            ids.append(f"session {self.session_id}")
        return f"{self.message} ({', '.join(ids)})" if ids else self.message


class ServerStreamError(StreamError):
    """The server sent an `error` event: the turn failed on its side."""

    def __init__(
        self,
        message: str,
        *,
        turn: Turn,
        request_id: str | None = None,
        session_id: str | None = None,
        error_type: str | None = None,
        body: object = None,
    ) -> None:
        super().__init__(message, turn=turn, request_id=request_id, session_id=session_id)
        self.error_type = error_type
        self.body = body


class StreamDisconnectedError(StreamError):
    """The connection dropped in the middle of the stream."""


class StreamTimeoutError(StreamError):
    """No event arrived within the idle timeout, or the turn's deadline passed."""


class StreamTooLargeError(StreamError):
    """An event longer than `max_event_bytes`, or a stream longer than `max_response_bytes`.

    Reading stopped at the limit (`.limit`, in bytes); `.turn` holds what came before.
    """

    def __init__(
        self,
        message: str,
        *,
        turn: Turn,
        limit: int,
        request_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__(message, turn=turn, request_id=request_id, session_id=session_id)
        self.limit = limit


class IncompleteTurnError(StreamError):
    """The stream ended cleanly but without the `done` event, or was closed before it."""
