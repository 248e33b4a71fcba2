"""What an observed turn is: `Observation`, its events, reload, timings and failures.

Here: `Observation` and its parts (`SentEvent`, `Reload`), `observation_from_turn`
for a plain `Turn`; `AccessFailure` (a server refused the credentials or could not
be reached: a run stops, exit status 3); the `Stopwatch` that times a recorded
turn by its recording's clock (live, `Turn.timings` is the SDK's own); the
one-line accounts of what went wrong (no body, header, token or provider); and
the observations both observers build when a turn is reloaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import httpx

from .. import DEFAULT_WIRE, WireFormat
from .._sse import loads
from ..chat import ChatEvent, DoneEvent, TextEvent, Timings, Turn, decode_event
from ..errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    IncompleteTurnError,
    PermissionDeniedError,
    ServerStreamError,
    SilviaError,
    StreamDisconnectedError,
    StreamError,
    StreamTimeoutError,
    UnexpectedResponseError,
)
from ..sessions import Session, parse_session
from ._privacy import redact_text

if TYPE_CHECKING:
    from ..testing import Recording


@dataclass(frozen=True)
class AccessFailure:
    """Why a server could not be used: `refused` (401, 403) or `unreachable`.

    `message` is one line naming the cause and the request id (or saying
    there was none); it never holds the token.
    """

    kind: Literal["refused", "unreachable"]
    message: str
    request_id: str | None = None


def access_failure(error: SilviaError) -> AccessFailure | None:
    """The access failure a chat request's `error` amounts to, or None for any other error."""
    request_id = getattr(error, "request_id", None)
    said = f"request id {request_id}" if request_id else "no request id"
    if isinstance(error, (AuthenticationError, PermissionDeniedError)):
        kind = f" {error.error_type}" if error.error_type else ""
        hint = "check SILVIA_TOKEN" if isinstance(error, AuthenticationError) else "check access"
        return AccessFailure(
            "refused",
            redact_text(
                f"the server refused the credentials (HTTP {error.status_code}{kind}, "
                f"{said}); {hint}"
            ),
            request_id,
        )
    cause = error.__cause__ if error.__cause__ is not None else error
    if isinstance(error, APITimeoutError) and not isinstance(cause, httpx.ConnectTimeout):
        return None  # connected, then no answer in time: reachable, and a finding
    if isinstance(error, APIConnectionError):
        return AccessFailure(
            "unreachable",
            f"cannot reach the server ({type(cause).__name__}, {said})",
            request_id,
        )
    return None


Clock = Callable[[], float]


class Stopwatch:
    """Started when the request goes out, on `clock`; told of each event as it arrives."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._start = clock()
        self._first_byte: float | None = None
        self._first_text: float | None = None
        self._done: float | None = None

    def _now(self) -> float:
        return round(max(self._clock() - self._start, 0.0), 6)

    def event(self, event: ChatEvent) -> None:
        """Note `event`'s arrival."""
        if self._first_byte is None:
            self._first_byte = self._now()
        if self._first_text is None and isinstance(event, TextEvent) and event.text:
            self._first_text = self._now()
        elif isinstance(event, DoneEvent) and self._done is None:
            self._done = self._now()

    def timings(self) -> Timings:
        return Timings(self._first_byte, self._first_text, self._done)


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJson()
"""`SentEvent.value` of an event whose data is not JSON."""


def json_value(data: str) -> Any:
    """`data` read as JSON as the SDK reads it (a huge number is a `Decimal`), or `NOT_JSON`."""
    try:
        return loads(data)
    except (ValueError, RecursionError):
        return NOT_JSON


@dataclass(frozen=True, slots=True)
class SentEvent:
    """One SSE event as the server sent it, and as the SDK read it."""

    name: str
    data: str = field(repr=False)  # raw: it may hold targets, and their providers
    value: Any = field(repr=False)  # `data` as JSON, or NOT_JSON
    event: ChatEvent = field(repr=False)


