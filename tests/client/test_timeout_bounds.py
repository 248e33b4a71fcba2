"""`timeout` bounds the wait for a response's head; `idle_timeout`, the gaps between events.

Servers on 127.0.0.1 (`tests.hostile`) accept and never answer, or send the
head and then pause, so the real HTTP stack waits as it would for a user. The
only time bound is a generous one that proves "does not wait for the idle
timeout" (the bug: `SilviaClient(timeout=2).chat.send(...)` waited 90 s). Each
client here has a deadline of 20 s, so the bug fails the test in 20 s, naming
the deadline, not in 90. The two phases of a call's reads, without I/O: test_deadline.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from silvia_client.chat import TextEvent
from silvia_client.errors import APITimeoutError, StreamTimeoutError

from ..hostile import SSE, Connection, HostileServer, Request, chunk, head
from .conftest import Api, by_case
from .sse import done, session, text

pytestmark = pytest.mark.anyio

QUICK = 10.0  # seconds: far below the 90 s idle timeout the bug waited
DEADLINE = 20.0  # the test's own guard: the bug ends here, with the deadline's error
GUARD = 30.0  # how long the silent server holds a connection before giving up on it


def silent(request: Request, connection: Connection) -> None:
    connection.wait_for_close(GUARD)  # reads the request, never answers


def pausing(pause: float) -> Callable[[Request, Connection], None]:
    """The head and a first event at once, then `pause` seconds of silence, then the rest."""

    def respond(request: Request, connection: Connection) -> None:
        if not connection.send(head(200, SSE, chunked=True) + chunk(session("s1") + text("Hel"))):
            return
        if connection.sleep(pause):
            connection.send(chunk(text("lo")) + chunk(done()) + chunk(b""))

    return respond


async def test_a_request_waits_for_the_head_no_longer_than_timeout(api: Api) -> None:
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("chat", {"timeout": 0.2}, {}),
        ("chat", {"timeout": httpx.Timeout(10.0, read=0.2)}, {}),  # the read phase
        ("chat", {}, {"timeout": 0.2}),  # the call's own, over the default 60 s read
        ("session", {"timeout": 0.2, "retry_backoff": 0.01}, {}),
    ]
    with HostileServer(silent) as hostile:
        for endpoint, options, per_call in cases:
            case = (endpoint, options, per_call)
            client = api.client(base_url=hostile.url, deadline=DEADLINE, **options)
            sent = len(hostile.requests)
            start = time.monotonic()
            with pytest.raises(APITimeoutError) as caught:
                await api.request(client, endpoint, **per_call)
            elapsed = time.monotonic() - start
            assert "deadline" not in str(caught.value), case
            assert elapsed < QUICK, case
            if endpoint == "chat":  # the message went out: it is never sent twice
                assert len(hostile.requests) - sent == 1, case
            else:
                # A GET is retried, each attempt bounded by `timeout`: under load the last
                # attempt's connect can time out before the server sees its request.
                assert 2 <= len(hostile.requests) - sent <= 3, case


async def test_after_the_head_a_pause_is_the_idle_timeouts_to_judge(api: Api) -> None:
    # A model that thinks for a while mid-answer: 0.5 s of silence, past the 0.2 s
    # `timeout`, within the 5 s `idle_timeout`; then 3 s of it, past a 0.2 s one.
    with by_case({"thinks": pausing(0.5), "stalls": pausing(3.0)}) as hostile:
        thinks = {"x-case": "thinks"}
        client = api.client(base_url=hostile.url, timeout=0.2, idle_timeout=5.0)
        turn = await api.turn(client, extra_headers=thinks)
        assert turn.complete
        assert turn.text == "Hello"
        client = api.client(base_url=hostile.url, timeout=5.0, idle_timeout=0.2)
        events, error = await api.read(client, extra_headers={"x-case": "stalls"})
    assert isinstance(error, StreamTimeoutError)
    assert "idle timeout (0.2 s)" in str(error)
    assert error.turn.text == "Hel"  # the partial turn
    assert [type(e) for e in events][-1] is TextEvent
