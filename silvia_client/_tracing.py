"""OpenTelemetry traces of a client's operations: one span per operation, one per HTTP attempt.

An operation's `Operation` is its `Call.trace`: None without a `tracer_provider`, and then
neither this module nor OpenTelemetry is imported. The page for users is `docs/tracing.md`.

What a span holds is chosen for privacy: ids, counts, statuses, the server's address, timings and
error types; never a message, an answer's text, a citation or its target, a header (so never the
token), nor an exception's message, which may quote the server. What the server sent (the request
id, the session id) is scrubbed first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from .errors import ConfigurationError

if TYPE_CHECKING:
    import httpx
    from opentelemetry.trace import Span, Tracer

    from ._base import ResponseErrors
    from .chat._turn import TurnBuilder


_DEFAULT_PORTS = {"http": 80, "https": 443}
# One span per operation, named for what the user called.
_NAMES = {"chat": "silvia.chat", "get": "silvia.sessions.get"}


def _set(span: Span, name: str, value: str | bool | int | None) -> None:
    if value is not None:
        span.set_attribute(name, value)


def _fail(span: Span, error_type: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, error_type))


class Tracing:
    """A client's tracing: each operation a span of `tracer_provider`'s tracer; `errors`
    reads a response's request id, and scrubs what the server sent."""

    def __init__(self, tracer_provider: Any, propagate: bool, errors: ResponseErrors) -> None:
        try:
            from opentelemetry import propagate as otel_propagate
        except ImportError:
            raise ConfigurationError(
                "tracer_provider needs OpenTelemetry's API: pip install 'silvia-client[otel]'"
            ) from None
        from ._version import __version__

        self.tracer: Tracer = tracer_provider.get_tracer("silvia_client", __version__)
        # By OpenTelemetry's propagators (a `traceparent` header); None: not propagated.
        self.inject: Callable[..., None] | None = otel_propagate.inject if propagate else None
        self.errors: ResponseErrors = errors
        self.scrub: Callable[[str | None], str | None] = errors.scrub.optional

    def start(self, kind: str, path: str | None = None) -> Operation:
        """The operation of kind `kind` ("chat" or "get", of `path`) starts."""
        session_id, prefix = None, self.errors.wire.session_path
        if path is not None and path.startswith(prefix):
            session_id = unquote(path[len(prefix) :])
        return Operation(self, kind, session_id)


class Operation:
    """One operation's span and its current attempt's: `attempt`, `response` and `failed` for
    each HTTP attempt; `error` (the type a stream raises next), `end_turn` and `end`."""

    def __init__(self, tracing: Tracing, kind: str, session_id: str | None) -> None:
        from opentelemetry.trace import SpanKind

        self._tracing = tracing
        self.kind: str = kind
        # A clock pair, so that the turn's `perf_counter` stamps become span event times.
        self._wall_ns, self._perf = time.time_ns(), time.perf_counter()
        self._span = tracing.tracer.start_span(
            _NAMES.get(kind, f"silvia.{kind}"), kind=SpanKind.INTERNAL, start_time=self._wall_ns
        )
        _set(self._span, "silvia.session_id", tracing.scrub(session_id))
        self._attempt: Span | None = None
        self._error_type: str | None = None
        self._ended = False

    def attempt(self, request: httpx.Request, resend_count: int) -> None:
        """An HTTP attempt starts: its span, a child of the operation's."""
        from opentelemetry.trace import SpanKind, set_span_in_context

        self._end_attempt()
        url = request.url
        attributes: dict[str, str | int] = {
            "http.request.method": request.method,
            "server.address": url.host,
            "server.port": url.port or _DEFAULT_PORTS.get(url.scheme, 0),
            "url.scheme": url.scheme,
            # The client's own URL: the base URL (no credentials, no query) and a path
            # that holds at most a session id, scrubbed as the span's own is.
            "url.full": self._tracing.scrub(str(url)) or "",
        }
        if resend_count:
            attributes["http.request.resend_count"] = resend_count
        self._attempt = span = self._tracing.tracer.start_span(
            request.method,
            context=set_span_in_context(self._span),
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        if (inject := self._tracing.inject) is not None:
            inject(request.headers, context=set_span_in_context(span))

    def response(self, response: httpx.Response) -> None:
        """The attempt's response head came."""
        span = self._attempt
        if span is None:
            return
        span.set_attribute("http.response.status_code", response.status_code)
        span.set_attribute("network.protocol.version", response.http_version.removeprefix("HTTP/"))
        _set(self._span, "silvia.request_id", self._tracing.errors.request_id(response))
        if response.is_success and self.kind == "chat":
            self._end_attempt()  # the stream's body is the turn's, not the attempt's

    def failed(self, failure: httpx.Response | httpx.TransportError) -> None:
        """The attempt failed: a status the SDK raises for, or a transport error."""
        if isinstance(failure, BaseException):
            return self._end_attempt(type(failure).__name__)
        self._end_attempt(str(failure.status_code))

    def _end_attempt(self, error_type: str | None = None) -> None:
        span, self._attempt = self._attempt, None
        if span is not None:
            if error_type is not None:
                _fail(span, error_type)
            span.end()

    def error(self, cls: type[BaseException]) -> None:
        """The error type the stream raises next, if none was noted before."""
        if self._error_type is None:
            self._error_type = cls.__name__

    def end_turn(self, builder: TurnBuilder) -> None:
        """The turn ended: its counts and timings on the span, which ends."""
        if self._ended:
            return
        turn = builder.build()
        span = self._span
        span.set_attribute("silvia.turn.complete", turn.complete)
        span.set_attribute("silvia.turn.events", builder.events)
        span.set_attribute("silvia.turn.citations", len(turn.citations))
        span.set_attribute("silvia.turn.inline_citations", len(turn.inline_citations))
        _set(span, "silvia.session_id", self._tracing.scrub(turn.session_id))
        for name, stamp in (
            ("first_byte", builder.first_byte_at),
            ("first_text", builder.first_text_at),
            ("done", builder.done_at),
        ):
            if stamp is not None:
                span.add_event(name, timestamp=self._wall_ns + int((stamp - self._perf) * 1e9))
        self.end()

    def end(self, error: BaseException | None = None) -> None:
        """The operation ends (failed with `error`'s type, or the noted one); once only."""
        if self._ended:
            return
        self._ended = True
        error_type = self._error_type
        if isinstance(error, Exception):
            error_type = error_type or type(error).__name__
        span = self._span
        self._end_attempt(error_type)
        if error_type is not None:
            _fail(span, error_type)
            # The exception's type only: its message may quote the server.
            span.add_event("exception", {"exception.type": error_type})
        elif error is not None:
            # Ended by a cancel, an interrupt, or a stream closed early: no error of its own.
            span.set_attribute("silvia.ended_by", type(error).__name__)
        span.end()
