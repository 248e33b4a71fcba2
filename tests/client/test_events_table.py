"""The events' table (`chat/events.py`): each name read by its reader, on any wire format.

Bad data gives a `MalformedEvent` that says why, with the data as it arrived; a name
the table does not hold gives an `UnknownEvent`; nothing raises. The stream's own
tests (`test_events.py`) read the same events off a body.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client._wire import DEFAULT_WIRE, EventNames, WireFormat
from silvia_client.chat.events import (
    ChatEvent,
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    EventDecoder,
    MalformedEvent,
    MessageEvent,
    SessionEvent,
    TextEvent,
    UnknownEvent,
    decode_event,
    event_decoder,
)
from silvia_client.citations import Citation, InlineCitation, RowError, WebTarget

from ..depth import examples

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


@pytest.mark.parametrize("wire", WIRES, ids=["default", "renamed"])
def test_each_name_is_read_by_its_reader(wire: WireFormat) -> None:
    for decode in decoders(wire):
        for name, data, expected in cases(wire):
            event = decode(name, json.dumps(data), 7)
            assert event == expected, name
            assert type(event) is type(expected)
            assert decode_event(name, json.dumps(data), wire, 7) == expected, name


def test_the_citation_offset_is_0_unless_given() -> None:
    data = json.dumps({"citation": ROW})
    for event in (
        decode_event("citation", data, DEFAULT_WIRE),
        EventDecoder(DEFAULT_WIRE)("citation", data),
    ):
        assert isinstance(event, CitationEvent)
        assert event.citation.offset == 0
        assert event.citation.target == WebTarget(URL)
        assert event.citation.model_extra == {"type": "x"}


def test_another_wires_names_and_keys_are_not_this_ones() -> None:
    decode = EventDecoder(RENAMED)
    # The default names are unknown here; the default keys are not the shape.
    assert decode("text", '{"text": "a"}') == UnknownEvent("text", '{"text": "a"}')
    assert decode("t", '{"text": "a"}') == MalformedEvent(
        "t", '{"text": "a"}', "expected 'delta' to be str"
    )
    assert decode("done", "") == UnknownEvent("done", "")


def test_each_wire_has_one_shared_decoder() -> None:
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


@pytest.mark.parametrize(("name", "data", "reason"), REASONS)
def test_a_malformed_event_says_why_and_keeps_the_data(name: str, data: str, reason: str) -> None:
    for decode in decoders(DEFAULT_WIRE):
        assert decode(name, data) == MalformedEvent(name, data, reason)


@pytest.mark.parametrize("data", ["", " ", "\n", " \n\t"])
def test_done_with_no_data_is_done(data: str) -> None:
    for decode in decoders(DEFAULT_WIRE):
        assert decode("done", data) == DoneEvent()
    assert EventDecoder(RENAMED)("d", data) == DoneEvent()


@pytest.mark.parametrize(
    ("error", "message", "error_type"),
    [
        ({}, "the server reported an error", None),
        ({"message": 5, "type": 7}, "the server reported an error", None),
        ({"type": "overloaded_error"}, "the server reported an error", "overloaded_error"),
        ({"message": "slow down"}, "slow down", None),
    ],
)
def test_an_error_object_without_its_fields_has_the_defaults(
    error: dict[str, object], message: str, error_type: str | None
) -> None:
    data = {"error": error, "request_id": "r1"}
    event = decode_event("error", json.dumps(data), DEFAULT_WIRE)
    assert event == ErrorEvent(message, error_type, data)


def test_an_unknown_name_is_kept_with_its_data() -> None:
    for decode in decoders(DEFAULT_WIRE):
        for name, data in [("thinking", '{"t": 1}'), ("weird", "not json"), ("", "")]:
            assert decode(name, data) == UnknownEvent(name, data)


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


@settings(max_examples=examples(300), deadline=None)
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


@settings(max_examples=examples(300), deadline=None)
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
