"""Every SSE event of a turn becomes one typed event; nothing is dropped, nothing is fatal;
every event goes out as JSON for a relay (`to_dict()`, `to_json()`), with no `provider`
unless asked. Read off a response body, then through the events' table alone
(`chat/events.py`), on any wire format: bad data is a `MalformedEvent` that says why, a
name the table does not hold an `UnknownEvent`; nothing raises.
"""

from __future__ import annotations

import json
from decimal import Decimal
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
from silvia_client.citations import Citation, InlineCitation, RowError, WebTarget
from silvia_client.errors import StreamError
from silvia_client.testing import SCENARIOS, ReferenceServer

from ..citations.strategies import every_key
from ..depth import examples
from .conftest import Api
from .sse import (
    CHAT_URL,
    FINAL_MESSAGE,
    WEB_URL,
    citation,
    comment,
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


async def test_each_event_of_a_stream_becomes_its_typed_event_and_nothing_stops_it(
    api: Api, server: respx.MockRouter
) -> None:
    unknown = [("thinking_delta", '{"thinking": "hmm"}'), ("weird", "not json at all")]
    # A known name whose data is not JSON, or not the documented shape (each reason: below).
    malformed = [("session", "{not json"), ("text", '{"text": null}'), ("message", "[1, 2]")]
    malformed += [("citation", '{"citation": {"title": "no source"}}'), ("error", '{"error": 5}')]
    inline = row(WEB_URL, web(), type="search_result_location", search_result_index=2)
    wire = [comment(), session("sess_9"), comment("ping"), text("Hello"), citation(inline)]
    wire += [b": ping\n", b'event: text\n: keep-alive\ndata: {"text": "b"}\n\n']  # comments inside
    wire += [event("text", '{"text":\n"two lines"}')]
    wire += [event(name, data) for name, data in unknown + malformed]
    wire += [summary([row(WEB_URL, web())]), message(FINAL_MESSAGE), comment()]
    wire += [b"event: done\ndata:\n\n", comment()]
    body = b"".join(wire)
    server.post(CHAT_URL).mock(side_effect=lambda request: sse_response(body))
    events, failure = await api.read(api.client())
    assert failure is None
    assert [(e.event, e.data) for e in events if isinstance(e, UnknownEvent)] == unknown
    bad = [e for e in events if isinstance(e, MalformedEvent)]
    assert [(e.event, e.data) for e in bad] == malformed
    assert all(e.reason for e in bad)
    known = [e for e in events if not isinstance(e, (UnknownEvent, MalformedEvent))]
    assert known == [
        SessionEvent("sess_9"),
        TextEvent("Hello"),
        CitationEvent(InlineCitation.model_validate({**inline, "offset": len("Hello")})),
        TextEvent("b"),
        TextEvent("two lines"),
        CitationsSummaryEvent((Citation.model_validate(row(WEB_URL, web())),)),
        MessageEvent(FINAL_MESSAGE),
        DoneEvent(),
    ]
    cite = known[2]
    assert isinstance(cite, CitationEvent)
    assert cite.citation.target == WebTarget(WEB_URL)
    assert cite.citation.model_extra == {"type": "search_result_location", "search_result_index": 2}


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


def cases(wire: WireFormat) -> list[tuple[str, dict[str, Any], ChatEvent]]:
    """Each event name of `wire`, data of the documented shape, and the event it reads as."""
    n = wire.events
    summary_rows = [ROW, {"title": "no source"}]
    message = {"role": "assistant", "content": []}
    # An error object, and one without its fields: the defaults.
    errors = [
        ({wire.error_key: fields, "request_id": "r1"}, said, kind)
        for fields, said, kind in [
            (
                {"message": "overloaded", "type": "overloaded_error"},
                "overloaded",
                "overloaded_error",
            ),
            ({}, "the server reported an error", None),
            ({"message": 5, "type": 7}, "the server reported an error", None),
            ({"type": "overloaded_error"}, "the server reported an error", "overloaded_error"),
            ({"message": "slow down"}, "slow down", None),
        ]
    ]
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
        (n.message, message, MessageEvent(message)),
        (n.error, {wire.error_key: "boom"}, ErrorEvent("boom", None, {wire.error_key: "boom"})),
        *((n.error, data, ErrorEvent(said, kind, data)) for data, said, kind in errors),
        (n.done, {}, DoneEvent()),
    ]


