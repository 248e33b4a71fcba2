"""The hostile faults, over real sockets: each ends in its typed error, and nothing leaks or grows.

Each case, with the sync and the async client: the typed error and the partial
turn on it; the peak of traced memory (server thread included) under 4x the
1 MiB limit; the token in no error (nor behind it), event, DEBUG log record, or
`silvia chat` output; no connection left open. Floods that never end run at a
0.05 s pace under a 0.6 s deadline; `GUARD` only fails a test that would hang.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from silvia_client import (
    AsyncSilviaClient,
    AuthenticationError,
    ServerStreamError,
    SilviaClient,
    SilviaError,
    StreamError,
    StreamTimeoutError,
    StreamTooLargeError,
    Turn,
)
from silvia_client.chat import ChatEvent, TextEvent
from silvia_client.errors import APIStatusError, ResponseTooLargeError
from silvia_client.testing import (
    SCENARIO_HEADER,
    SCENARIOS,
    KeepAliveForever,
    LoopbackServer,
    ReferenceServer,
    Scenario,
    Trickle,
)

from ..cli._cli import run
from ._expect import TIMEOUT, TOKEN, assert_turn_matches

MODES = ("sync", "async")
MiB = 1024 * 1024
LIMIT = 1 * MiB
LIMITS = {"max_event_bytes": LIMIT, "max_response_bytes": LIMIT}
PACE = 0.05  # between the bytes of a flood that never ends
IDLE_TIMEOUT = 0.25  # longer than PACE: it never fires
DEADLINE = 0.6  # what ends the flood
GUARD = 60.0  # seconds: "it ended", on however loaded a machine

DEMO = SCENARIOS["demo"].script
FAST = (
    Scenario("e2e-trickle", "A byte every 0.05 s.", DEMO, fault=Trickle(PACE, after_events=12)),
    Scenario(
        "e2e-keep-alive-forever",
        "A keep-alive every 0.05 s.",
        DEMO,
        fault=KeepAliveForever(PACE, after_events=12),
    ),
)


@pytest.fixture(scope="module")
def hostile(reference: ReferenceServer, loopback: LoopbackServer) -> LoopbackServer:
    reference.register(*FAST)  # the directory's server (conftest): no connection left open
    return loopback


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)  # the root: httpx, httpcore and silvia_client propagate
    return caplog


@pytest.fixture(scope="module", autouse=True)
def _warm(hostile: LoopbackServer) -> None:
    """One turn and one flood per client first: what loads on first use is not traced later."""
    for mode in ("sync", "async"):
        call(mode, hostile.url, "/scenario demo")
        call(mode, hostile.url, "/scenario fault-endless-line", **LIMITS)
        call(
            mode, hostile.url, None, default_headers={SCENARIO_HEADER: "fault-gzip-bomb"}, **LIMITS
        )


# ------------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    """What a call gave: its events (a turn), its error, and the peak of memory growth."""

    error: SilviaError | None
    events: list[ChatEvent] = field(default_factory=list)
    peak: int = 0


def traced(run: Callable[[], Outcome]) -> Outcome:
    """`run()` in a thread of its own, under `tracemalloc`, with the peak growth.

    The thread is joined within `GUARD` seconds, or the test fails: a hang shows
    as a failure, never as a test that does not end.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = run()
        except BaseException as error:
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        thread.start()
        thread.join(GUARD)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert not thread.is_alive(), "it did not end"
    if "error" in box:
        raise box["error"]
    outcome: Outcome = box["value"]
    outcome.peak = peak
    return outcome


def call(mode: str, url: str, message: str | None, **options: Any) -> Outcome:
    """With a fresh client of `mode`: a turn of `message` read event by event, or if
    `message` is None, `sessions.get` of a session."""
    options.update(base_url=url, token=TOKEN, timeout=TIMEOUT)
    events: list[ChatEvent] = []

    def sync() -> Outcome:
        with SilviaClient(**options) as client:
            try:
                if message is None:
                    client.sessions.get("sess_any")
                else:
                    with client.chat.stream(message) as stream:
                        events.extend(stream)
            except SilviaError as error:
                return Outcome(error, events)
        return Outcome(None, events)

    async def run_async() -> Outcome:
        async with AsyncSilviaClient(**options) as client:
            try:
                if message is None:
                    await client.sessions.get("sess_any")
                else:
                    async with client.chat.stream(message) as stream:
                        async for event in stream:
                            events.append(event)
            except SilviaError as error:
                return Outcome(error, events)
        return Outcome(None, events)

    return traced(sync if mode == "sync" else lambda: asyncio.run(run_async()))


# ------------------------------------------------------------------------------------ checking


def chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def assert_hidden(outcome: Outcome, logs: pytest.LogCaptureFixture) -> None:
    """The token is nowhere: not in the error (nor behind it), the events, or a log record."""
    shown: list[object] = [outcome.events, *map(repr, outcome.events)]
    if outcome.error is not None:
        for link in chain(outcome.error):
            shown += [str(link), repr(link), repr(link.args)]
    if isinstance(outcome.error, APIStatusError):
        shown += [repr(outcome.error.body), outcome.error.request_id]
    if isinstance(outcome.error, StreamError):
        turn = outcome.error.turn
        shown += [repr(turn), repr(turn.error), turn.text, outcome.error.session_id]
    for value in shown:
        assert TOKEN not in str(value), value
    assert logs.records, "nothing was logged at DEBUG: the check would prove nothing"
    for record in logs.records:
        assert TOKEN not in record.getMessage(), (record.name, record.getMessage())
        assert TOKEN not in repr(record.__dict__), record.name


