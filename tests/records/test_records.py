"""Citations as records: one flat dict per row, numbered as the views number them, no provider."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from silvia_client import SilviaClient, SilviaError
from silvia_client._records import FIELDS
from silvia_client.chat import Turn
from silvia_client.display import numbered_sources
from silvia_client.sessions import Message, Session
from silvia_client.testing import SCENARIO_HEADER, SCENARIOS, ReferenceServer

from ..citations.strategies import PROPERTY
from ..display._build import (
    ACCOUNT_A,
    ACCOUNT_B,
    account,
    accounts,
    build_session,
    build_turn,
    row,
    web,
)

VENDORS = re.compile(r"plaid|snap\s?trade", re.IGNORECASE)
PROVIDER_VALUE = re.compile(r"""["'](plaid|manual|snaptrade)["']""", re.IGNORECASE)


def assert_private(text: str) -> None:
    assert not VENDORS.search(text), VENDORS.search(text)
    assert not PROVIDER_VALUE.search(text), PROVIDER_VALUE.search(text)


def pooled_turn() -> Turn:
    """A source streamed as one account, then pooled into two; a web page; a legacy row."""
    first = row("silvia://your-account/card", "Card", account(ACCOUNT_A), cited_text="a: 1")
    pooled = row("silvia://your-account/card", "Card", accounts(ACCOUNT_A, ACCOUNT_B))
    page = row("https://e.example/rates", "Rates", web("https://e.example/rates"))
    legacy = row("Old note", "Old note", cited_text="as it was")
    return build_turn(
        "Cards ", first, "and rates ", page, "and more ", pooled, legacy, ".",
        summary=[pooled, page, legacy],
    )  # fmt: skip


def test_each_row_is_one_record_with_every_field_in_order() -> None:
    turn = pooled_turn()
    records = turn.citation_records()
    assert len(records) == len(turn.citations) + len(turn.inline_citations) == 7
    assert all(list(record) == list(FIELDS) for record in records)
    assert [r["summary"] for r in records] == [True] * 3 + [False] * 4
    assert [r["index"] for r in records] == [0, 1, 2, 0, 1, 2, 3]
    assert {r["session_id"] for r in records} == {"s1"}
    assert {(r["message_id"], r["role"], r["created_at"]) for r in records} == {
        (None, "assistant", None)
    }


def test_numbers_are_the_views_numbers_and_offsets_the_streamed_ones() -> None:
    turn = pooled_turn()
    records = turn.citation_records()
    views = {s.source: s.number for s in numbered_sources(turn.inline_citations, turn.citations)}
    assert all(r["number"] == views[r["source"]] for r in records)
    assert [r["offset"] for r in records] == [None, None, None, 6, 16, 25, 25]
    assert [r["offset"] for r in records[3:]] == [c.offset for c in turn.inline_citations]


def test_targets_are_flattened_and_the_final_word_marked() -> None:
    records = pooled_turn().citation_records(web_url="https://app.example")
    by_place = {(r["summary"], r["index"]): r for r in records}
    streamed_one = by_place[(False, 0)]
    assert streamed_one["kind"] == "account"
    assert streamed_one["account_ids"] == (ACCOUNT_A,)
    assert streamed_one["hrefs"] == (f"https://app.example/accounts/{ACCOUNT_A}",)
    assert streamed_one["final"] is False  # the source was pooled later
    pooled = by_place[(True, 0)]
    assert pooled["account_ids"] == (ACCOUNT_A, ACCOUNT_B)
    assert pooled["label"] == "Card"
    assert pooled["final"] is True
    page = by_place[(True, 1)]
    assert (page["kind"], page["url"], page["ticker"]) == ("web", "https://e.example/rates", None)
    assert page["hrefs"] == ("https://e.example/rates",)
    legacy = by_place[(True, 2)]
    assert (legacy["kind"], legacy["account_ids"], legacy["hrefs"]) == (None, (), ())
    assert legacy["final"] is True  # untyped is its final word
    assert legacy["cited_text"] == "as it was"


def test_a_ticker_is_a_column() -> None:
    quote = row(
        "silvia://market-data/finnhub/AAPL", "AAPL", {"kind": "market_data", "ticker": "AAPL"}
    )
    (summary, streamed) = build_turn("Apple ", quote).citation_records()
    assert summary["ticker"] == streamed["ticker"] == "AAPL"
    assert summary["label"] == "AAPL"


def timed_session() -> Session:
    """A question, an answer with its rows, and a message whose time is no time."""
    cited = [row("https://e.example/a", "A", web("https://e.example/a"))]
    return build_session(
        [
            {"id": "m1", "role": "user", "content": "Hi", "created_at": "2025-01-01T00:00:00Z"},
            {"id": "m2", "role": "assistant", "content": "Yes",
             "created_at": "2025-01-01T02:00:01.5+02:00",
             "citations": cited, "inline_citations": cited},
            {"id": "m3", "role": "assistant", "content": "x", "created_at": "not a time",
             "citations": cited},
        ]
    )  # fmt: skip


def account_session() -> Session:
    cited = [row("acct:checking", "Checking", account())]
    return build_session([{"id": "m1", "role": "assistant", "content": "x", "citations": cited}])


def test_a_session_gives_each_messages_rows_with_its_id_role_and_time() -> None:
    session = timed_session()
    records = session.citation_records()
    assert [(r["message_id"], r["role"], r["summary"]) for r in records] == [
        ("m2", "assistant", True),
        ("m2", "assistant", False),
        ("m3", "assistant", True),
    ]
    assert {r["session_id"] for r in records} == {"s1"}
    assert records[1]["offset"] is None  # reloaded: no position
    mine = [{**r, "session_id": None} for r in records[:2]]
    assert session.messages[1].citation_records() == mine


@PROPERTY  # no health check on a loaded machine, no deadline
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans(), st.text(max_size=5)),
        max_size=8,
    )
)
def test_every_row_gives_one_record_whatever_the_turn(
    items: list[tuple[str, bool, str]],
) -> None:
    pieces: list[str | dict[str, Any]] = []
    for source, typed, text in items:
        pieces.append(text)
        target = web(f"https://e.example/{source}") if typed else None
        pieces.append(row(f"https://e.example/{source}", source, target))
    turn = build_turn(*pieces)
    records = turn.citation_records()
    assert len(records) == len(turn.citations) + len(turn.inline_citations)
    assert sorted({r["number"] for r in records}) == list(range(1, len(turn.sources) + 1))
    for record in records:
        assert record["final"] == (
            (None if record["kind"] is None else record["url"])
            == getattr(turn.target_for(record["source"]), "url", None)
        )


