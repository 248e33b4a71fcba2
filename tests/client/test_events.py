"""Every SSE event of a turn becomes one typed event; nothing is dropped, nothing is fatal.

The first half reads events off a response body, sync and async; the second reads
them through the events' table (`chat/events.py`) alone, on any wire format: bad
data gives a `MalformedEvent` that says why, with the data as it arrived; a name
the table does not hold gives an `UnknownEvent`; nothing raises.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client import DEFAULT_WIRE, EventNames, WireFormat
from silvia_client.chat import (
    ChatEvent,
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    MalformedEvent,
    MessageEvent,
    SessionEvent,
    TextEvent,
    UnknownEvent,
)
from silvia_client.chat.events import EventDecoder, decode_event, event_decoder
from silvia_client.citations import (
    Citation,
    InlineCitation,
    RowError,
    WebTarget,
)

from ..depth import examples
from .conftest import Api
from .sse import (
    CHAT_URL,
    FINAL_MESSAGE,
    WEB_URL,
    citation,
    comment,
    done,
    event,
    message,
    row,
    session,
    sse_response,
    summary,
    text,
    web,
)

pytestmark = pytest.mark.anyio


def serve(server: respx.MockRouter, *parts: bytes) -> respx.Route:
    body = b"".join(parts)
    return server.post(CHAT_URL).mock(side_effect=lambda request: sse_response(body))


async def test_each_contract_event_becomes_its_typed_event(
    api: Api, server: respx.MockRouter
) -> None:
    serve(
        server,
        session("sess_9"),
        text("Hello"),
        citation(row(WEB_URL, web(), type="search_result_location", search_result_index=2)),
        summary([row(WEB_URL, web())]),
        message(FINAL_MESSAGE),
        done(),
    )
    events, failure = await api.read(api.client())
    assert failure is None
    inline = {**row(WEB_URL, web(), type="search_result_location", search_result_index=2)}
    assert events == [
        SessionEvent("sess_9"),
        TextEvent("Hello"),
        CitationEvent(InlineCitation.model_validate({**inline, "offset": len("Hello")})),
        CitationsSummaryEvent((Citation.model_validate(row(WEB_URL, web())),)),
        MessageEvent(FINAL_MESSAGE),
        DoneEvent(),
    ]
    cite = events[2]
    assert isinstance(cite, CitationEvent)
    assert cite.citation.target == WebTarget(WEB_URL)
    assert cite.citation.model_extra == {"type": "search_result_location", "search_result_index": 2}
    assert [e.type for e in events] == [
        "session",
        "text",
        "citation",
        "citations_summary",
        "message",
        "done",
    ]


async def test_unknown_and_malformed_events_keep_their_raw_data_and_the_stream_goes_on(
    api: Api, server: respx.MockRouter
) -> None:
    unknown = [("thinking_delta", '{"thinking": "hmm"}'), ("weird", "not json at all")]
    # A known name whose data is not JSON, or not the documented shape.
    malformed = [
        ("session", "{not json"),
        ("session", '{"sessionId": 7}'),
        ("text", '{"text": null}'),
        ("text", '"just a string"'),
        ("citation", '{"citation": {"title": "no source"}}'),
        ("citations_summary", "{"),
        ("message", "[1, 2]"),
        ("error", '{"error": 5}'),
    ]
    serve(
        server,
        text("before "),
        *(event(name, data) for name, data in unknown + malformed),
        text("after"),
        done(),
    )
    events, failure = await api.read(api.client())
    assert failure is None
    got = [(e.event, e.data) for e in events if isinstance(e, UnknownEvent)]
    assert got == unknown
    bad = [e for e in events if isinstance(e, MalformedEvent)]
    assert [(e.event, e.data) for e in bad] == malformed
    assert all(e.reason for e in bad)
    assert [type(e) for e in events if not isinstance(e, (UnknownEvent, MalformedEvent))] == [
        TextEvent,
        TextEvent,
        DoneEvent,
    ]


async def test_comments_multiline_data_and_an_empty_done_are_read(
    api: Api, server: respx.MockRouter
) -> None:
    serve(
        server,
        comment(),
        session("s"),
        comment("ping"),
        text("a"),
        b": ping\n",  # a comment line inside an event
        b'event: text\n: keep-alive\ndata: {"text": "b"}\n\n',
        event("text", '{"text":\n"two lines"}'),
        comment(),
        b"event: done\ndata:\n\n",
        comment(),
    )
    events, failure = await api.read(api.client())
    assert failure is None
    assert events == [
        SessionEvent("s"),
        TextEvent("a"),
        TextEvent("b"),
        TextEvent("two lines"),
        DoneEvent(),
    ]


# ------------------------------------------------------------------------ the table, without I/O


# Every event name and data key other than the default's.
RENAMED = WireFormat(
    events=EventNames(
        session="s",
        text="t",
        citation="c",
        citations_summary="cs",
        message="m",
        error="e",
        done="d",
    ),
    session_id_key="sid",
    text_key="delta",
    citation_key="cite",
    citations_key="cites",
    error_key="problem",
)
WIRES = [DEFAULT_WIRE, RENAMED]
URL = "https://e.example/a"
ROW = {"source": URL, "title": "T", "target": {"kind": "web", "url": URL}, "type": "x"}


def decoders(wire: WireFormat) -> list[EventDecoder]:
    # A decoder built here, and the one `decode_event` shares.
    return [EventDecoder(wire), event_decoder(wire)]


def cases(wire: WireFormat) -> list[tuple[str, dict[str, Any], ChatEvent]]:
    """Each event name of `wire`, data of the documented shape, and the event it reads as."""
    n = wire.events
    summary_rows = [ROW, {"title": "no source"}]
    error = {wire.error_key: {"message": "overloaded", "type": "overloaded_error"}}
    return [
        (n.session, {wire.session_id_key: "sess_1"}, SessionEvent("sess_1")),
        (n.text, {wire.text_key: "Hello"}, TextEvent("Hello")),
        (
            n.citation,
            {wire.citation_key: {**ROW, "offset": 99}},  # the answer's length wins
            CitationEvent(InlineCitation.model_validate({**ROW, "offset": 7})),
        ),
        (
            n.citations_summary,
            {wire.citations_key: summary_rows},
            CitationsSummaryEvent(
                (Citation.model_validate(ROW),),
                (RowError(1, "source: missing", summary_rows[1]),),
            ),
        ),
        (
            n.message,
            {"role": "assistant", "content": []},
            MessageEvent({"role": "assistant", "content": []}),
        ),
        (n.error, error, ErrorEvent("overloaded", "overloaded_error", error)),
        (n.error, {wire.error_key: "boom"}, ErrorEvent("boom", None, {wire.error_key: "boom"})),
        (n.done, {}, DoneEvent()),
    ]


def test_each_name_is_read_by_its_reader() -> None:
    for wire in WIRES:
        for decode in decoders(wire):
            for name, data, expected in cases(wire):
                event = decode(name, json.dumps(data), 7)
                assert event == expected, name
                assert type(event) is type(expected)
                assert decode_event(name, json.dumps(data), wire, 7) == expected, name
    # A citation's offset is 0 unless given.
    sent = json.dumps({"citation": ROW})
    unplaced = CitationEvent(InlineCitation.model_validate({**ROW, "offset": 0}))
    assert decode_event("citation", sent, DEFAULT_WIRE) == unplaced
    assert EventDecoder(DEFAULT_WIRE)("citation", sent) == unplaced


def test_another_wires_names_and_keys_are_not_this_ones_and_it_has_one_decoder() -> None:
    decode = EventDecoder(RENAMED)
    # The default names are unknown here; the default keys are not the shape.
    assert decode("text", '{"text": "a"}') == UnknownEvent("text", '{"text": "a"}')
    assert decode("t", '{"text": "a"}') == MalformedEvent(
        "t", '{"text": "a"}', "expected 'delta' to be str"
    )
    assert decode("done", "") == UnknownEvent("done", "")
    assert event_decoder(RENAMED) is event_decoder(RENAMED)
    assert event_decoder(RENAMED) is not event_decoder(DEFAULT_WIRE)


# What a `MalformedEvent` says, exactly (it names no data).
REASONS = [
    ("text", "{bad", "invalid JSON"),
    ("text", "", "invalid JSON"),
    ("session", " ", "invalid JSON"),
    ("done", "not json", "invalid JSON"),
    ("text", "[]", "expected an object, got list"),
    ("session", "null", "expected an object, got NoneType"),
    ("text", '{"text": 5}', "expected 'text' to be str"),
    ("session", '{"session_id": "s"}', "expected 'sessionId' to be str"),
    ("citation", '{"citation": []}', "expected 'citation' to be dict"),
    ("citation", '{"citation": {"title": "no source"}}', "invalid citation"),
    ("citations_summary", '{"citations": {}}', "expected 'citations' to be list"),
    ("message", '"hi"', "expected an object, got str"),
    ("error", '{"error": 5}', "expected 'error' to be an object or a string"),
    ("error", "[]", "expected 'error' to be an object or a string"),
    ("session", "[" * 100_000, "nested too deeply"),
    ("text", '{"text": ' * 100_000, "nested too deeply"),
]


def test_a_malformed_event_says_why_and_keeps_the_data() -> None:
    for decode in decoders(DEFAULT_WIRE):
        for name, data, reason in REASONS:
            assert decode(name, data) == MalformedEvent(name, data, reason), (name, data[:20])
        for name, data in [("thinking", '{"t": 1}'), ("weird", "not json"), ("", "")]:
            assert decode(name, data) == UnknownEvent(name, data)
        for data in ["", " ", "\n", " \n\t"]:
            assert decode("done", data) == DoneEvent(), repr(data)
            assert EventDecoder(RENAMED)("d", data) == DoneEvent(), repr(data)


def test_an_error_object_without_its_fields_has_the_defaults() -> None:
    default = "the server reported an error"
    for fields, said, error_type in [
        ({}, default, None),
        ({"message": 5, "type": 7}, default, None),
        ({"type": "overloaded_error"}, default, "overloaded_error"),
        ({"message": "slow down"}, "slow down", None),
    ]:
        data = {"error": fields, "request_id": "r1"}
        read = decode_event("error", json.dumps(data), DEFAULT_WIRE)
        assert read == ErrorEvent(said, error_type, data), fields


# Property: any data for any name gives one event, never an exception; a known name
# whose data is an object holding a string under its key reads as that string, and
# any other data (JSON or not) as a `MalformedEvent` with the data as sent.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=examples(100), deadline=None)
@given(
    wire=st.sampled_from(WIRES),
    field=st.sampled_from(["session", "text"]),
    value=json_values,
    keyed=st.booleans(),
)
def test_a_string_field_is_read_when_it_is_one_and_malformed_otherwise(
    wire: WireFormat, field: str, value: object, keyed: bool
) -> None:
    name = getattr(wire.events, field)
    key = wire.session_id_key if field == "session" else wire.text_key
    payload = {key: value} if keyed else value
    data = json.dumps(payload)
    event = decode_event(name, data, wire)
    if isinstance(payload, dict) and isinstance(payload.get(key), str):
        assert event == (
            SessionEvent(payload[key]) if field == "session" else TextEvent(payload[key])
        )
    else:
        assert isinstance(event, MalformedEvent)
        assert (event.event, event.data) == (name, data)
        assert event.reason.startswith("expected ")


NAMES = sorted({name for wire in WIRES for name in vars(wire.events).values()})


@settings(max_examples=examples(100), deadline=None)
@given(
    wire=st.sampled_from(WIRES),
    name=st.one_of(st.sampled_from(NAMES), st.text(max_size=6)),
    data=st.one_of(st.text(max_size=30), json_values.map(json.dumps)),
)
def test_any_data_gives_one_event_and_never_raises(wire: WireFormat, name: str, data: str) -> None:
    known = set(vars(wire.events).values())
    event = EventDecoder(wire)(name, data)
    if name not in known:
        assert event == UnknownEvent(name, data)
    elif isinstance(event, MalformedEvent):
        assert (event.event, event.data) == (name, data)
        assert event.reason
    else:
        assert not isinstance(event, UnknownEvent)
        assert event == decode_event(name, data, wire)
