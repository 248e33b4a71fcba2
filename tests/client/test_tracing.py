"""OpenTelemetry traces (`tracer_provider=`), sync and async, from the loopback reference
server behind `Recorder`, into an `InMemorySpanExporter`; the privacy test reads every span
of the whole scenario library. Tracing off is `test_footprint.py`'s.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip(
    "opentelemetry.sdk.trace",
    reason="the tracing tests need opentelemetry-sdk (in the `test` extra)",
)

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.chat import CitationEvent, CitationsSummaryEvent, Turn
from silvia_client.citations import Citation
from silvia_client.errors import NotFoundError, ServerStreamError, SilviaError, StreamError
from silvia_client.testing import (
    BROKEN_SCENARIOS,
    SCENARIO_HEADER,
    SCENARIOS,
    LoopbackServer,
    ReferenceServer,
)

from .conftest import Api

if TYPE_CHECKING:
    from silvia_client.testing._steps import Reply, Request

pytestmark = pytest.mark.anyio

TOKEN = "trace-s3cret-t0ken-4c1d"
MESSAGE = "PRIVATE question about my checking account 7d3f"
TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")
# Every attribute a span may carry: a new one must be added here, and so thought about.
OPERATION_KEYS = {
    "silvia.request_id",
    "silvia.session_id",
    "silvia.turn.complete",
    "silvia.turn.events",
    "silvia.turn.citations",
    "silvia.turn.inline_citations",
    "silvia.ended_by",
    "error.type",
}
ATTEMPT_KEYS = {
    "http.request.method",
    "server.address",
    "server.port",
    "url.scheme",
    "url.full",
    "http.response.status_code",
    "http.request.resend_count",
    "network.protocol.version",
    "error.type",
}
VENDORS = re.compile(r"plaid|snap\s?trade", re.IGNORECASE)


class Recorder:
    """The reference server, keeping each request's headers and each reply's request id.

    Once `fail_first_get` is set, the next GET is answered 503 (then every request is served).
    """

    def __init__(self, server: ReferenceServer) -> None:
        self.server = server
        self.fail_first_get = False
        self.requests: list[tuple[str, Mapping[str, str]]] = []
        self.request_ids: list[str] = []

    def handle(self, request: Request) -> Reply:
        self.requests.append((request.method, dict(request.headers)))
        if self.fail_first_get and request.method == "GET":
            self.fail_first_get = False
            reply = self.server.error_reply(503, "overloaded_error", "Busy: try again.")
        else:
            reply = self.server.handle(request)
        self.request_ids.append(dict(reply.headers)[self.server.wire.request_id_header])
        return reply

    def error_reply(self, status: int, error_type: str, message: str) -> Reply:
        return self.server.error_reply(status, error_type, message)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


@pytest.fixture
def recorder() -> Recorder:
    return Recorder(ReferenceServer(token=TOKEN))


@pytest.fixture
def url(recorder: Recorder) -> Iterator[str]:
    with LoopbackServer(recorder) as url:
        yield url


def traced(api: Api, url: str, provider: TracerProvider, **options: Any) -> Any:
    options.setdefault("retry_backoff", 0)
    return api.client(base_url=url, token=TOKEN, tracer_provider=provider, **options)


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def only(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    (span,) = named(spans, name)
    return span


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def event_names(span: ReadableSpan) -> list[str]:
    return [event.name for event in span.events]


async def test_a_call_is_one_span_over_a_client_span_per_attempt_sending_context_if_asked(
    api: Api, url: str, recorder: Recorder, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    client = traced(api, url, provider)
    events, error = await api.read(client, MESSAGE)
    assert error is None
    spans = exporter.get_finished_spans()
    turn = only(spans, "silvia.chat")
    (attempt,) = children(spans, turn)
    assert len(spans) == 2
    assert turn.kind is SpanKind.INTERNAL
    assert turn.parent is None
    assert turn.status.status_code is StatusCode.UNSET
    summary = [e for e in events if isinstance(e, CitationsSummaryEvent)]
    assert attributes(turn) == {
        "silvia.request_id": recorder.request_ids[0],
        "silvia.session_id": attributes(turn)["silvia.session_id"],
        "silvia.turn.complete": True,
        "silvia.turn.events": len(events),
        "silvia.turn.citations": len(summary[-1].citations),
        "silvia.turn.inline_citations": sum(isinstance(e, CitationEvent) for e in events),
    }
    assert str(attributes(turn)["silvia.session_id"]).startswith("sess_")
    assert attributes(turn)["silvia.turn.citations"] > 0
    # The milestones, in order, inside the span.
    assert event_names(turn) == ["first_byte", "first_text", "done"]
    stamps = [turn.start_time, *(event.timestamp for event in turn.events), turn.end_time]
    assert None not in stamps
    assert stamps == sorted(stamp or 0 for stamp in stamps)
    assert attempt.name == "POST"
    assert attempt.kind is SpanKind.CLIENT
    assert attributes(attempt) == {
        "http.request.method": "POST",
        "server.address": "127.0.0.1",
        "server.port": int(url.rsplit(":", 1)[1]),
        "url.scheme": "http",
        "url.full": f"{url}/api/claude",
        "http.response.status_code": 200,
        "network.protocol.version": "1.1",
    }
    assert attempt.status.status_code is StatusCode.UNSET
    assert "traceparent" not in recorder.requests[-1][1]  # not asked for
    # Asked for: the span the caller has open is the operation's parent; a copy keeps tracing.
    exporter.clear()
    client = traced(api, url, provider, propagate_context=True)
    with provider.get_tracer("app").start_as_current_span("handle request") as outer:
        await api.turn(client.with_options(timeout=30, max_retries=0), MESSAGE)
    turn = only(exporter.get_finished_spans(), "silvia.chat")
    assert turn.parent is not None
    assert turn.parent.span_id == outer.get_span_context().span_id
    # A retried GET: two attempts under one span, the second counted a resend.
    exporter.clear()
    recorder.requests.clear()
    recorder.fail_first_get = True
    session_id = recorder.server.seed_legacy_session()
    await api.session(client.with_options(max_retries=1), session_id)
    spans = exporter.get_finished_spans()
    get = only(spans, "silvia.sessions.get")
    first, second = sorted(children(spans, get), key=lambda span: span.start_time or 0)
    assert len(spans) == 3
    assert attributes(get) == {
        "silvia.session_id": session_id,
        "silvia.request_id": recorder.request_ids[-1],
    }
    assert get.events == ()
    assert (first.name, second.name) == ("GET", "GET")
    assert attributes(second)["url.full"] == f"{url}/api/chat/sessions/{session_id}"
    assert attributes(first)["http.response.status_code"] == 503
    assert attributes(first)["error.type"] == "503"
    assert first.status.status_code is StatusCode.ERROR
    assert "http.request.resend_count" not in attributes(first)
    assert attributes(second)["http.response.status_code"] == 200
    assert attributes(second)["http.request.resend_count"] == 1
    assert "error.type" not in attributes(second)
    assert second.status.status_code is StatusCode.UNSET
    assert get.status.status_code is StatusCode.UNSET  # the operation succeeded
    # Each attempt went out with its own trace context (in the operation's trace: its child).
    sent = [TRACEPARENT.fullmatch(headers["traceparent"]) for _, headers in recorder.requests]
    assert [(m.group(1), m.group(2)) for m in sent if m] == [
        (f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}")
        for span in (first, second)
        if span.context is not None
    ]


async def test_an_error_sets_the_span_status_and_records_the_type_alone(
    api: Api, url: str, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    client = traced(api, url, provider)
    with pytest.raises(NotFoundError):
        await api.session(client, "no-such-session")
    spans = exporter.get_finished_spans()
    get = only(spans, "silvia.sessions.get")
    assert get.status.status_code is StatusCode.ERROR
    assert get.status.description == "NotFoundError"
    assert attributes(get)["error.type"] == "NotFoundError"
    assert [(e.name, dict(e.attributes or {})) for e in get.events] == [
        ("exception", {"exception.type": "NotFoundError"})
    ]
    (attempt,) = children(spans, get)
    assert attributes(attempt)["error.type"] == "404"
    assert attempt.status.status_code is StatusCode.ERROR
    # An error event ends the turn's span as an error, and incomplete.
    exporter.clear()
    fault = {SCENARIO_HEADER: "fault-error-event"}
    events, error = await api.read(client, MESSAGE, extra_headers=fault)
    assert isinstance(error, ServerStreamError)
    spans = exporter.get_finished_spans()
    turn = only(spans, "silvia.chat")
    assert turn.status.status_code is StatusCode.ERROR
    assert attributes(turn)["error.type"] == "ServerStreamError"
    assert attributes(turn)["silvia.turn.complete"] is False
    assert attributes(turn)["silvia.turn.events"] == len(events)
    assert event_names(turn) == ["first_byte", "first_text", "exception"]
    (attempt,) = children(spans, turn)
    assert attempt.status.status_code is StatusCode.UNSET  # the POST itself was a 200
    # A connection that fails is an attempt with the transport error's type.
    exporter.clear()
    with LoopbackServer(Recorder(ReferenceServer())) as refusing:
        pass  # the server has stopped: its port refuses connections
    _, error = await api.read(traced(api, refusing, provider, max_retries=0), MESSAGE)
    assert error is not None
    assert not isinstance(error, StreamError)
    spans = exporter.get_finished_spans()
    turn = only(spans, "silvia.chat")
    (attempt,) = children(spans, turn)
    assert attributes(attempt)["error.type"] == "ConnectError"
    assert attributes(turn)["error.type"] == type(error).__name__
    assert "http.response.status_code" not in attributes(attempt)


async def test_a_stream_closed_early_abandoned_unread_or_cancelled_ends_its_span_incomplete(
    url: str, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    # Incomplete, and not an error: the caller stopped reading.
    with SilviaClient(base_url=url, token=TOKEN, tracer_provider=provider) as client:
        with client.chat.stream(MESSAGE) as closed_early:
            next(iter(closed_early))
        turn = only(exporter.get_finished_spans(), "silvia.chat")
        assert attributes(turn)["silvia.turn.complete"] is False
        assert attributes(turn)["silvia.turn.events"] == 1
        assert "done" not in event_names(turn)
        assert turn.status.status_code is StatusCode.UNSET
        exporter.clear()
        stream = client.chat.stream(MESSAGE)
        for _ in stream:  # no `with`, no close(): the loop's iterator is dropped at `break`
            break
        turn = only(exporter.get_finished_spans(), "silvia.chat")
        assert attributes(turn)["silvia.turn.complete"] is False
        assert turn.end_time is not None
        exporter.clear()
        with client.chat.stream(MESSAGE):  # entered and closed unread
            pass
        turn = only(exporter.get_finished_spans(), "silvia.chat")
    assert attributes(turn)["silvia.turn.complete"] is False
    assert attributes(turn)["silvia.turn.events"] == 0
    assert event_names(turn) == ["first_byte"]
    exporter.clear()
    stalled = {SCENARIO_HEADER: "fault-stall"}  # events, then silence for minutes
    async with AsyncSilviaClient(base_url=url, token=TOKEN, tracer_provider=provider) as aclient:
        reading = asyncio.Event()

        async def read() -> None:
            async with aclient.chat.stream(MESSAGE, extra_headers=stalled) as astream:
                async for _ in astream:
                    reading.set()

        task = asyncio.create_task(read())
        await reading.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    turn = only(exporter.get_finished_spans(), "silvia.chat")
    assert attributes(turn)["silvia.turn.complete"] is False
    assert attributes(turn)["silvia.turn.events"] > 0
    assert turn.status.status_code is StatusCode.UNSET


def strings(value: object) -> Iterator[str]:
    """Every string in a wire value (a target's dict), keys aside."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def secrets_of(text: str, rows: Iterable[Citation]) -> set[str]:
    """What no span may hold: a turn's or a message's text, and each citation's text, title and
    target."""
    found = {text}
    for row in rows:
        found.update((row.title or "", row.cited_text or ""))
        if row.target is not None:
            found.update(strings(row.target.to_wire()))
    return {value for value in found if len(value) >= 4}


def exported_strings(span: ReadableSpan) -> Iterator[tuple[str, str]]:
    yield "name", span.name
    yield "status", span.status.description or ""
    for key, value in attributes(span).items():
        yield key, str(value)
    for event in span.events:
        yield "event", event.name
        for key, value in (event.attributes or {}).items():
            yield f"{event.name}.{key}", str(value)


async def test_no_span_of_any_scenario_holds_a_message_a_text_a_target_or_the_token(
    api: Api, url: str, recorder: Recorder, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    client = traced(
        api,
        url,
        provider,
        propagate_context=True,
        max_retries=1,
        idle_timeout=0.25,  # the stall, the trickle and the endless keep-alive end here
        deadline=2,
        max_event_bytes=64 * 1024,
        max_response_bytes=1024 * 1024,
    )
    secrets = {TOKEN, MESSAGE}
    for name in [*SCENARIOS, *BROKEN_SCENARIOS]:
        headers = {SCENARIO_HEADER: name}
        turn: Turn | None = None
        try:
            turn = await api.turn(client, MESSAGE, extra_headers=headers)
        except StreamError as error:
            turn = error.turn
        except SilviaError:
            pass
        if turn is None:
            continue
        secrets |= secrets_of(turn.text, (*turn.citations, *turn.inline_citations))
        if turn.session_id is None:
            continue
        try:
            session = await api.session(client, turn.session_id)
        except SilviaError:
            continue
        for message in session.messages:
            rows = (*message.citations, *message.inline_citations)
            secrets |= secrets_of(message.content, rows)
    # What the server sends is scrubbed, as it is before reaching an exception: here a
    # session whose id is the token, continued by a turn and read back.
    recorder.server.seed_legacy_session(session_id=TOKEN)
    await api.turn(client, MESSAGE, session_id=TOKEN)
    await api.session(client, TOKEN)
    spans = exporter.get_finished_spans()
    assert len(named(spans, "silvia.chat")) == len(SCENARIOS) + len(BROKEN_SCENARIOS) + 1
    assert named(spans, "silvia.sessions.get")
    for span in spans:
        keys = ATTEMPT_KEYS if span.kind is SpanKind.CLIENT else OPERATION_KEYS
        assert set(attributes(span)) <= keys, (span.name, set(attributes(span)) - keys)
        assert set(event_names(span)) <= {"first_byte", "first_text", "done", "exception"}
        for where, text in exported_strings(span):
            assert not VENDORS.search(text), (span.name, where, text)
            leaked = [secret for secret in secrets if secret in text]
            assert not leaked, (span.name, where, leaked)