@dataclass(frozen=True)
class Reload:
    """The session reloaded after the turn: its raw JSON body and the SDK's reading, or an error."""

    body: Any = field(default=None, repr=False)
    session: Session | None = field(default=None, repr=False)
    error: str | None = None


@dataclass(frozen=True)
class Observation:
    """One turn as observed: what was asked, every event, the assembled turn, the reload.

    `failure` says why the turn stopped short (None: it did not); `access_failure`
    that the server cannot be used at all. `raw` is False for an observation rebuilt
    from a `Turn` (`observation_from_turn`): the rules that need the wire skip it.
    """

    prompt: str
    events: tuple[SentEvent, ...]
    turn: Turn
    failure: str | None = None
    reload: Reload | None = None
    request_id: str | None = None
    wire: WireFormat = field(default=DEFAULT_WIRE, repr=False)
    raw: bool = True
    timings: Timings | None = field(default=None, repr=False)
    access_failure: AccessFailure | None = field(default=None, repr=False)
    recording: Recording | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        # What the turn amounts to; not its text or targets (they are the server's to show).
        return (
            f"Observation(prompt={self.prompt!r}, events={len(self.events)}, "
            f"complete={self.complete}, failure={self.failure!r}, "
            f"session_id={self.session_id!r}, reloaded={self.reload is not None})"
        )

    @property
    def done(self) -> bool:
        """Whether `done` arrived."""
        return any(isinstance(sent.event, DoneEvent) for sent in self.events)

    @property
    def complete(self) -> bool:
        """Whether the turn completed: `done` arrived and nothing went wrong."""
        return self.failure is None and self.done

    @property
    def session_id(self) -> str | None:
        return self.turn.session_id

    def to_recording(self) -> Recording:
        """The exchange as a `Recording`, when captured (`record=True`, or `recorder=`).

        Raises `ValueError` otherwise, or when no response came at all.
        """
        if self.recording is None:
            why = (
                "it was rebuilt from a Turn"
                if not self.raw
                else "capture was off (observe with record=True), or no response came"
            )
            raise ValueError(f"this observation holds no recording: {why}")
        return self.recording


_SAID_CHARS = 300  # of the server's error message, in a finding
# A row rebuilt as the server sent it, `provider` included: QA's rules check it (a dump
# without the context leaves it out).
_AS_SENT = {"include_provider": True}


def describe_error(error: SilviaError, what: str) -> str:
    """A one-line account of a failed request: status, error type and the server's message.

    Never a body or a header; the message is the client's scrubbed reading of it.
    """
    if isinstance(error, APIStatusError):
        # The server's own words (already through the client's scrubber: no token, no
        # control), so a finding says "Unknown scenario 'acounts'", not just "HTTP 400".
        kind = f" ({error.error_type})" if error.error_type else ""
        said = " ".join(error.message.split())
        said = said if len(said) <= _SAID_CHARS else said[: _SAID_CHARS - 1] + "…"
        said = f": {said}" if said and said != error.error_type else ""
        return redact_text(f"{what} failed: HTTP {error.status_code}{kind}{said}")
    if isinstance(error, APITimeoutError):
        return f"{what} timed out"
    if isinstance(error, APIConnectionError):
        cause = error.__cause__ if error.__cause__ is not None else error
        return f"{what} failed: could not connect ({type(cause).__name__})"
    return f"{what} failed: {type(error).__name__}"


def request_failure(error: SilviaError) -> str:
    """What went wrong with a chat request that got no event stream."""
    if isinstance(error, UnexpectedResponseError):
        content_type = error.content_type or "no content type"
        return redact_text(
            f"the chat request answered {error.status_code} {content_type}, not text/event-stream"
        )
    return describe_error(error, "the chat request")


