"""Citations as records, frames (`to_pandas`, polars) and JSON documents (`to_json`, pydantic).

One flat dict per row, numbered as the views number them; no provider unless asked.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from silvia_client import SilviaClient, SilviaError
from silvia_client._records import FIELDS
from silvia_client.chat import Turn
from silvia_client.citations import Citation, InlineCitation
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
WEB_URL = "https://app.example"


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


def timed_session() -> Session:
    """A question, an answer with its rows, and a message whose time is no time."""
    checking = account(provider=None)  # none to leave out of a document: it reads back equal
    cited = [row("silvia://your-account/checking", "A \u202e", checking, cited_text="é")]
    return build_session(
        [
            {"id": "m1", "role": "user", "content": "Hi", "created_at": "2025-01-01T00:00:00Z"},
            {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Yes"}],
             "created_at": "2025-01-01T02:00:01.5+02:00",
             "citations": cited, "inline_citations": cited},
            {"id": "m3", "role": "assistant", "content": "x", "created_at": "not a time",
             "citations": cited},
        ],
        title="Money",
    )  # fmt: skip


# Records ---------------------------------------------------------------------------------


def test_each_row_is_one_flat_record_numbered_as_the_views_number_it() -> None:
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
    views = {s.source: s.number for s in numbered_sources(turn.inline_citations, turn.citations)}
    assert all(r["number"] == views[r["source"]] for r in records)
    assert [r["offset"] for r in records] == [None, None, None, 6, 16, 25, 25]
    # Targets flattened, and the final word marked.
    records = turn.citation_records(web_url=WEB_URL)
    by_place = {(r["summary"], r["index"]): r for r in records}
    streamed_one = by_place[(False, 0)]
    assert streamed_one["kind"] == "account"
    assert streamed_one["account_ids"] == (ACCOUNT_A,)
    assert streamed_one["hrefs"] == (f"{WEB_URL}/accounts/{ACCOUNT_A}",)
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
    quote = row("silvia://market/AAPL", "AAPL", {"kind": "market_data", "ticker": "AAPL"})
    (summary, streamed) = build_turn("Apple ", quote).citation_records()
    assert summary["ticker"] == streamed["ticker"] == summary["label"] == "AAPL"


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
def test_every_row_gives_one_record_whatever_the_turn(items: list[tuple[str, bool, str]]) -> None:
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


# Frames ----------------------------------------------------------------------------------


def test_the_frame_has_every_field_typed_times_in_utc_and_links_behind_the_web_url() -> None:
    pd = pytest.importorskip("pandas", reason="needs pandas: pip install 'silvia-client[pandas]'")
    frame = pooled_turn().to_pandas()
    assert list(frame.columns) == list(FIELDS)
    assert len(frame) == 7
    for name in ("index", "number", "offset"):
        assert str(frame[name].dtype) == "Int64", name
    assert frame["offset"].isna().tolist() == [True] * 3 + [False] * 4
    for name in ("session_id", "source", "title", "cited_text", "kind", "url", "label"):
        assert pd.api.types.is_string_dtype(frame[name]), name
    assert frame["kind"].isna().sum() == 2  # the legacy row, twice: missing, not "None"
    assert frame["summary"].dtype == bool
    assert frame["account_ids"].iloc[0] == (ACCOUNT_A, ACCOUNT_B)
    empty = build_turn("No sources.").to_pandas()
    assert (list(empty.columns), len(empty)) == (list(FIELDS), 0)
    assert str(empty["number"].dtype) == "Int64"
    session = timed_session()
    frame = session.to_pandas()
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype)
    assert str(frame["created_at"].dt.tz) == "UTC"
    times = frame["created_at"].tolist()
    assert times[0] == pd.Timestamp("2025-01-01T00:00:01.5", tz="UTC")
    assert pd.isna(times[-1])  # "not a time": missing
    assert session.messages[1].to_pandas()["message_id"].tolist() == ["m2", "m2"]
    # Every table takes the web_url for its account links.
    for value in (pooled_turn(), session, session.messages[1]):
        for web_url, origin in ((None, ""), (WEB_URL, WEB_URL)):
            hrefs = value.to_pandas(web_url=web_url)["hrefs"]
            assert f"{origin}/accounts/{ACCOUNT_A}" in {h for each in hrefs for h in each}


def test_without_pandas_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    turn = pooled_turn()
    with pytest.raises(ImportError, match=r"silvia-client\[pandas\]") as info:
        turn.to_pandas()
    assert info.value.name == "pandas"
    assert len(turn.citation_records()) == 7  # the records need nothing


def test_the_records_make_a_polars_frame_as_they_are() -> None:
    pl = pytest.importorskip("polars", reason="needs polars (pip install polars): not installed")
    records = pooled_turn().citation_records()
    frame = pl.DataFrame([{**r, "account_ids": list(r["account_ids"]),
                           "hrefs": list(r["hrefs"])} for r in records])  # fmt: skip
    assert frame.columns == list(FIELDS)
    assert frame.height == 7
    assert frame["number"].to_list() == [r["number"] for r in records]
    assert frame.filter(pl.col("kind") == "accounts")["account_ids"].to_list()[0] == list(
        records[0]["account_ids"]
    )


# JSON documents --------------------------------------------------------------------------


def test_a_turn_round_trips_through_json_loads() -> None:
    turn = dataclasses.replace(pooled_turn(), request_id="req_t")
    document = json.loads(turn.to_json(include_provider=True))
    assert [document[k] for k in ("type", "session_id", "request_id", "complete", "error")] == [
        "turn", "s1", "req_t", True, None
    ]  # fmt: skip
    assert document["text"] == turn.text
    assert tuple(Citation.model_validate(r) for r in document["citations"]) == turn.citations
    assert (
        tuple(InlineCitation.model_validate(r) for r in document["inline_citations"])
        == turn.inline_citations
    )
    # Left out by default: read back, the provider is unknown.
    first = InlineCitation.model_validate(json.loads(turn.to_json())["inline_citations"][0])
    assert first.target is not None
    assert first.target.to_wire() == account(provider=None)
    for value in (turn, timed_session()):  # indented by two unless told otherwise
        assert value.to_json().splitlines()[1].startswith('  "type"')
        assert value.to_json(indent=4).splitlines()[1].startswith('    "type"')
        assert "\n" not in value.to_json(indent=None)
    failed = json.loads(build_turn("Half", error="overloaded", done=False).to_json())
    assert (failed["complete"], failed["request_id"]) == (False, None)
    assert failed["error"] == {"message": "overloaded", "type": "api_error"}
    assert failed["timings"] == {"first_byte": None, "first_text": None, "done": None}


def test_a_session_round_trips_with_each_message() -> None:
    session = dataclasses.replace(timed_session(), request_id="req_s")
    text = session.to_json()
    assert text.isascii()
    document = json.loads(text)
    assert (document["type"], document["id"], document["title"]) == ("session", "s1", "Money")
    assert document["request_id"] == "req_s"
    assert [(m["id"], m["role"], m["text"]) for m in document["messages"]] == [
        ("m1", "user", "Hi"),
        ("m2", "assistant", "Yes"),
        ("m3", "assistant", "x"),
    ]
    assert document["messages"][0]["created_at"] == "2025-01-01T00:00:00Z"
    again = [Citation.model_validate(r) for r in document["messages"][1]["citations"]]
    assert tuple(again) == session.messages[1].citations


# The whole scenario library --------------------------------------------------------------


class _Response(BaseModel):
    """What a FastAPI app's response model might hold: a turn, its session, some messages."""

    turn: Turn | None
    session: Session | None
    messages: list[Message]


