"""No server data outlives its turn (issue 20, finding 7): nothing at module level keys on what
a server sent (whole targets, rows' key lists), so once a hostile turn and its client are gone,
the memory they held is back. The turn is built by code both clients share: the sync
client reads it."""

from __future__ import annotations

import json
import tracemalloc

import httpx

from silvia_client import SilviaClient

MIB = 1024 * 1024


def hostile_stream(rows: int = 200, extras: int = 400) -> bytes:
    """A stream of `rows` citations, each with its own target and `extras` keys of its own."""
    events = [b'event: session\ndata: {"sessionId":"s1"}\n\n']
    for n in range(rows):
        row = {
            "source": f"https://example.com/{n}",
            "title": "t" * 200,
            "target": {"kind": "web", "url": f"https://example.com/{n}?{'q' * 2000}"},
            **{f"extra_{n}_{k}": "v" * 100 for k in range(extras)},
        }
        data = json.dumps({"citation": row}).encode()
        events.append(b"event: citation\ndata: " + data + b"\n\n")
    events.append(b"event: done\ndata: {}\n\n")
    return b"".join(events)


BODY = hostile_stream()


def _handler(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=BODY)


def _one_turn() -> int:
    http = httpx.Client(transport=httpx.MockTransport(_handler))
    with SilviaClient(base_url="https://silvia.test", token="t", http_client=http) as client:
        turn = client.chat.send("hi")
        assert len(turn.inline_citations) == 200
        held = tracemalloc.get_traced_memory()[0]
    http.close()
    return held


def test_a_hostile_turn_leaves_nothing_behind_once_it_is_gone() -> None:
    _one_turn()  # imports, pydantic's schemas, httpx's own first-use state: not the turn's
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = _one_turn()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held - before > 20 * MIB  # the turn did hold the server's data
    assert after - before < 3 * MIB, f"{(after - before) / MIB:.1f} MiB still held"
