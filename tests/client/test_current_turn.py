"""`stream.current_turn`: the turn so far while a stream is read, then the final one."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import time
from typing import Any

import pytest
import respx
from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client import DEFAULT_WIRE
from silvia_client.chat import ChatEvent, Turn, TurnBuilder, decode_event

from ..citations.strategies import PROPERTY
from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_SOURCE,
    CHAT_URL,
    FINAL_MESSAGE,
    account,
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


async def test_current_turn_is_the_turn_so_far_then_the_final_one(
    api: Api, server: respx.MockRouter
) -> None:
    parts = [
        session("s1"),
        text("Hel"),
        citation(row(ACCOUNT_SOURCE, account(ACCOUNT_A))),
        event("brand_new_event", {}),
        text("lo"),
        summary([row(ACCOUNT_SOURCE, account(ACCOUNT_A))]),
        message(FINAL_MESSAGE),
        done(),
    ]
    server.post(CHAT_URL).mock(side_effect=lambda request: sse_response(b"".join(parts)))
    client = api.client()
    applied: list[ChatEvent] = []
    seen: list[Turn] = []

    def note(stream: Any, each: ChatEvent) -> None:
        turn = stream.current_turn
        assert stream.current_turn is turn
        applied.append(each)
        expected = fields(built(applied))
        assert fields(turn) == {**expected, "request_id": "req_123"}, each.type
        assert turn.timings.first_byte is not None, "the head came: the stream stamped it"
        seen.append(turn)

    async with api.stream(client) as stream:
        assert stream.raw.current_turn.text == ""  # entered, nothing read yet
        for _ in parts:
            note(stream.raw, await stream.next())
        final = await stream.until_done()
        assert stream.raw.current_turn is final
    assert [turn.text for turn in seen] == [
        "",
        "Hel",
        "Hel",
        "Hel",
        "Hello",
        "Hello",
        "Hello",
        "Hello",
    ]
    assert [turn.complete for turn in seen] == [False] * 7 + [True]
    assert seen[2].inline_citations == final.inline_citations
    assert fields(seen[-1]) == fields(final)


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
