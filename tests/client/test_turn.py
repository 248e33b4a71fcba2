"""`Turn`: what a turn assembles; every row as the server sent it; `target_for`, its final word."""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx
from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client import DEFAULT_WIRE
from silvia_client.chat import DoneEvent, Turn, TurnBuilder
from silvia_client.chat.events import CitationsSummaryEvent, TextEvent, event_decoder
from silvia_client.citations import (
    AccountTarget,
    Citation,
    CitationTarget,
    InlineCitation,
    RowError,
    WebTarget,
    _final,
    parse_citation_target,
)

from ..citations.strategies import PROPERTY, any_target_value
from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_B,
    ACCOUNT_C,
    ACCOUNT_SOURCE,
    CHAT_URL,
    FINAL_MESSAGE,
    WEB_URL,
    account,
    accounts,
    citation,
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


async def turn_of(api: Api, server: respx.MockRouter, *parts: bytes, **kwargs: Any) -> Turn:
    body = b"".join(parts)
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(body))
    return await api.turn(api.client(), **kwargs)


def targets(citations: tuple[Citation, ...]) -> list[CitationTarget | None]:
    return [c.target for c in citations]


# ---------------------------------------------------------------------------------------- assembly


async def test_turn_assembles_everything_that_arrived(api: Api, server: respx.MockRouter) -> None:
    turn = await turn_of(
        api,
        server,
        session("sess_1"),
        citation(row("silvia://your-portfolio", {"kind": "portfolio"})),  # offset 0
        text("You have "),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
        text("$120"),
        text(" in checking. "),
        citation(row(WEB_URL, web())),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
        event("thinking", '{"t": 1}'),
        event("text", "{bad"),
        summary([row(WEB_URL, web()), row(ACCOUNT_SOURCE, account(ACCOUNT_A))]),
        message(FINAL_MESSAGE),
        done(),
    )
    assert turn.text == "You have $120 in checking. "
    assert [(c.source, c.offset) for c in turn.inline_citations] == [
        ("silvia://your-portfolio", 0),
        (ACCOUNT_SOURCE, len("You have ")),
        (WEB_URL, len("You have $120 in checking. ")),
        (ACCOUNT_SOURCE, len("You have $120 in checking. ")),
    ]
    assert [c.source for c in turn.citations] == [WEB_URL, ACCOUNT_SOURCE]
    assert all(type(c) is Citation for c in turn.citations)
    assert all(isinstance(c, InlineCitation) for c in turn.inline_citations)
    assert turn.message == FINAL_MESSAGE
    assert turn.session_id == "sess_1"
    assert [(e.event, e.data) for e in turn.unknown_events] == [("thinking", '{"t": 1}')]
    assert [(e.event, e.data) for e in turn.malformed_events] == [("text", "{bad")]
    assert turn.complete
    assert turn.error is None
    assert turn.sources == ("silvia://your-portfolio", ACCOUNT_SOURCE, WEB_URL)
    assert turn.target_for(ACCOUNT_SOURCE) == AccountTarget(ACCOUNT_A, "plaid")


async def test_session_id_from_the_event_else_the_one_passed_and_an_empty_turn(
    api: Api, server: respx.MockRouter
) -> None:
    turn = await turn_of(api, server, session("sess_new"), text("x"), done(), session_id="old")
    assert turn.session_id == "sess_new"
    turn = await turn_of(api, server, text("x"), done(), session_id="sess_given")
    assert turn.session_id == "sess_given"
    turn = await turn_of(api, server, done())
    assert turn.session_id is None
    assert (turn.text, turn.citations, turn.inline_citations, turn.message) == ("", (), (), None)
    assert turn.complete


def test_the_builder_counts_what_it_applies_and_carries_the_request_id() -> None:
    builder = TurnBuilder("s1")
    assert (builder.events, builder.request_id, builder.build().request_id) == (0, None, None)
    for piece in ("a", "b", "c"):
        builder.apply(TextEvent(piece))
    turn = builder.build()
    assert turn.complete is False  # without done
    assert (turn.text, turn.session_id) == ("abc", "s1")
    assert (turn.citation_errors, turn.unknown_events, turn.malformed_events) == ((), (), ())
    # The summary's unreadable rows are the turn's citation errors.
    errors = (RowError(1, "target: not an object"), RowError(3, "source: missing"))
    builder.apply(CitationsSummaryEvent((), errors))
    builder.apply(DoneEvent())
    builder.request_id = "req_1"  # as the stream sets it when the response's head comes
    assert builder.events == 5  # a span's `silvia.turn.events`
    assert builder.build().request_id == "req_1"
    assert builder.build().citation_errors == errors


def test_the_repr_previews_at_most_60_characters_of_text() -> None:
    for answer, preview in [
        ("", ""),
        ("x" * 60, "x" * 60),
        ("x" * 61, "x" * 60 + "…"),
        ("é" * 70, "é" * 60 + "…"),
    ]:
        builder = TurnBuilder("s1")
        builder.apply(TextEvent(answer))
        builder.apply(DoneEvent())
        assert repr(builder.build()) == (
            f"Turn(session_id='s1', complete=True, text={preview!r}, citations=0, "
            "inline_citations=0)"
        ), len(answer)


# ------------------------------------------------------ rows as sent, and the server's final word