def test_each_name_is_read_by_its_reader() -> None:
    for wire in WIRES:
        for decode in (EventDecoder(wire), event_decoder(wire)):  # built here, and shared
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


def test_a_malformed_or_unknown_event_says_why_and_keeps_the_data() -> None:
    for decode in (EventDecoder(DEFAULT_WIRE), event_decoder(DEFAULT_WIRE)):
        for name, data, reason in REASONS:
            assert decode(name, data) == MalformedEvent(name, data, reason), (name, data[:20])
        for name, data in [("thinking", '{"t": 1}'), ("weird", "not json"), ("", "")]:
            assert decode(name, data) == UnknownEvent(name, data)
        for data in ["", " ", "\n", " \n\t"]:
            assert decode("done", data) == DoneEvent(), repr(data)
            assert EventDecoder(RENAMED)("d", data) == DoneEvent(), repr(data)
    # Another wire's: the default names are unknown there; the default keys not the shape.
    decode = EventDecoder(RENAMED)
    assert decode("text", '{"text": "a"}') == UnknownEvent("text", '{"text": "a"}')
    assert decode("done", "") == UnknownEvent("done", "")
    said = "expected 'delta' to be str"
    assert decode("t", '{"text": "a"}') == MalformedEvent("t", '{"text": "a"}', said)
    assert event_decoder(RENAMED) is event_decoder(RENAMED)  # one decoder per wire
    assert event_decoder(RENAMED) is not event_decoder(DEFAULT_WIRE)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
NAMES = sorted({name for wire in WIRES for name in vars(wire.events).values()})


@settings(max_examples=examples(200), deadline=None)
@given(
    wire=st.sampled_from(WIRES),
    name=st.one_of(st.sampled_from(NAMES), st.text(max_size=6)),
    data=st.one_of(st.text(max_size=30), json_values.map(json.dumps)),
    value=json_values,
    keyed=st.sampled_from([None, True, False]),
)
def test_any_data_gives_one_event_and_a_string_field_reads_only_as_a_string(
    wire: WireFormat, name: str, data: str, value: object, keyed: bool | None
) -> None:
    # Never an exception. A known name whose data is an object holding a string under its
    # key reads as that string; any other data (JSON or not) is a `MalformedEvent` as sent.
    keys = {wire.events.session: wire.session_id_key, wire.events.text: wire.text_key}
    payload = {keys.get(name): value} if keyed else value
    if name in keys and keyed is not None:  # JSON: the value under the event's key, or bare
        data = json.dumps(payload)
    event = EventDecoder(wire)(name, data)
    if name not in set(vars(wire.events).values()):
        assert event == UnknownEvent(name, data)
    elif isinstance(event, MalformedEvent):
        assert (event.event, event.data) == (name, data)
        assert event.reason
    else:
        assert not isinstance(event, UnknownEvent)
        assert event == decode_event(name, data, wire)
    if name in keys and keyed is not None:
        string = payload.get(keys[name]) if isinstance(payload, dict) else None
        if not isinstance(string, str):
            assert isinstance(event, MalformedEvent)
            assert event.reason.startswith("expected ")
        elif name == wire.events.session:
            assert event == SessionEvent(string)
        else:
            assert event == TextEvent(string)


# --------------------------------------------------------------------- as JSON, for a relay

