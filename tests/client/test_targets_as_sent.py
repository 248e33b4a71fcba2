"""Targets are read as the server sent them, live and on reload: the registry is the server's.

After a checkpoint written before targets existed the server's registry is
empty, so a fresh write of a source the checkpoint left untyped registers
normally: the same source streams untyped, then typed. The issue's first
reproduction runs against a mocked server, with the sync and the async client;
its second is an example of the stored rows' property. The reference server's own
turn is in `tests/e2e/test_targets_as_sent.py`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx
from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client.citations import AccountTarget, parse_citation_target
from silvia_client.sessions import parse_session

from ..citations.strategies import PROPERTY, any_target_value
from .conftest import Api
from .sse import (
    ACCOUNT_A,
    ACCOUNT_SOURCE,
    CHAT_URL,
    account,
    citation,
    done,
    json_response,
    row,
    session,
    sse_response,
    summary,
    text,
)

pytestmark = pytest.mark.anyio

SESSION_PATH = "/api/chat/sessions/sess_1"
ACCOUNT = AccountTarget(ACCOUNT_A, "plaid")

# The stream of reproduction 1: untyped, then typed, then a summary that types it.
UNTYPED_ROW = row(ACCOUNT_SOURCE, cited_text="Checking held $4,210.55")
TYPED_ROW = row(ACCOUNT_SOURCE, account(ACCOUNT_A), cited_text="Checking holds $4,310.55")
SUMMARY_ROWS = [
    row(ACCOUNT_SOURCE, account(ACCOUNT_A), cited_text="Checking held $4,210.55"),
    row(ACCOUNT_SOURCE, account(ACCOUNT_A), cited_text="Checking holds $4,310.55"),
]
STREAM = b"".join(
    [
        session("sess_1"),
        text("Checking held $4,210.55"),
        citation(UNTYPED_ROW),
        text(" and holds $4,310.55 now."),
        citation(TYPED_ROW),
        summary(SUMMARY_ROWS),
        done(),
    ]
)


def stored(citations: list[dict[str, Any]], inline: list[dict[str, Any]]) -> dict[str, Any]:
    """A session body whose answer stored these rows (inline rows as they streamed)."""
    return {
        "session": {"id": "sess_1", "title": "Checking"},
        "messages": [
            {"id": "m1", "role": "user", "content": "How much is in checking?"},
            {
                "id": "m2",
                "role": "assistant",
                "content": "Checking held $4,210.55 and holds $4,310.55 now.",
                "citations": citations,
                "inline_citations": inline,
            },
        ],
    }


async def test_a_source_streamed_untyped_then_typed_reads_as_sent_live_and_reloaded(
    api: Api, server: respx.MockRouter
) -> None:
    server.post(CHAT_URL).mock(side_effect=lambda r: sse_response(STREAM))
    server.get(SESSION_PATH).mock(
        return_value=json_response(stored(SUMMARY_ROWS, [UNTYPED_ROW, TYPED_ROW]))
    )
    client = api.client()
    live = await api.turn(client)
    assert live.target_for(ACCOUNT_SOURCE) == ACCOUNT
    assert [c.target for c in live.inline_citations] == [None, ACCOUNT]  # as sent
    assert [c.target for c in live.citations] == [ACCOUNT, ACCOUNT]
    assert [c.offset for c in live.inline_citations] == [
        len("Checking held $4,210.55"),
        len("Checking held $4,210.55 and holds $4,310.55 now."),
    ]
    answer = (await api.session(client, "sess_1")).messages[-1]

    def rows(citations: tuple[Any, ...]) -> list[tuple[object, ...]]:
        return [(c.source, c.title, c.cited_text, c.target) for c in citations]

    assert rows(answer.citations) == rows(live.citations)
    assert rows(answer.inline_citations) == rows(live.inline_citations)  # each as it streamed
    assert answer.target_for(ACCOUNT_SOURCE) == ACCOUNT


# ---------------------------------------------------------------------------- as a property

SAVINGS = "silvia://your-account/savings"
SOURCES = (ACCOUNT_SOURCE, "https://a.test/", SAVINGS)
_NO_TARGET = object()
stored_rows = st.lists(
    st.tuples(st.sampled_from(SOURCES), st.one_of(st.just(_NO_TARGET), any_target_value)),
    max_size=8,
)


def wire(rows: list[tuple[str, object]]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for index, (source, target) in enumerate(rows):
        one: dict[str, object] = {"source": source, "cited_text": f"row {index}"}
        if target is not _NO_TARGET:
            one["target"] = target
        out.append(one)
    return out


@PROPERTY
@given(stored_rows, stored_rows)
# Reproduction 2: an account target on citations[0] and on inline_citations[1].
@example(
    [(ACCOUNT_SOURCE, account(ACCOUNT_A))],
    [(ACCOUNT_SOURCE, _NO_TARGET), (ACCOUNT_SOURCE, account(ACCOUNT_A))],
)
# The summary names a source twice: its last target is the final word; a source only
# in the inline rows: its last one is (here, none).
@example(
    [(ACCOUNT_SOURCE, _NO_TARGET), (ACCOUNT_SOURCE, account(ACCOUNT_A))],
    [(SAVINGS, account(ACCOUNT_A)), (ACCOUNT_SOURCE, _NO_TARGET), (SAVINGS, _NO_TARGET)],
)
def test_every_stored_row_is_read_as_sent(
    citations: list[tuple[str, object]], inline: list[tuple[str, object]]
) -> None:
    body = json.loads(json.dumps(stored(wire(citations), wire(inline))))  # as it arrives
    answer = parse_session(body, "sess_1").messages[-1]
    sent = body["messages"][-1]
    assert [c.target for c in answer.citations] == [
        parse_citation_target(r.get("target")) for r in sent["citations"]
    ]
    assert [c.target for c in answer.inline_citations] == [
        parse_citation_target(r.get("target")) for r in sent["inline_citations"]
    ]
    assert (answer.citation_errors, answer.inline_citation_errors) == ((), ())  # a bad target too
    final: dict[str, object] = {}
    for r in (*sent["inline_citations"], *sent["citations"]):
        final[r["source"]] = parse_citation_target(r.get("target"))
    for source in (*SOURCES, "never cited"):
        assert answer.target_for(source) == final.get(source)