def assert_partial(
    error: StreamError, outcome: Outcome, server: ReferenceServer, name: str
) -> Turn:
    """The error carries the turn as far as it went, which is what the events said."""
    turn = error.turn
    assert_turn_matches(turn, server.expected_turn(name, token=TOKEN), server.scenarios[name])
    assert not turn.complete
    assert turn.text  # the fault comes after text and a citation
    assert turn.inline_citations
    assert turn.text == "".join(e.text for e in outcome.events if isinstance(e, TextEvent))
    assert error.request_id is not None
    assert error.request_id.startswith("req_")
    assert error.session_id == turn.session_id
    return turn


def checked(
    logs: pytest.LogCaptureFixture, mode: str, url: str, message: str | None, **options: Any
) -> Outcome:
    """`call`, then what holds of every case: memory bounded, the token nowhere."""
    logs.clear()
    outcome = call(mode, url, message, **options)
    assert outcome.peak < 4 * LIMIT, (
        f"{outcome.peak / MiB:.1f} MiB at the peak for a {LIMIT / MiB:g} MiB limit"
    )
    assert_hidden(outcome, logs)
    return outcome


# ------------------------------------------------------------------------------------ the cases
# Each test goes through its cases with both clients in one item; a failure names the case.

LIMIT_CASES = [
    ("fault-endless-line", "max_event_bytes"),
    ("fault-endless-line", "max_response_bytes"),
    ("fault-oversized-event", "max_event_bytes"),
    ("fault-oversized-event", "max_response_bytes"),
    ("fault-gzip-bomb", "max_response_bytes"),
]


def test_a_flood_stops_at_the_limit_with_the_partial_turn_in_bounded_memory(
    reference: ReferenceServer, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    for mode in MODES:
        for name, limit in LIMIT_CASES:
            # Only the limit under test is small: the other stays at its default.
            outcome = checked(logs, mode, hostile.url, f"/scenario {name}", **{limit: LIMIT})
            error = outcome.error
            assert isinstance(error, StreamTooLargeError), (mode, name, limit, error)
            assert error.limit == LIMIT
            assert f"{limit} ({LIMIT:,} bytes)" in str(error)
            assert_partial(error, outcome, reference, name)
        headers = {SCENARIO_HEADER: "fault-gzip-bomb"}
        outcome = checked(
            logs, mode, hostile.url, None, default_headers=headers, max_response_bytes=LIMIT
        )
        error = outcome.error
        assert isinstance(error, ResponseTooLargeError), (mode, error)
        assert error.limit == LIMIT
        assert (error.request_id or "").startswith("req_")


def test_bytes_forever_are_ended_by_the_deadline_not_the_idle_timeout(
    reference: ReferenceServer, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    # Something arrives every PACE, so the idle timeout never fires: the turn
    # would go on forever but for the deadline.
    options = {"idle_timeout": IDLE_TIMEOUT, "deadline": DEADLINE, **LIMITS}
    for mode in MODES:
        for name in (scenario.name for scenario in FAST):
            outcome = checked(logs, mode, hostile.url, f"/scenario {name}", **options)
            error = outcome.error
            assert isinstance(error, StreamTimeoutError), (mode, name, error)
            assert f"deadline of {DEADLINE:g} s passed" in str(error)
            assert "idle timeout" not in str(error)
            assert_partial(error, outcome, reference, name)


def test_an_echoed_token_is_never_shown(
    reference: ReferenceServer, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    blanked = "Invalid bearer token: <token>"
    for mode in MODES:
        outcome = checked(logs, mode, hostile.url, "/scenario fault-echo-token", **LIMITS)
        error = outcome.error
        assert isinstance(error, ServerStreamError), (mode, error)
        turn = assert_partial(error, outcome, reference, "fault-echo-token")
        assert turn.error is not None
        assert turn.error.message == "Request failed for Authorization: Bearer <token>"
        assert "Bearer <token>" in str(error)
        assert outcome.events[-1] == turn.error  # the event handed out is the blanked one
        # An error status echoing it, on either endpoint.
        headers = {SCENARIO_HEADER: "fault-echo-token-401"}
        for message in ("/scenario fault-echo-token-401", None):
            outcome = checked(logs, mode, hostile.url, message, default_headers=headers, **LIMITS)
            error = outcome.error
            assert isinstance(error, AuthenticationError), (mode, message, error)
            assert error.message == blanked
            assert error.body == {"error": {"type": "authentication_error", "message": blanked}}
            assert "<token>" in str(error)


# ----------------------------------------------------------------------------- `silvia chat`


def test_silvia_chat_ends_with_the_error_and_never_prints_the_token(
    reference: ReferenceServer,
    hostile: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key in [key for key in os.environ if key.startswith("SILVIA_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for name, error in {
        "fault-echo-token": "ServerStreamError",
        "fault-echo-token-401": "AuthenticationError",
        "fault-endless-line": "StreamTooLargeError",  # at the default max_event_bytes
    }.items():
        status, out, err = run(["chat", "--base-url", hostile.url, "/scenario " + name], capsys)
        assert status == 1, (name, err)
        assert TOKEN not in out + err, name
        assert f"silvia chat: {error}: " in err, (name, err)
        if "echo" in name:
            assert "<token>" in err, name
        expected = reference.expected_turn(name, token=TOKEN)
        if expected.status == 200:  # what arrived is on stdout, as it arrived
            assert out.startswith(expected.text.split(" and ")[0]), name
