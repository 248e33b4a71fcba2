"""Observing a turn as the server sent it: each SSE event raw, beside the SDK's reading of it.

The checker must judge what the server sent, not what the SDK made of it: the
SDK reads every target through `parse_citation_target` (a bad one becomes
None) and makes a turn's citations agree with its final registry, so a `Turn`
no longer shows a malformed target or a target that changed mid-turn.

So the observer reads the stream with `ChatStream.iter_with_raw()`, which
gives every event as the server sent it (`RawEvent`: the raw name and data)
beside the typed event the SDK read from it. It records both, and that data
as JSON. One pass over the bytes: the raw and the typed views cannot disagree
about which event is which, and `observation.turn` is the `Turn` the stream
built. Like the client, it stops reading at `done` (or at an `error` event).

The session is then reloaded the same way: its raw JSON body
(`client.sessions.get_raw`), and the SDK's `Session` read from it
(`parse_session`).

Everything goes through the given `SilviaClient`'s public API (its auth,
timeouts, deadline, limits, retries and wire format), with extra headers when
asked, e.g. the reference server's `x-silvia-scenario`. A failure keeps the
request id the server sent, when it sent one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from .. import DEFAULT_WIRE, SilviaClient, WireFormat
from ..chat import ChatEvent, DoneEvent, Turn, decode_event
from ..errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    IncompleteTurnError,
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
    from typing_extensions import Self

    from ..testing import ReferenceServer

__all__ = [
    "NOT_JSON",
    "Observation",
    "Observer",
    "Reload",
    "SentEvent",
    "observation_from_turn",
    "observe",
    "reload_session",
]


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJson()
"""`SentEvent.value` of an event whose data is not JSON."""


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

    `failure` says why the turn stopped short (an HTTP error before any event,
    a dropped connection, a stall, an `error` event, no `done`), or is None.
    `raw` is False for an observation rebuilt from a `Turn`
    (`observation_from_turn`), which no longer holds what the server sent:
    rules that need the raw events skip it.
    """

    prompt: str
    events: tuple[SentEvent, ...]
    turn: Turn
    failure: str | None = None
    reload: Reload | None = None
    request_id: str | None = None
    wire: WireFormat = field(default=DEFAULT_WIRE, repr=False)
    raw: bool = True

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


