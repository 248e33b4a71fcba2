"""`Turn`: what a turn assembles, the turn so far (`stream.current_turn`), its timings, its
reprs, and every row as the server sent it, live and on reload (after an old checkpoint a source
may stream untyped, then typed); `target_for`, the final word.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import pickle
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import respx
from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client import DEFAULT_WIRE
from silvia_client.chat import (
    ChatEvent,
    CitationEvent,
    DoneEvent,
    Timings,
    Turn,
    TurnBuilder,
    decode_event,
)
from silvia_client.chat.events import CitationsSummaryEvent, TextEvent, event_decoder
from silvia_client.citations import (
    AccountTarget,
    Citation,
    CitationTarget,
    InlineCitation,
    RowError,
    WebTarget,
    _targets,
    parse_citation_target,
)
from silvia_client.errors import StreamDisconnectedError
from silvia_client.sessions import parse_session

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
    Body,
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


async def test_a_turn_assembles_what_arrived_and_current_turn_is_it_so_far(
    api: Api, server: respx.MockRouter
) -> None:
    parts = [
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
    ]
    server.post(CHAT_URL).mock(side_effect=lambda request: sse_response(b"".join(parts)))
    applied: list[ChatEvent] = []
    seen: list[Turn] = []
    async with api.stream(api.client()) as stream:
        assert stream.raw.current_turn.text == ""  # entered, nothing read yet
        for _ in parts:
            applied.append(await stream.next())
            so_far = stream.raw.current_turn
            assert stream.raw.current_turn is so_far
            assert fields(so_far) == {**fields(built(applied)), "request_id": "req_123"}
            assert so_far.timings.first_byte is not None, "the head came: the stream stamped it"
            seen.append(so_far)
        turn = await stream.until_done()
        assert stream.raw.current_turn is turn
    assert [len(so_far.text) for so_far in seen] == [0, 0, 9, 9, 13, *[27] * 8]
    assert [so_far.complete for so_far in seen] == [False] * 12 + [True]
    assert seen[3].inline_citations == turn.inline_citations[:2]
    assert fields(seen[-1]) == fields(turn)
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
    # The session id is the event's, else the one passed.
    turn = await turn_of(api, server, session("sess_new"), text("x"), done(), session_id="old")
    assert turn.session_id == "sess_new"
    turn = await turn_of(api, server, text("x"), done(), session_id="sess_given")
    assert turn.session_id == "sess_given"
    turn = await turn_of(api, server, done())
    assert turn.session_id is None
    assert (turn.text, turn.citations, turn.inline_citations, turn.message) == ("", (), (), None)
    assert turn.complete


def test_the_builder_counts_what_it_applies_and_carries_the_request_id_and_timings() -> None:
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
    # Each timing is its stamp less the start.
    assert Turn().timings == Timings(first_byte=None, first_text=None, done=None)  # by hand
    builder = TurnBuilder()
    assert builder.timings() == Timings()  # no start: nothing to count from
    builder.started_at = 100.0
    assert builder.timings() == Timings()  # started, no milestone yet
    builder.first_byte_at = 100.25
    assert builder.timings() == Timings(first_byte=0.25)
    builder.first_text_at, builder.done_at = 101.0, 102.5
    assert builder.timings() == Timings(first_byte=0.25, first_text=1.0, done=2.5)
    assert builder.build().timings == Timings(first_byte=0.25, first_text=1.0, done=2.5)


VENDOR = "plaid-vendor-name"


def test_the_repr_previews_60_characters_and_names_a_rows_extras_never_their_values() -> None:
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
    plain = InlineCitation.model_validate({"source": "s", "title": "T", "offset": 4})
    assert repr(plain) == (
        "InlineCitation(source='s', title='T', cited_text=None, target=None, offset=4)"
    )
    # A row's extras are whatever the server added (issue 20, finding 12): no repr or str
    # shows a provider at any depth in them.
    target = {"kind": "account", "accountRef": {"accountId": "acc_1", "provider": VENDOR}}
    extras: list[dict[str, Any]] = [
        {"provider": VENDOR},
        {"account": {"provider": VENDOR}},
        {"rows": [{"meta": {"provider": VENDOR}}]},
        {"note": f"provider={VENDOR}"},
    ]
    for extra in extras:
        wire = {"source": "s", "title": "t", "target": target, **extra}
        inline = InlineCitation.model_validate({**wire, "offset": 0})
        cited = Citation.model_validate(wire)
        builder = TurnBuilder("s1")
        builder.apply(CitationEvent(inline))
        turn = builder.build()
        stored = {"id": "m", "role": "assistant", "content": "x", "citations": [wire]}
        history = parse_session({"messages": [stored]}, "s1")
        shown = [repr(inline), str(inline), repr(cited), str(cited), repr(CitationEvent(inline))]
        shown += [repr(turn.inline_citations), repr(turn), repr(history), repr(history.messages)]
        assert [text_ for text_ in shown if VENDOR in text_] == []
        assert f"extra_keys=({next(iter(extra))!r},)" in repr(inline)


def fields(turn: Turn) -> dict[str, Any]:
    """Every field of a turn but its timings (clock readings), for comparing two turns."""
    return {
        f.name: getattr(turn, f.name)
        for f in dataclasses.fields(Turn)
        if f.name not in ("timings", "_targets")
    }


def built(events: list[ChatEvent]) -> Turn:
    """What a fresh builder fed `events` builds: the reference `current_turn` is held to."""
    builder = TurnBuilder()
    for each in events:
        builder.apply(each)
    return builder.build()


# One event of each kind (a summary with an unreadable row, an unknown and a malformed
# event among them), as (name, data) on the wire; text events are drawn separately.
KINDS: list[tuple[str, str]] = [
    ("session", json.dumps({"sessionId": "s1"})),
    ("citation", json.dumps({"citation": row(ACCOUNT_SOURCE, account(ACCOUNT_A))})),
    ("citation", json.dumps({"citation": row("https://example.com/a", web())})),
    ("citations_summary", json.dumps({"citations": [row(ACCOUNT_SOURCE), {"source": 7}]})),
    ("message", json.dumps(FINAL_MESSAGE)),
    ("brand_new_event", "{}"),
    ("citation", "{not json"),
    ("error", json.dumps({"error": {"type": "overloaded_error", "message": "busy"}})),
    ("done", "{}"),
]
TEXT_HEL, TEXT_LO = (("text", json.dumps({"text": delta})) for delta in ("Hel", "lo"))
wire_events = st.lists(
    st.one_of(
        st.text(max_size=5).map(lambda delta: ("text", json.dumps({"text": delta}))),
        st.sampled_from(KINDS),
    ),
    max_size=25,
)


@PROPERTY
@given(wire_events, st.lists(st.booleans(), min_size=25, max_size=25))
@example(
    [TEXT_HEL, KINDS[1], TEXT_LO, KINDS[5], KINDS[6], KINDS[3], KINDS[4], KINDS[8]],
    [False] * 25,
)
def test_after_each_event_the_snapshot_is_what_a_fresh_builder_builds(
    wire: list[tuple[str, str]], read_now: list[bool]
) -> None:
    builder = TurnBuilder()
    applied: list[ChatEvent] = []
    taken: list[tuple[Turn, dict[str, Any]]] = []  # snapshots, some read only at the end
    for index, (name, data) in enumerate(wire):
        builder.apply(decode_event(name, data, DEFAULT_WIRE, builder.text_length))
        applied.append(decode_event(name, data, DEFAULT_WIRE, builder.text_length))
        snapshot = builder.snapshot()
        assert builder.snapshot() is snapshot, "the same object until an event changes the turn"
        expected = fields(built(applied))
        if read_now[index]:
            assert fields(snapshot) == expected, f"after {name!r}"
        taken.append((snapshot, expected))
    for number, (old, expected) in enumerate(taken):
        assert fields(old) == expected, f"the snapshot after event {number}, read late"
    assert fields(builder.build()) == fields(built(applied))


def test_the_turn_so_far_pickles_and_copies_as_a_plain_turn() -> None:
    # Every field away from its default, so that a field the copy left out shows.
    for wire in ([*KINDS[:-2], TEXT_HEL, KINDS[-1]], [TEXT_HEL, KINDS[-2]]):
        builder = TurnBuilder("s0")
        builder.started_at = builder.first_byte_at = time.perf_counter()
        builder.request_id = "req_1"
        for name, data in wire:
            builder.apply(decode_event(name, data, DEFAULT_WIRE, builder.text_length))
        snapshot = builder.snapshot()
        for again in (pickle.loads(pickle.dumps(snapshot)), copy.copy(snapshot)):
            assert type(again) is Turn
            assert fields(again) == fields(snapshot) == fields(builder.build())
            assert again.timings == snapshot.timings == builder.timings()
        assert b"_source" not in pickle.dumps(snapshot)


def test_each_copied_field_defaults_as_a_turns_and_reads_its_own_list() -> None:
    # The fields are built at import, before mutmut forks: `tools/mutation.py` runs this
    # afresh (its pickling, above, runs under mutmut).
    builder = TurnBuilder()
    for name, data in [*KINDS, TEXT_HEL]:
        builder.apply(decode_event(name, data, DEFAULT_WIRE, builder.text_length))
    snapshot = builder.snapshot()
    assert fields(snapshot) == fields(builder.build())  # each field reads its own list
    defaults = {f.name: f.default for f in dataclasses.fields(Turn)}
    so_far = {f.name: f.default for f in dataclasses.fields(snapshot) if f.name in defaults}
    assert so_far == defaults


PAUSE = 0.05  # seconds the server waits before a chunk; a floor the timings must show


class PacedBody(Body):
    """`Body`, waiting `PAUSE` before each chunk whose index is in `pauses`."""

    def __init__(self, chunks: list[bytes], pauses: set[int]) -> None:
        super().__init__(chunks)
        self.pauses = pauses

    def __iter__(self) -> Iterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index in self.pauses:
                time.sleep(PAUSE)
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index in self.pauses:
                await asyncio.sleep(PAUSE)
            yield chunk


async def test_each_milestone_is_stamped_in_order_and_shows_the_waits(
    api: Api, server: respx.MockRouter
) -> None:
    # The server pauses before the first text, before the second and before `done`: a
    # first_text moved to the second text, or a done stamped early, shows less than 2 pauses.
    body = PacedBody([session("s1"), text("Hi"), text(" there"), done()], {1, 2, 3})
    server.post(CHAT_URL).mock(return_value=sse_response(body))
    timings = (await api.turn(api.client())).timings
    assert timings.first_byte is not None
    assert timings.first_text is not None
    assert timings.done is not None
    assert 0 <= timings.first_byte <= timings.first_text <= timings.done
    assert timings.first_text - timings.first_byte >= PAUSE * 0.9
    assert timings.done - timings.first_text >= 2 * PAUSE * 0.9
    # A turn without text lacks only its first_text.
    server.post(CHAT_URL).mock(return_value=sse_response(Body([session("s1"), done()])))
    timings = (await api.turn(api.client())).timings
    assert timings.first_text is None
    assert timings.first_byte is not None
    assert timings.done is not None
    # The partial turn of a broken stream carries its timings, but no done.
    broken = Body([session("s1"), text("Hi")], fail=httpx.RemoteProtocolError("peer closed"))
    server.post(CHAT_URL).mock(return_value=sse_response(broken))
    _events, error = await api.read(api.client())
    assert isinstance(error, StreamDisconnectedError)
    timings = error.turn.timings
    assert timings.first_byte is not None
    assert timings.first_text is not None
    assert timings.done is None


CARDS = "silvia://your-account/cards"
SOURCES = (ACCOUNT_SOURCE, CARDS, "https://a.test/")


def stored(citations: list[dict[str, Any]], inline: list[dict[str, Any]]) -> dict[str, Any]:
    """A session body whose answer stored these rows (inline rows as they streamed)."""
    answer = {"id": "m2", "role": "assistant", "content": "x"}
    return {"messages": [{**answer, "citations": citations, "inline_citations": inline}]}


def test_the_final_word_is_read_off_the_rows_once_on_first_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []
    real = _targets.final_targets

    def counted(streamed: Any, summary: Any) -> dict[str, CitationTarget | None]:
        reads.append(1)
        return real(streamed, summary)

    monkeypatch.setattr(_targets, "final_targets", counted)
    builder = TurnBuilder()
    builder.apply(CitationsSummaryEvent((Citation.model_validate(row(WEB_URL, web())),)))
    turn = builder.build()
    (answer,) = parse_session(stored([row(WEB_URL, web())], []), "s1").messages
    assert reads == []  # not while building, nor while reading a session
    for read, one in enumerate((turn, answer), start=1):
        assert one.target_for(WEB_URL) == WebTarget(WEB_URL)
        assert one.target_for("never cited") is None
        assert reads == [1] * read
    assert turn.sources == (WEB_URL,)


# Wire targets of every kind, malformed ones, junk, and none at all (no `target` key).
_NO_TARGET = object()
wire_rows = st.tuples(st.sampled_from(SOURCES), st.one_of(st.just(_NO_TARGET), any_target_value))


def wire_row(source: str, target: object, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source, "cited_text": f"row {index}"}
    if target is not _NO_TARGET:
        out["target"] = target
    return out


def as_sent(value: object) -> object:
    """`value` as it arrives: through JSON."""
    return json.loads(json.dumps(value))


A, B, C, WEB = ACCOUNT_A, ACCOUNT_B, ACCOUNT_C, WEB_URL
MARKET = "silvia://market-data/finnhub/AAPL"
BOTH = accounts((B, "plaid"), (A, "manual"))


@PROPERTY
@given(st.lists(wire_rows, max_size=10), st.none() | st.lists(wire_rows, max_size=6))
# Pooled accounts stream as they grew (one card, then both); the summary is final.
@example([(ACCOUNT_SOURCE, account(B, "plaid")), (ACCOUNT_SOURCE, BOTH)], [(ACCOUNT_SOURCE, BOTH)])
# The summary is the final word even when the stream said otherwise.
@example(
    [(ACCOUNT_SOURCE, account(B, "plaid")), (ACCOUNT_SOURCE, account(A, "manual"))],
    [(ACCOUNT_SOURCE, accounts((A, "manual"), (C, "snaptrade")))],
)
# The issue's reproductions: untyped then typed inline, typed in the summary (one row or both).
@example(
    [(ACCOUNT_SOURCE, _NO_TARGET), (ACCOUNT_SOURCE, account(A))], [(ACCOUNT_SOURCE, account(A))]
)
@example(
    [(ACCOUNT_SOURCE, _NO_TARGET), (ACCOUNT_SOURCE, account(A))],
    [(ACCOUNT_SOURCE, account(A)), (ACCOUNT_SOURCE, account(A))],
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
# A summary that names a source twice gives its last target; a source only the stream
# names, its last one (here, none).
@example([(WEB, web())], [(WEB, web()), (WEB, {"kind": "analysis"})])
@example(
    [(CARDS, account(A)), (ACCOUNT_SOURCE, _NO_TARGET), (CARDS, _NO_TARGET)],
    [(ACCOUNT_SOURCE, _NO_TARGET), (ACCOUNT_SOURCE, account(A))],
)
# A source only the summary names comes last in `sources`.
@example([(WEB, web())], [(ACCOUNT_SOURCE, account(A)), (WEB, _NO_TARGET)])
@example([(WEB, web()), (MARKET, {"kind": "market_data", "ticker": "AAPL"}), (MARKET, None)], None)
def test_every_row_is_read_as_sent_live_and_stored_and_target_for_is_the_final_word(
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
    (answer,) = parse_session(as_sent(stored(summary_rows, sent)), "s1").messages
    # The final word, from the wire: the summary's, else the stream's.
    expected: dict[str, object] = {}
    for wire in (*sent, *summary_rows):
        expected[wire["source"]] = parse_citation_target(as_sent(wire.get("target")))
    assert turn.sources == tuple(expected)
    assert [c.offset for c in turn.inline_citations] == list(range(len(sent)))
    for got in (turn, answer):
        assert [c.target for c in got.inline_citations] == [
            parse_citation_target(as_sent(wire.get("target"))) for wire in sent
        ]
        assert [c.target for c in got.citations] == [
            parse_citation_target(as_sent(wire.get("target"))) for wire in summary_rows
        ]
        assert got.citation_errors == ()  # a bad target too
        for source in (*SOURCES, *expected, "never cited"):
            assert got.target_for(source) == expected.get(source), type(got).__name__
    assert answer.inline_citation_errors == ()
