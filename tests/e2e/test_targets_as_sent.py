"""Turns whose rows of one source carry different targets, as a conforming server sends them.

The registry is the server's: it pools accounts, untypes a source on a
disagreement, and (after a checkpoint written before targets existed) types a
source afresh. Each such library turn, over real sockets with the sync and the
async client: the live rows, the summary and the reload each equal what was
sent, and `target_for` is the server's final word, live and reloaded.
"""

from __future__ import annotations

import pytest

from silvia_client import AsyncSilviaClient, Turn
from silvia_client.sessions import Message
from silvia_client.testing import LoopbackServer, ReferenceServer

from ._expect import TIMEOUT, TOKEN, answer, wire_row
from .conftest import make_client

CHECKING = "silvia://your-account/checking"
CARDS = "silvia://your-account/credit-card"
IRA = "https://www.irs.gov/retirement-plans/ira-contribution-limits"

# scenario: (source, kinds streamed, kinds in the summary), as the doc's rules imply.
DIFFERING = {
    "checkpoint-fresh-write": (CHECKING, [None, "account"], ["account", "account"]),
    "pooling": (CARDS, ["account", "accounts"], ["accounts", "accounts"]),
    "untyped-ids-then-none": (CARDS, ["account", None], [None, None]),
    "untyped-web-vs-tax": (IRA, ["web", None], [None, None]),
}


def kinds(rows: tuple[object, ...]) -> list[object]:
    return [getattr(getattr(row, "target", None), "kind", None) for row in rows]


def check(reference: ReferenceServer, name: str, live: Turn, stored: Message) -> None:
    source, streamed, summarised = DIFFERING[name]
    expected = reference.expected_turn(name)
    # Live: every row exactly as sent, each with its own target.
    assert [wire_row(c) for c in live.inline_citations] == list(expected.inline_citations)
    assert [wire_row(c) for c in live.citations] == list(expected.citations)
    assert kinds(live.inline_citations) == streamed
    assert kinds(live.citations) == summarised
    # Reloaded: the same rows, inline ones with the targets they streamed with.
    assert [wire_row(c) for c in stored.inline_citations] == list(expected.inline_citations)
    assert [wire_row(c) for c in stored.citations] == list(expected.citations)
    # The final word, live and reloaded: the summary's, the server's own final target.
    final = live.target_for(source)
    assert (None if final is None else final.to_wire()) == expected.target_for(source)
    assert stored.target_for(source) == final


@pytest.mark.parametrize("name", list(DIFFERING))
def test_rows_as_sent_sync(name: str, reference: ReferenceServer, loopback: LoopbackServer) -> None:
    with make_client(loopback.url) as client:
        with client.chat.stream(f"/scenario {name}") as stream:
            live = stream.until_done()
        assert live.session_id is not None
        stored = answer(client.sessions.get(live.session_id))
    check(reference, name, live, stored)


@pytest.mark.parametrize("name", list(DIFFERING))
@pytest.mark.anyio
async def test_rows_as_sent_async(
    name: str, reference: ReferenceServer, loopback: LoopbackServer
) -> None:
    async with AsyncSilviaClient(base_url=loopback.url, token=TOKEN, timeout=TIMEOUT) as client:
        async with client.chat.stream(f"/scenario {name}") as stream:
            live = await stream.until_done()
        assert live.session_id is not None
        stored = answer(await client.sessions.get(live.session_id))
    check(reference, name, live, stored)


def test_the_resumed_turn_reads_typed_where_the_server_typed_it(loopback: LoopbackServer) -> None:
    # The third reproduction, in its own words.
    with make_client(loopback.url) as client:
        with client.chat.stream("/scenario checkpoint-fresh-write") as stream:
            turn = stream.until_done()
        assert turn.session_id is not None
        stored = answer(client.sessions.get(turn.session_id))
    for rows in (turn, stored):
        assert rows.citations[0].target is not None
        assert rows.citations[0].target.kind == "account"
        assert rows.inline_citations[0].target is None
        assert rows.inline_citations[1].target == rows.citations[0].target
        assert rows.target_for(CHECKING) == rows.citations[0].target