def test_the_final_word_is_read_off_the_rows_once_on_first_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []

    real = _final.final_targets

    def counted(streamed: Any, summary: Any) -> dict[str, CitationTarget | None]:
        reads.append(1)
        return real(streamed, summary)

    monkeypatch.setattr(_final, "final_targets", counted)
    builder = TurnBuilder()
    builder.apply(CitationsSummaryEvent((Citation.model_validate(row(WEB_URL, web())),)))
    turn = builder.build()
    assert reads == []  # not while building
    assert turn.target_for(WEB_URL) == WebTarget(WEB_URL)
    assert turn.sources == (WEB_URL,)
    assert turn.target_for("never cited") is None
    assert reads == [1]


# ------------------------------------------------------------------- rows as sent, as a property

SOURCES = ("silvia://your-account/checking", "silvia://your-account/cards", "https://a.test/")
# Wire targets of every kind, malformed ones, junk, and none at all (no `target` key).
_NO_TARGET = object()
wire_targets = st.one_of(st.just(_NO_TARGET), st.none(), any_target_value)
wire_rows = st.tuples(st.sampled_from(SOURCES), wire_targets)


def wire_row(source: str, target: object, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source, "cited_text": f"row {index}"}
    if target is not _NO_TARGET:
        out["target"] = target
    return out


def final_word(
    streamed: list[tuple[str, object]], summarised: list[tuple[str, object]] | None
) -> dict[str, object]:
    """What `target_for` must give, from the wire: the summary's, else the stream's."""
    out: dict[str, object] = {}
    for source, target in [*streamed, *(summarised or [])]:
        out[source] = None if target is _NO_TARGET else parse_citation_target(as_sent(target))
    return out


def as_sent(value: object) -> object:
    """`value` as it arrives: through JSON."""
    return json.loads(json.dumps(value))


A, B, C, WEB = ACCOUNT_A, ACCOUNT_B, ACCOUNT_C, WEB_URL
MARKET = "silvia://market-data/finnhub/AAPL"
BOTH = accounts((B, "plaid"), (A, "manual"))
PORTFOLIO = {"kind": "portfolio"}


@PROPERTY
@given(st.lists(wire_rows, max_size=10), st.none() | st.lists(wire_rows, max_size=6))
# Pooled accounts stream as they grew (one card, then both); the summary is final.
@example([(ACCOUNT_SOURCE, account(B, "plaid")), (ACCOUNT_SOURCE, BOTH)], [(ACCOUNT_SOURCE, BOTH)])
# The summary is the final word even when the stream said otherwise.
@example(
    [(ACCOUNT_SOURCE, account(B, "plaid")), (ACCOUNT_SOURCE, account(A, "manual"))],
    [(ACCOUNT_SOURCE, accounts((A, "manual"), (C, "snaptrade")))],
)
# Each row keeps its own target whatever the sequence: whether it follows the server's
# rule is QA's to judge. Typed then untyped; untyped then typed (after an old checkpoint).
@example([(WEB, account(A)), (WEB, web()), (WEB, account(B))], [(WEB, web())])
@example([(WEB, account(A)), (WEB, _NO_TARGET), (WEB, account(B))], [(WEB, _NO_TARGET)])
@example([(WEB, _NO_TARGET), (WEB, account(A)), (WEB, account(B))], [(WEB, account(A))])
@example(
    [(WEB, {"kind": "analysis"}), (WEB, {"kind": "portfolio"})], [(WEB, {"kind": "portfolio"})]
)
# Without a summary the last streamed row is the final word (here: the server untyped it).
@example([(ACCOUNT_SOURCE, account(A)), (WEB, web()), (ACCOUNT_SOURCE, _NO_TARGET)], None)
# A summary that names a source twice gives its last target.
@example([(WEB, web())], [(WEB, web()), (WEB, {"kind": "analysis"})])
# A source only the summary names comes last in `sources`.
@example([(WEB, web())], [(ACCOUNT_SOURCE, account(A)), (WEB, _NO_TARGET)])
@example([(WEB, web()), (MARKET, {"kind": "market_data", "ticker": "AAPL"}), (MARKET, None)], None)
def test_every_row_is_read_as_sent_and_target_for_is_the_final_word(
    streamed: list[tuple[str, object]], summarised: list[tuple[str, object]] | None
) -> None:
    builder = TurnBuilder()
    decode = event_decoder(DEFAULT_WIRE)
    sent = [wire_row(source, target, i) for i, (source, target) in enumerate(streamed)]
    for wire in sent:
        builder.apply(decode("citation", json.dumps({"citation": wire}), builder.text_length))
        builder.apply(decode("text", json.dumps({"text": "x"}), builder.text_length))
    summary_rows = [wire_row(s, t, i) for i, (s, t) in enumerate(summarised or [])]
    if summarised is not None:
        data = json.dumps({"citations": summary_rows})
        builder.apply(decode("citations_summary", data, builder.text_length))
    builder.apply(DoneEvent())
    turn = builder.build()

    assert [c.target for c in turn.inline_citations] == [
        parse_citation_target(as_sent(wire.get("target"))) for wire in sent
    ]
    assert [c.target for c in turn.citations] == [
        parse_citation_target(as_sent(wire.get("target"))) for wire in summary_rows
    ]
    assert [c.offset for c in turn.inline_citations] == list(range(len(sent)))
    expected = final_word(streamed, summarised)
    assert turn.sources == tuple(expected)
    for source in (*SOURCES, *expected, "never cited"):
        assert turn.target_for(source) == expected.get(source)