def _json(data: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return NOT_JSON


def describe_error(error: SilviaError, what: str) -> str:
    """A one-line account of a failed request: status and error type, never a body or a header."""
    if isinstance(error, APIStatusError):
        kind = f" ({error.error_type})" if error.error_type else ""
        return redact_text(f"{what} failed: HTTP {error.status_code}{kind}")
    if isinstance(error, APITimeoutError):
        return f"{what} timed out"
    if isinstance(error, APIConnectionError):
        cause = error.__cause__ if error.__cause__ is not None else error
        return f"{what} failed: could not connect ({type(cause).__name__})"
    return f"{what} failed: {type(error).__name__}"


def observe(
    client: SilviaClient,
    message: str,
    *,
    session_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    reload: bool = True,
) -> Observation:
    """Send one chat turn through `client` and record what the server sent.

    With `reload` (the default) the session is reloaded after a complete turn
    (an incomplete one may rightly not have been stored). Never raises for
    what the server does: failures are recorded on the observation.
    """
    wire = client.wire
    events: list[SentEvent] = []
    request_id: str | None = None
    try:
        with client.chat.stream(message, session_id=session_id, extra_headers=headers) as stream:
            request_id = stream.request_id
            for raw, event in stream.iter_with_raw():
                events.append(SentEvent(raw.name, raw.data, _json(raw.data), event))
            turn = stream.until_done()
    except StreamError as error:
        failure = _stream_failure(error, client)
        return Observation(
            message,
            tuple(events),
            error.turn,
            failure=failure,
            request_id=error.request_id,
            wire=wire,
        )
    except SilviaError as error:  # before any event
        return Observation(
            message,
            (),
            Turn(session_id=session_id),
            failure=_request_failure(error),
            request_id=getattr(error, "request_id", None),
            wire=wire,
        )
    observation = Observation(message, tuple(events), turn, request_id=request_id, wire=wire)
    if reload and observation.complete and observation.session_id:
        observation = reload_session(client, observation)
    return observation


def _request_failure(error: SilviaError) -> str:
    if isinstance(error, UnexpectedResponseError):
        content_type = error.content_type or "no content type"
        return redact_text(
            f"the chat request answered {error.status_code} {content_type}, not text/event-stream"
        )
    return describe_error(error, "the chat request")


def _stream_failure(error: StreamError, client: SilviaClient) -> str:
    cause = error.__cause__
    if isinstance(error, ServerStreamError):
        kind = f" ({error.error_type})" if error.error_type else ""
        return redact_text(f"the server reported an error{kind}; the turn stopped")
    if isinstance(error, StreamTimeoutError) and isinstance(cause, httpx.TimeoutException):
        return f"the stream stalled: no data for {client.idle_timeout:g} s"
    if isinstance(error, StreamDisconnectedError):
        return f"the connection dropped mid-stream ({type(cause or error).__name__})"
    if isinstance(error, IncompleteTurnError) and "closed" not in error.message:
        return "the stream ended without `done`"
    return redact_text(f"the stream stopped: {error.message}")


def reload_session(client: SilviaClient, observation: Observation) -> Observation:
    """`observation` with its session reloaded (raw body and the SDK's reading)."""
    session_id = observation.session_id
    if not session_id:
        return replace(observation, reload=Reload(error="the turn named no session to reload"))
    try:
        body = client.sessions.get_raw(session_id)
    except SilviaError as error:
        return replace(observation, reload=Reload(error=describe_error(error, "the reload")))
    value = _json(body.decode("utf-8", errors="replace"))
    if value is NOT_JSON:
        return replace(observation, reload=Reload(error="the session body is not JSON"))
    try:
        session = parse_session(value, session_id, client.wire)
    except ValueError as error:
        reason = redact_text(f"the session body is not a session: {error}")
        return replace(observation, reload=Reload(body=value, error=reason))
    return replace(observation, reload=Reload(body=value, session=session))


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

    A `Turn` holds the SDK's reading, not the wire: targets are already parsed
    (a malformed one is None) and made to agree with the end of the turn. So
    the result is marked `raw=False`, and the rules that need what the server
    sent (parsing, one meaning per source, event order) skip it. The rest
    (targets against sources, account ids, the summary, the final message,
    vendor names, completeness, and the reload when a session is given) apply.
    """
    names = wire.events
    # The events are not kept on a Turn: these are rebuilt from what it holds.
    events: list[SentEvent] = []
    if turn.session_id is not None:
        events.append(_event(names.session, {wire.session_id_key: turn.session_id}, wire))
    if turn.text:
        events.append(_event(names.text, {wire.text_key: turn.text}, wire))
    for citation in turn.inline_citations:
        row = citation.model_dump(mode="json", exclude={"offset"})
        events.append(_event(names.citation, {wire.citation_key: row}, wire))
    if turn.citations or turn.complete:  # (a Turn does not say whether a summary came)
        rows = [citation.model_dump(mode="json") for citation in turn.citations]
        events.append(_event(names.citations_summary, {wire.citations_key: rows}, wire))
    if turn.message is not None:
        events.append(_event(names.message, turn.message, wire))
    for malformed in turn.malformed_events:
        events.append(SentEvent(malformed.event, malformed.data, _json(malformed.data), malformed))
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
                wire.message_citations_key: [c.model_dump(mode="json") for c in message.citations],
                wire.message_inline_citations_key: [
                    c.model_dump(mode="json", exclude={"offset"}) for c in message.inline_citations
                ],
            }
            for message in session.messages
        ]
        reload = Reload(body={wire.messages_key: messages}, session=session)
    return Observation(
        prompt, tuple(events), turn, failure=failure, reload=reload, wire=wire, raw=False
    )


class Observer:
    """Observes turns against one server: a base URL, or an in-process reference server.

    ::

        with Observer.reference() as qa:                      # no network
            observation = qa.observe("How much is in checking?", scenario="account")
        with Observer.connect("https://staging.example", token=...) as qa:
            observation = qa.observe("How much is in checking?")

    `scenario` is sent as the reference server's `x-silvia-scenario` header; a
    real server ignores it, so one script drives both.
    """

    def __init__(self, client: SilviaClient, *, server: ReferenceServer | None = None) -> None:
        self.client = client
        self.server = server
        self._http: httpx.Client | None = None  # an HTTP client this observer made, to close

    @classmethod
    def reference(
        cls,
        *,
        server: ReferenceServer | None = None,
        token: str | None = None,
        timeout: float | None = None,
    ) -> Observer:
        """An observer of an in-process reference server (a fresh one unless given)."""
        from ..testing import IN_PROCESS_URL, ReferenceServer

        server = server if server is not None else ReferenceServer()
        http = httpx.Client(transport=server.transport())
        client = SilviaClient(
            base_url=IN_PROCESS_URL,
            token=token or "qa-local",
            http_client=http,
            **_timeouts(timeout),
        )
        observer = cls(client, server=server)
        observer._http = http
        return observer

    @classmethod
    def connect(
        cls, base_url: str, *, token: str | None = None, timeout: float | None = None
    ) -> Observer:
        """An observer of the server at `base_url` (token: `token`, else `SILVIA_TOKEN`)."""
        return cls(SilviaClient(base_url=base_url, token=token, **_timeouts(timeout)))

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def observe(
        self,
        message: str,
        *,
        scenario: str | None = None,
        session_id: str | None = None,
        reload: bool = True,
    ) -> Observation:
        """One turn, observed (and its session reloaded, when it completed)."""
        from ..testing import SCENARIO_HEADER

        headers = {SCENARIO_HEADER: scenario} if scenario else None
        return observe(self.client, message, session_id=session_id, headers=headers, reload=reload)

    def close(self) -> None:
        self.client.close()
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


_CONNECT_TIMEOUT = 10.0  # the client's own default


def _timeouts(timeout: float | None) -> dict[str, Any]:
    if timeout is None:
        return {}
    return {
        "timeout": httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT)),
        "idle_timeout": timeout,
    }