def _library() -> Iterator[tuple[str, Turn | None, Session | None]]:
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
            yield name, turn, session


def test_the_librarys_records_documents_and_pydantic_dumps_hold_no_provider_unless_asked() -> None:
    seen, asked, dumped = 0, "", ""
    kinds: set[str | None] = set()
    for name, turn, session in _library():
        records = [
            *(turn.citation_records() if turn is not None else []),
            *(session.citation_records() if session is not None else []),
        ]
        for record in records:
            assert "provider" not in record, name
            assert_private(repr(record))
            kinds.add(record["kind"])
        seen += len(records)
        for value, kind in ((turn, Turn), (session, Session)):
            if value is not None:
                assert '"provider"' not in value.to_json()
                assert_private(value.to_json())
                asked += value.to_json(include_provider=True)
                # The bare value, as FastAPI's `-> Turn` dumps it.
                adapter: TypeAdapter[Any] = TypeAdapter(kind)
                assert json.loads(adapter.dump_json(value)) == json.loads(value.to_json())
                assert adapter.dump_python(value, mode="json") == json.loads(value.to_json())
        messages = list(session.messages) if session is not None else []
        response = _Response(turn=turn, session=session, messages=messages)
        for include in (False, True):
            context = {"include_provider": True} if include else None
            text = response.model_dump_json(context=context)
            document = json.loads(text)
            assert response.model_dump(context=context) == document, name
            want = None if turn is None else json.loads(turn.to_json(include_provider=include))
            assert document["turn"] == want, name
            if session is not None:
                want = json.loads(session.to_json(include_provider=include))
                assert document["session"] == want, name
                assert document["messages"] == want["messages"], name
            if not include:
                assert '"provider"' not in text, name
                assert_private(text)
            dumped += text
    assert seen > 100
    assert {"account", "accounts", None} <= kinds
    assert '"provider": "plaid"' in asked  # they were there to leave out
    assert '"provider":"plaid"' in dumped  # asked for by name, pydantic dumps them too