def stream_failure(error: StreamError, idle_timeout: float) -> str:
    """What went wrong with a chat stream that stopped before `done`."""
    cause = error.__cause__
    if isinstance(error, ServerStreamError):
        kind = f" ({error.error_type})" if error.error_type else ""
        return redact_text(f"the server reported an error{kind}; the turn stopped")
    if isinstance(error, StreamTimeoutError) and isinstance(cause, httpx.TimeoutException):
        return f"the stream stalled: no data for {idle_timeout:g} s"
    if isinstance(error, StreamDisconnectedError):
        return f"the connection dropped mid-stream ({type(cause or error).__name__})"
    if isinstance(error, IncompleteTurnError) and "closed" not in error.message:
        return "the stream ended without `done`"
    return redact_text(f"the stream stopped: {error.message}")


def reloaded(observation: Observation, body: bytes, session_id: str) -> Observation:
    """`observation` with the reloaded session's raw body and the SDK's reading of it."""
    value = json_value(body.decode("utf-8", errors="replace"))
    if value is NOT_JSON:
        return replace(observation, reload=Reload(error="the session body is not JSON"))
    try:
        session = parse_session(value, session_id, observation.wire)
    except ValueError as error:
        reason = redact_text(f"the session body is not a session: {error}")
        return replace(observation, reload=Reload(body=value, error=reason))
    return replace(observation, reload=Reload(body=value, session=session))


def not_reloaded(observation: Observation, error: SilviaError | None) -> Observation:
    """`observation` with the reason its session was not reloaded."""
    reason = "the turn named no session to reload"
    if error is not None:
        reason = describe_error(error, "the reload")
    return replace(observation, reload=Reload(error=reason))


def _event(name: str, value: object, wire: WireFormat) -> SentEvent:
    data = json.dumps(value)
    return SentEvent(name, data, value, decode_event(name, data, wire))


def observation_from_turn(
    turn: Turn,
    *,
    prompt: str = "",
    session: Session | None = None,
    wire: WireFormat = DEFAULT_WIRE,
) -> Observation:
    """An observation rebuilt from a `Turn` (and, if given, its reloaded `Session`).

    A `Turn` holds the SDK's reading, not the wire, so the result is `raw=False`:
    the rules that need what the server sent (parsing, one meaning per source,
    event order) skip it; the others apply.
    """
    names = wire.events
    # The events are not kept on a Turn: these are rebuilt from what it holds.
    events: list[SentEvent] = []
    if turn.session_id is not None:
        events.append(_event(names.session, {wire.session_id_key: turn.session_id}, wire))
    if turn.text:
        events.append(_event(names.text, {wire.text_key: turn.text}, wire))
    for citation in turn.inline_citations:
        row = citation.model_dump(mode="json", exclude={"offset"}, context=_AS_SENT)
        events.append(_event(names.citation, {wire.citation_key: row}, wire))
    if turn.citations or turn.complete:  # (a Turn does not say whether a summary came)
        rows = [c.model_dump(mode="json", context=_AS_SENT) for c in turn.citations]
        events.append(_event(names.citations_summary, {wire.citations_key: rows}, wire))
    if turn.message is not None:
        events.append(_event(names.message, turn.message, wire))
    for malformed in turn.malformed_events:
        events.append(
            SentEvent(malformed.event, malformed.data, json_value(malformed.data), malformed)
        )
    if turn.complete:
        events.append(_event(names.done, {}, wire))
    failure = None
    if not turn.complete:
        failure = "the server reported an error" if turn.error else "the turn is not complete"
    reload = None
    if session is not None:
        messages = [
            {
                "role": message.role,
                wire.message_citations_key: [
                    c.model_dump(mode="json", context=_AS_SENT) for c in message.citations
                ],
                wire.message_inline_citations_key: [
                    c.model_dump(mode="json", exclude={"offset"}, context=_AS_SENT)
                    for c in message.inline_citations
                ],
            }
            for message in session.messages
        ]
        reload = Reload(body={wire.messages_key: messages}, session=session)
    return Observation(
        prompt, tuple(events), turn, failure=failure, reload=reload, wire=wire, raw=False
    )