# The whole scenario library ---------------------------------------------------------------


def _library() -> list[tuple[str, Turn | None, Session | None]]:
    out: list[tuple[str, Turn | None, Session | None]] = []
    # A short deadline: the faults that stall end there, with their partial turns.
    client: SilviaClient = ReferenceServer().client(max_retries=0, deadline=0.2)
    with client:
        for name in SCENARIOS:
            turn: Turn | None
            try:
                turn = client.chat.send(
                    "How are my accounts?", extra_headers={SCENARIO_HEADER: name}
                )
            except SilviaError as error:
                turn = getattr(error, "turn", None)
            session = None
            if turn is not None and turn.session_id:
                try:
                    session = client.sessions.get(turn.session_id)
                except SilviaError:
                    session = None
            out.append((name, turn, session))
    return out


@pytest.fixture(scope="module")
def library() -> list[tuple[str, Turn | None, Session | None]]:
    return _library()


def test_no_record_or_json_document_of_the_library_holds_a_provider_unless_asked(
    library: list[tuple[str, Turn | None, Session | None]],
) -> None:
    seen, asked = 0, ""
    kinds: set[str | None] = set()
    for name, turn, session in library:
        records = [
            *(turn.citation_records() if turn is not None else []),
            *(session.citation_records() if session is not None else []),
        ]
        for record in records:
            assert "provider" not in record, name
            assert_private(repr(record))
            kinds.add(record["kind"])
        seen += len(records)
        for value in (turn, session):
            if value is not None:
                assert '"provider"' not in value.to_json()
                assert_private(value.to_json())
                asked += value.to_json(include_provider=True)
    assert seen > 100
    assert {"account", "accounts", None} <= kinds
    assert '"provider": "plaid"' in asked  # they were there to leave out


class _Response(BaseModel):
    """What a FastAPI app's response model might hold: a turn, its session, some messages."""

    turn: Turn | None
    session: Session | None
    messages: list[Message]


def test_pydantic_dumps_the_library_as_its_json_documents(
    library: list[tuple[str, Turn | None, Session | None]],
) -> None:
    dumped = ""
    for name, turn, session in library:
        messages = list(session.messages) if session is not None else []
        response = _Response(turn=turn, session=session, messages=messages)
        for asked in (False, True):
            context = {"include_provider": True} if asked else None
            text = response.model_dump_json(context=context)
            document = json.loads(text)
            assert response.model_dump(context=context) == document, name
            want_turn = None if turn is None else json.loads(turn.to_json(include_provider=asked))
            assert document["turn"] == want_turn, name
            if session is not None:
                want = json.loads(session.to_json(include_provider=asked))
                assert document["session"] == want, name
                assert document["messages"] == want["messages"], name
            if not asked:
                assert '"provider"' not in text, name
                assert_private(text)
            dumped += text
        for value, kind in ((turn, Turn), (session, Session)):
            if value is not None:  # the bare value, as FastAPI's `-> Turn` dumps it
                adapter: TypeAdapter[Any] = TypeAdapter(kind)
                assert json.loads(adapter.dump_json(value)) == json.loads(value.to_json())
                assert adapter.dump_python(value, mode="json") == json.loads(value.to_json())
    assert '"provider":"plaid"' in dumped  # asked for by name, they are there
