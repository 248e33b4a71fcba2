"""`to_json()`: a turn or a session as a document to share, read back with `json.loads`."""

from __future__ import annotations

import json

from silvia_client.chat import Turn, TurnBuilder
from silvia_client.chat.events import ErrorEvent, SessionEvent, TextEvent
from silvia_client.citations import Citation, InlineCitation

from ..display._build import account, build_session, row, web
from .test_records import account_session, pooled_turn


def test_a_turn_round_trips_through_json_loads() -> None:
    turn = pooled_turn()
    document = json.loads(turn.to_json(include_provider=True))
    assert document["type"] == "turn"
    assert document["session_id"] == "s1"
    assert document["text"] == turn.text
    assert document["complete"] is True
    assert document["error"] is None
    assert set(document["timings"]) == {"first_byte", "first_text", "done"}
    assert tuple(Citation.model_validate(r) for r in document["citations"]) == turn.citations
    assert (
        tuple(InlineCitation.model_validate(r) for r in document["inline_citations"])
        == turn.inline_citations
    )
    # Left out by default: read back, the provider is unknown.
    first = InlineCitation.model_validate(json.loads(turn.to_json())["inline_citations"][0])
    assert first.target is not None
    assert first.target.to_wire() == account(provider=None)


def test_a_failed_turn_says_why_and_its_timings_are_numbers_or_null() -> None:
    builder = TurnBuilder()
    builder.apply(SessionEvent("s9"))
    builder.apply(TextEvent("Half"))
    builder.apply(ErrorEvent("overloaded", "overloaded_error"))
    turn: Turn = builder.build()
    document = json.loads(turn.to_json(indent=None))
    assert document["complete"] is False
    assert document["error"] == {"message": "overloaded", "type": "overloaded_error"}
    assert document["timings"] == {"first_byte": None, "first_text": None, "done": None}


def test_a_session_round_trips_with_each_message() -> None:
    cited = [row("https://e.example/a", "A \u202e", web("https://e.example/a"), cited_text="é")]
    session = build_session(
        [
            {"id": "m1", "role": "user", "content": "Hi", "created_at": "2025-01-01T00:00:00Z"},
            {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Yes"}],
             "citations": cited, "inline_citations": cited},
        ],
        title="Money",
    )  # fmt: skip
    text = session.to_json()
    assert text.isascii()
    document = json.loads(text)
    assert (document["type"], document["id"], document["title"]) == ("session", "s1", "Money")
    assert [(m["id"], m["role"], m["text"]) for m in document["messages"]] == [
        ("m1", "user", "Hi"),
        ("m2", "assistant", "Yes"),
    ]
    assert document["messages"][0]["created_at"] == "2025-01-01T00:00:00Z"
    again = [Citation.model_validate(r) for r in document["messages"][1]["citations"]]
    assert tuple(again) == session.messages[1].citations


def test_the_documents_carry_the_request_ids() -> None:
    import dataclasses

    turn = dataclasses.replace(pooled_turn(), request_id="req_t")
    assert json.loads(turn.to_json())["request_id"] == "req_t"
    assert json.loads(pooled_turn().to_json())["request_id"] is None
    session = dataclasses.replace(build_session([]), request_id="req_s")
    assert json.loads(session.to_json())["request_id"] == "req_s"


def test_a_document_is_indented_by_two_unless_told_otherwise() -> None:
    for value in (pooled_turn(), account_session()):
        lines = value.to_json().splitlines()
        assert lines[1].startswith('  "')
        assert not lines[1].startswith('   "')
        assert value.to_json(indent=4).splitlines()[1].startswith('    "')
        assert "\n" not in value.to_json(indent=None)
        assert "plaid" not in value.to_json()  # the provider stays out unless asked
        assert '"provider": "plaid"' in value.to_json(include_provider=True)
