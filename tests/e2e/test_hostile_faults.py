"""The hostile faults over real sockets: nothing hangs, leaks or grows.

`test_scenarios.py` plays each fault once for its typed error and partial turn; here
each hostile case, with the sync and the async client, runs in a thread under
`tracemalloc` (the server's thread included): the typed error ends it, the peak stays
under 4x the 1 MiB limit, and the token is in no error (nor behind it), event or DEBUG
log record. Bytes that never stop (a byte, or a keep-alive, every 0.05 s) are ended by
the 0.6 s deadline, never by the 0.25 s idle timeout; `GUARD` only fails a test that
would hang. Then `silvia chat`: the echoed token never printed, what arrived on stdout.
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

MiB = 1024 * 1024
LIMIT = 1 * MiB
LIMITS = {"max_event_bytes": LIMIT, "max_response_bytes": LIMIT}
PACE = 0.05  # between the bytes of a flood that never ends
FOREVER = {"idle_timeout": 0.25, "deadline": 0.6, **LIMITS}  # the idle timeout never fires
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

# (scenario, on the session GET rather than the chat, client options, the typed error).
CASES: list[tuple[str, bool, dict[str, Any], type[SilviaError]]] = [
    ("fault-endless-line", False, {"max_event_bytes": LIMIT}, StreamTooLargeError),
    ("fault-endless-line", False, {"max_response_bytes": LIMIT}, StreamTooLargeError),
    ("fault-oversized-event", False, {"max_event_bytes": LIMIT}, StreamTooLargeError),
    ("fault-oversized-event", False, {"max_response_bytes": LIMIT}, StreamTooLargeError),
    ("fault-gzip-bomb", False, {"max_response_bytes": LIMIT}, StreamTooLargeError),
    ("fault-gzip-bomb", True, {"max_response_bytes": LIMIT}, ResponseTooLargeError),
    ("e2e-trickle", False, FOREVER, StreamTimeoutError),
    ("e2e-keep-alive-forever", False, FOREVER, StreamTimeoutError),
    ("fault-echo-token", False, LIMITS, ServerStreamError),
    ("fault-echo-token-401", False, LIMITS, AuthenticationError),
    ("fault-echo-token-401", True, LIMITS, AuthenticationError),
]


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
        call(mode, hostile.url, "demo", False)
        call(mode, hostile.url, "fault-endless-line", False, **LIMITS)
        call(mode, hostile.url, "fault-gzip-bomb", True, **LIMITS)


@dataclass
class Outcome:
    """What a call gave: its events (a turn), its error, and the peak of memory growth."""

    error: SilviaError | None
    events: list[ChatEvent] = field(default_factory=list)
    peak: int = 0


def traced(run: Callable[[], Outcome]) -> Outcome:
    """`run()` in a thread of its own, under `tracemalloc`, with the peak growth; joined
    within `GUARD` seconds, or the test fails (a hang fails, never runs on)."""
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


def call(mode: str, url: str, scenario: str, reload: bool, **options: Any) -> Outcome:
    """With a fresh client of `mode`, `scenario`'s turn read event by event, or (`reload`)
    a `sessions.get` answered by it."""
    headers = {SCENARIO_HEADER: scenario}
    options.update(base_url=url, token=TOKEN, timeout=TIMEOUT, default_headers=headers)
    events: list[ChatEvent] = []

    def sync() -> Outcome:
        with SilviaClient(**options) as client:
            try:
                if reload:
                    client.sessions.get("sess_any")
                else:
                    with client.chat.stream("hi") as stream:
                        events.extend(stream)
            except SilviaError as error:
                return Outcome(error, events)
        return Outcome(None, events)

    async def run_async() -> Outcome:
        async with AsyncSilviaClient(**options) as client:
            try:
                if reload:
                    await client.sessions.get("sess_any")
                else:
                    async with client.chat.stream("hi") as stream:
                        async for event in stream:
                            events.append(event)
            except SilviaError as error:
                return Outcome(error, events)
        return Outcome(None, events)

    return traced(sync if mode == "sync" else lambda: asyncio.run(run_async()))


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


def test_each_hostile_case_ends_typed_in_bounded_memory_and_never_shows_the_token(
    reference: ReferenceServer, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    for mode in ("sync", "async"):
        for name, reload, options, expected in CASES:
            case = (mode, name, "reload" if reload else "chat", *options)
            logs.clear()
            outcome = call(mode, hostile.url, name, reload, **options)
            error = outcome.error
            assert isinstance(error, expected), (case, error)
            assert outcome.peak < 4 * LIMIT, (case, f"{outcome.peak / MiB:.1f} MiB at the peak")
            assert_hidden(outcome, logs)
            assert (error.request_id or "").startswith("req_"), case
            if isinstance(error, StreamTimeoutError):  # bytes kept coming: the deadline ended it
                assert "deadline of 0.6 s passed" in str(error), case
                assert "idle timeout" not in str(error), case
            if isinstance(error, StreamError):  # the turn as far as it went, as the events said
                turn = error.turn
                expected_turn = reference.expected_turn(name, token=TOKEN)
                assert_turn_matches(turn, expected_turn, reference.scenarios[name])
                assert turn.text, case  # the fault comes after text and a citation
                assert turn.inline_citations, case
                events = outcome.events
                assert turn.text == "".join(e.text for e in events if isinstance(e, TextEvent))
                assert error.session_id == turn.session_id, case
            if "echo" in name:  # what the server echoed, blanked, in what is handed out
                assert "<token>" in str(error), case
                if isinstance(error, ServerStreamError):
                    assert outcome.events[-1] == error.turn.error, case


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