# Every turn that ends (the faults that stall or never end are left out), and the
# faults that give an unknown, a malformed and an error event.
ENDING = ["fault-malformed-json", "fault-malformed-shape", "fault-unknown-event"]
ENDING.append("fault-error-event")
SCENARIO_NAMES = [n for n in SCENARIOS if not n.startswith(("fault-", "status-"))] + ENDING
RAW = '{"target": {"type": "account", "account_id": "a1", "provider": "plaid"}, "n": 1}'


def _every_event() -> list[ChatEvent]:
    client = ReferenceServer().client()
    events: list[ChatEvent] = [
        UnknownEvent("later", RAW),
        MalformedEvent("citation", RAW, "invalid citation"),
        MalformedEvent("text", "{not json provider", "invalid JSON"),
        ErrorEvent("boom", "overloaded", json.loads(RAW)),
    ]
    for name in SCENARIO_NAMES:
        try:
            with client.chat.stream(f"/scenario {name} How are my accounts?") as stream:
                events.extend(stream)
        except StreamError:
            pass
    return events


EVENTS = _every_event()


def test_an_event_as_json_names_no_provider_unless_asked() -> None:
    assert {e.type for e in EVENTS} == {
        "session", "text", "citation", "citations_summary", "message",
        "error", "done", "unknown", "malformed",
    }  # fmt: skip
    assert sum('"provider"' in e.to_json(include_provider=True) for e in EVENTS) > 10
    for one in EVENTS:  # every one of every scenario, one item: a failure names it
        document = one.to_dict()
        assert document["type"] == one.type, one
        assert json.loads(one.to_json()) == document, one
        assert "provider" not in set(every_key(document)), one
        assert '"provider"' not in one.to_json(), one
        full = one.to_dict(include_provider=True)
        assert json.loads(one.to_json(include_provider=True)) == full, one
        assert set(full) >= set(document), one


def test_raw_data_keeps_its_provider_only_when_asked_and_huge_numbers_are_digits() -> None:
    unknown = UnknownEvent("later", RAW)
    assert json.loads(unknown.to_dict()["data"]) == {
        "target": {"type": "account", "account_id": "a1"},
        "n": 1,
    }
    assert unknown.to_dict(include_provider=True)["data"] == RAW
    not_json = MalformedEvent("text", "{not json provider", "invalid JSON")
    assert "data" not in not_json.to_dict()
    assert not_json.to_dict(include_provider=True)["data"] == "{not json provider"
    error = ErrorEvent("boom", "overloaded", json.loads(RAW))
    assert error.to_dict()["body"]["target"] == {"type": "account", "account_id": "a1"}
    assert error.to_dict(include_provider=True)["body"] == json.loads(RAW)
    # Data with no provider stays as sent, its layout too.
    assert UnknownEvent("later", '{"a":1}').to_dict()["data"] == '{"a":1}'
    # A number past a float's range is read as a Decimal: JSON gives its digits as a string.
    huge = '{"provider": "p", "n": 1e400}'
    assert json.loads(UnknownEvent("later", huge).to_dict()["data"]) == {"n": "1E+400"}
    assert json.loads(ErrorEvent("boom", None, {"n": Decimal("1e400")}).to_json()) == {
        "type": "error", "message": "boom", "error_type": None, "body": {"n": "1E+400"},
    }  # fmt: skip
    data = '{"citations": [{"source": "s", "x": 1e400}, {"source": 3, "provider": "p"}]}'
    summary = decode_event("citations_summary", data, DEFAULT_WIRE)
    document = summary.to_dict()
    row = {"source": "s", "title": None, "cited_text": None, "target": None, "x": "1E+400"}
    assert json.loads(json.dumps(document)) == {  # JSON-ready as it is, rows in their wire form
        "type": "citations_summary",
        "citations": [row],
        "errors": [{"index": 1, "reason": "source: string_type", "raw": {"source": 3}}],
    }
    raw = summary.to_dict(include_provider=True)["errors"][0]["raw"]
    assert raw == {"source": 3, "provider": "p"}
