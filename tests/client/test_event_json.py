"""Every chat event as JSON for a relay: `to_dict()`, `to_json()`; no `provider` unless asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from silvia_client._wire import DEFAULT_WIRE
from silvia_client.chat import ChatEvent, ErrorEvent, MalformedEvent, UnknownEvent, decode_event
from silvia_client.errors import StreamError
from silvia_client.testing import SCENARIOS, ReferenceServer

# Every turn that ends (the faults that stall or never end are left out), and the
# faults that give an unknown, a malformed and an error event.
ENDING = ["fault-malformed-json", "fault-malformed-shape", "fault-unknown-event"]
ENDING.append("fault-error-event")
NAMES = [n for n in SCENARIOS if not n.startswith(("fault-", "status-"))] + ENDING
RAW = '{"target": {"type": "account", "account_id": "a1", "provider": "plaid"}, "n": 1}'


def _keys(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _every_event() -> list[ChatEvent]:
    client = ReferenceServer().client()
    events: list[ChatEvent] = [
        UnknownEvent("later", RAW),
        MalformedEvent("citation", RAW, "invalid citation"),
        MalformedEvent("text", "{not json provider", "invalid JSON"),
        ErrorEvent("boom", "overloaded", json.loads(RAW)),
    ]
    for name in NAMES:
        try:
            with client.chat.stream(f"/scenario {name} How are my accounts?") as stream:
                events.extend(stream)
        except StreamError:
            pass
    return events


EVENTS = _every_event()


def test_the_scenarios_give_every_kind_of_event_and_providers() -> None:
    assert {e.type for e in EVENTS} == {
        "session", "text", "citation", "citations_summary", "message",
        "error", "done", "unknown", "malformed",
    }  # fmt: skip
    assert sum('"provider"' in e.to_json(include_provider=True) for e in EVENTS) > 10


def test_an_event_as_json_names_no_provider_unless_asked() -> None:
    for event in EVENTS:  # every event of every scenario, one item: a failure names it
        document = event.to_dict()
        assert document["type"] == event.type, event
        assert json.loads(event.to_json()) == document, event
        assert "provider" not in set(_keys(document)), event
        assert '"provider"' not in event.to_json(), event
        full = event.to_dict(include_provider=True)
        assert json.loads(event.to_json(include_provider=True)) == full, event
        assert set(full) >= set(document), event


def test_raw_data_keeps_its_provider_only_when_asked() -> None:
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


def test_rows_errors_and_huge_numbers_as_json() -> None:
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
