"""What a client leaves behind in its process: once a hostile turn and its client are gone,
the memory they held is back (issue 20, finding 7); with tracing off, the default, nothing
of OpenTelemetry is imported (in a fresh interpreter: this one may have imported it).
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import httpx

from silvia_client import SilviaClient

from .sse import SSE_HEADERS, citation, done, row, session, web

MIB = 1024 * 1024


def hostile_stream(rows: int = 200, extras: int = 400) -> bytes:
    """A stream of `rows` citations, each with its own target and `extras` keys of its own."""
    events = [session("s1")]
    for n in range(rows):
        url = f"https://example.com/{n}"
        extra = {f"extra_{n}_{k}": "v" * 100 for k in range(extras)}
        events.append(citation(row(url, web(f"{url}?{'q' * 2000}"), title="t" * 200, **extra)))
    return b"".join([*events, done()])


BODY = hostile_stream()


def _one_turn() -> int:
    answer = httpx.Response(200, headers=SSE_HEADERS, content=BODY)
    http = httpx.Client(transport=httpx.MockTransport(lambda request: answer))
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


SCRIPT = """
import asyncio, sys
import silvia_client
from silvia_client.testing import ReferenceServer

def loaded():
    traced = ("opentelemetry", "silvia_client._tracing")
    return sorted(m for m in sys.modules if m.split(".")[0] in traced or m in traced)

print(loaded())
server = ReferenceServer()
with server.client() as client:
    turn = client.chat.send("How much is in checking?")
    client.sessions.get(turn.session_id)
    copy = client.with_options(timeout=30)
    copy.chat.send("And savings?", session_id=turn.session_id)

async def main():
    async with server.async_client() as client:
        with_stream = client.chat.stream("How much is in checking?")
        async with with_stream as stream:
            turn = await stream.until_done()
        await client.sessions.get(turn.session_id)

asyncio.run(main())
print(turn.complete, loaded())
"""


def test_a_client_without_a_tracer_provider_imports_nothing_of_opentelemetry() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.splitlines() == ["[]", "True []"]
