"""The events' and the history's fast path (`_sse.FAST`: pydantic's parser) against the plain way.

For any text built from what the two parsers read differently (nesting past 200, lone
surrogates, integers past 4,300 digits, numbers past a float's range, NaN, duplicate keys),
the fast path gives exactly what the plain way gives: events, rows, errors, extras and types.
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_core import from_json

from silvia_client import DEFAULT_WIRE, _sse
from silvia_client._sse import FAST_PATH, loads
from silvia_client.chat import events
from silvia_client.chat.events import (
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    ErrorEvent,
    EventDecoder,
    MessageEvent,
    SessionEvent,
    TextEvent,
)
from silvia_client.sessions import parse_session, read_session

from .depth import examples
from .test_sse import scalars

# What pydantic's parser refuses or reads otherwise than `json.loads`, and a few plain numbers.
SPECIAL = [
    *("1e400", "-1e400", "1E+309", "2" + "0" * 310, "NaN", "Infinity", "-Infinity", "1" * 4301),
    *("-" + "9" * 5000, '"\\ud800"', '"a\\udfff"', "[" * 250 + "]" * 250),
    *('{"a":' * 210 + "1" + "}" * 210, "-0", "-0.0", "1e-400", "-1e-400"),
    *("12345678901234567890123", "1.7976931348623157e308", "0.1", "5", "5.0"),
]
TARGETS = [
    '{"kind":"web","url":"https://example.com/a"}',
    '{"kind":"market_data","ticker":"VTI","x":1e400}',
    '{"kind":"account","accountId":"acc_1","provider":"plaid"}',
    '{"kind":"accounts","accounts":[{"accountId":"a","provider":"p"}]}',
    '{"kind":"portfolio"}',
    '{"kind":"web","url":"not a url"}',
]
ROW_KEYS = ["source", "title", "cited_text", "target", "offset", "type", "search_result_index", "x"]
KEYS = [*ROW_KEYS, "kind", "url", "text", "citation", "citations", "sessionId", "error", "a"]

leaves = st.sampled_from(SPECIAL) | scalars.map(json.dumps) | st.just('"s"')


def _object(items: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{json.dumps(key)}:{value}" for key, value in items) + "}"


def _array(items: list[str]) -> str:
    return "[" + ",".join(items) + "]"


texts = st.recursive(
    leaves,
    lambda inner: (
        st.lists(st.tuples(st.sampled_from(KEYS) | st.text(max_size=3), inner), max_size=5).map(
            _object
        )
        | st.lists(inner, max_size=4).map(_array)
    ),
    max_leaves=20,
)
row_values = leaves | st.sampled_from(TARGETS) | texts
# A row starts with a good `source`; its keys may repeat (the last one counts).
rows = st.lists(st.tuples(st.sampled_from(ROW_KEYS), row_values), max_size=5).map(
    lambda items: _object([("source", '"s"'), *items])
)
good_rows = st.lists(
    st.tuples(st.sampled_from(["title", "cited_text"]), st.text(max_size=5).map(json.dumps))
    | st.tuples(st.sampled_from(["type", "x"]), leaves)
    | st.tuples(st.just("target"), st.sampled_from(TARGETS)),
    max_size=5,
).map(lambda items: _object([("source", '"s"'), *items]))
any_rows = rows | good_rows


def _event(key: str, value: str, more: list[tuple[str, str]]) -> str:
    return _object([(key, value), *more])


more = st.lists(st.tuples(st.sampled_from(KEYS), texts), max_size=1)
scalar_events = st.sampled_from(["text", "sessionId", "error"])
event_data = (
    texts
    | st.builds(_event, st.just("citation"), any_rows, more)
    | st.builds(_event, st.just("citations"), st.lists(any_rows, max_size=4).map(_array), more)
    | st.builds(_event, scalar_events, leaves | texts, st.just([]))
    | st.sampled_from(["", " ", "{}", "\ufeff{}", '{"text":"a\\u00e9"}', '{"text":"a"} '])
)
EVENT_NAMES = [*dataclasses.astuple(DEFAULT_WIRE.events), "unknown"]


def shown(value: Any) -> Any:
    """`value` as a comparable structure: every type, every number exactly, NaN included."""
    if isinstance(value, BaseModel):
        dump = value.model_dump(context={"include_provider": True})
        return (type(value).__name__, shown(dump), sorted(value.model_fields_set))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            [shown(getattr(value, f.name)) for f in dataclasses.fields(value)],
        )
    if isinstance(value, dict):
        return ("dict", [(key, shown(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [shown(item) for item in value])
    if isinstance(value, (float, Decimal)):
        return (type(value).__name__, repr(value))
    return (type(value).__name__, value)


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(EVENT_NAMES), event_data, st.integers(0, 10**6))
# Values the fast path must refuse (an infinity where `loads` keeps a Decimal), one per reader.
@example("message", '{"n":[1e400]}', 0)
@example("error", '{"error":{"message":"m","n":-1e400}}', 0)
@example("citations_summary", '{"citations":[{"source":"s","x":1e400}]}', 0)
@example("citation", '{"citation":{"source":"s","x":{"y":1e400}}}', 7)
def test_an_event_reads_the_same_both_ways(name: str, data: str, offset: int) -> None:
    decoder = EventDecoder(DEFAULT_WIRE)
    assert shown(decoder(name, data, offset)) == shown(decoder.plain(name, data, offset))


message_values = {
    "id": leaves,
    "role": st.sampled_from(['"user"', '"assistant"']) | leaves,
    "content": leaves | texts,
    "created_at": leaves,
    "citations": st.lists(any_rows, max_size=3).map(_array) | leaves,
    "inline_citations": st.lists(any_rows, max_size=3).map(_array) | leaves,
    "model": texts,
}
message_items = st.sampled_from(sorted(message_values)).flatmap(
    lambda key: st.tuples(st.just(key), message_values[key])
)
messages = st.lists(message_items, max_size=6).map(_object) | texts
sessions = st.lists(st.tuples(st.sampled_from(["id", "title", "user"]), leaves), max_size=3)
bodies = (
    st.builds(
        lambda session, items, more: _object(
            [("session", session), ("messages", _array(items)), *more]
        ),
        sessions.map(_object) | leaves,
        st.lists(messages, max_size=4),
        st.lists(st.tuples(st.sampled_from(["messages", "session", "x"]), texts), max_size=1),
    )
    | texts
)


def _outcome(read: Any) -> Any:
    try:
        return shown(read())
    except RecursionError:
        return "RecursionError"
    except ValueError:
        return "ValueError"


@settings(max_examples=examples(300), deadline=None)
@given(bodies)
@example('\ufeff{"session":{},"messages":[]}')  # json.loads reads a BOM off bytes; pydantic not
@example('{"session":{},"messages":[{"id":"a\\ud800"}]}')  # nor a lone surrogate's escape
def test_a_history_reads_the_same_both_ways(body: str) -> None:
    data = body.encode()
    assert _outcome(lambda: read_session(data, "s")) == _outcome(
        lambda: parse_session(loads(data), "s")
    )


def test_a_surrogate_encoded_in_a_bodys_bytes_reads_as_json_loads_reads_it() -> None:
    body = b'{"session":{},"messages":[{"id":"a\xed\xa0\x80"}]}'
    assert read_session(body, "s").messages[0].id == "a\ud800"


def test_the_fast_path_is_off_where_pydantic_core_misreads_an_escape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The installed parser, asked about another escape than the probe's.
    assert _sse._reads_escapes_right() is (from_json('"\\u00fc\\u2603"') == "\u00fc\u2603")

    def like_2_18(text: str) -> Any:  # an escape's UTF-8 bytes read as Latin-1
        return json.loads(text).encode().decode("latin-1")

    monkeypatch.setattr(_sse, "from_json", like_2_18)
    assert not _sse._reads_escapes_right()

    def unused(text: str, **options: Any) -> Any:
        raise AssertionError("pydantic's parser read an event")

    monkeypatch.setattr(events, "FAST_PATH", False)  # what the probe's no gives
    monkeypatch.setattr(events, "from_json", unused)
    assert EventDecoder(DEFAULT_WIRE)("text", '{"text":"\\u00e9"}') == TextEvent("\u00e9")


@pytest.mark.skipif(not FAST_PATH, reason="this pydantic-core misreads escapes: no fast path")
def test_ordinary_events_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # The property above would hold with no fast path at all: with the plain way's
    # `loads` gone, every kind of event still reads.
    def plain_way(data: str | bytes) -> Any:
        raise AssertionError(f"read the plain way: {data!r}")

    decoder = EventDecoder(DEFAULT_WIRE)
    monkeypatch.setattr(events, "loads", plain_way)
    assert decoder("session", '{"sessionId":"x"}') == SessionEvent("x")
    assert decoder("text", '{"text":"hi"}') == TextEvent("hi")
    row = '{"source":"s","target":{"kind":"web","url":"https://example.com/"},"type":"t","i":1}'
    event = decoder("citation", f'{{"citation":{row}}}', 7)
    assert isinstance(event, CitationEvent)
    assert event.citation.offset == 7
    assert "offset" in event.citation.model_fields_set
    summary = decoder("citations_summary", f'{{"citations":[{row},{row}]}}')
    assert isinstance(summary, CitationsSummaryEvent)
    assert len(summary.citations) == 2
    message = {"role": "assistant", "n": [1.5, {"k": None}]}
    assert decoder("message", json.dumps(message)) == MessageEvent(message)
    assert decoder("error", '{"error":"boom"}') == ErrorEvent("boom", None, {"error": "boom"})
    assert decoder("done", "{}") == DoneEvent()
    monkeypatch.undo()
    plain = decoder.plain("citation", f'{{"citation":{row}}}')  # the same default offset
    assert isinstance(plain, CitationEvent)
    assert plain.citation.offset == 0
