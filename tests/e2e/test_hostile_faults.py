"""The hostile faults, over real sockets: each ends in its typed error, and nothing leaks or grows.

Each runs with the sync and the async client against the reference server on
127.0.0.1 (`serve_loopback`), and each test checks:

* the typed error, and the partial turn on it (what arrived before the fault);
* memory: the peak of what `tracemalloc` traced while the turn ran (server
  thread included) grew by less than 4 times the 1 MiB limit;
* the token in no output: the error's str and repr and every error behind it,
  the events, every log record at DEBUG, and `silvia chat`'s stdout and stderr
  (a subprocess) for the token echoes and a limit;
* no connection left open on the server, once the client is closed.

The floods that never end run with paces of 0.1 s (scenarios registered here)
and a deadline of 2 s. No test asserts how long anything took: `GUARD` only
fails a test that would otherwise hang.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

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

from ._expect import TIMEOUT, TOKEN, assert_turn_matches
from .conftest import wait_until

MODES = pytest.mark.parametrize("mode", ["sync", "async"])
MiB = 1024 * 1024
LIMIT = 1 * MiB
LIMITS = {"max_event_bytes": LIMIT, "max_response_bytes": LIMIT}
DEADLINE = 2.0
GUARD = 60.0  # seconds: "it ended", on however loaded a machine
T = TypeVar("T")

_DEMO = SCENARIOS["demo"].script
FAST = (
    Scenario(
        "e2e-trickle",
        "A byte every 0.1 s, forever, after a citation.",
        script=_DEMO,
        fault=Trickle(every=0.1, after_events=12),
    ),
    Scenario(
        "e2e-keep-alive-forever",
        "A keep-alive every 0.1 s, forever, after a citation.",
        script=_DEMO,
        fault=KeepAliveForever(every=0.1, after_events=12),
    ),
)


@pytest.fixture(scope="module")
def server() -> ReferenceServer:
    server = ReferenceServer()
    server.register(*FAST)
    return server


@pytest.fixture(scope="module")
def hostile(server: ReferenceServer) -> Iterator[LoopbackServer]:
    running = server.serve_loopback()
    running.start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _nothing_left_open(hostile: LoopbackServer) -> Iterator[None]:
    yield
    assert wait_until(lambda: hostile.open_connections == 0), (
        f"{hostile.open_connections} connection(s) left open on the server after the test"
    )


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)  # the root: httpx, httpcore and silvia_client propagate
    return caplog


@pytest.fixture(scope="module", autouse=True)
def _warm(hostile: LoopbackServer) -> None:
    """One turn and one flood per client first: what loads on first use is not traced later."""
    for mode in ("sync", "async"):
        play(mode, hostile.url, "/scenario demo")
        play(mode, hostile.url, "/scenario fault-endless-line", **LIMITS)
        fetch(mode, hostile.url, "s", {SCENARIO_HEADER: "fault-gzip-bomb"}, **LIMITS)


# ------------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    """What a call gave: its events (a turn), its error, and the peak of memory growth."""

    error: SilviaError | None
    events: list[ChatEvent] = field(default_factory=list)
    peak: int = 0


def traced(run: Callable[[], T]) -> tuple[T, int]:
    """`run()` in a thread of its own, under `tracemalloc`: its result and the peak growth.

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
    return box["value"], peak


def play(mode: str, url: str, message: str, **options: Any) -> Outcome:
    """One turn with a fresh client of `mode`, read event by event."""

    def sync() -> Outcome:
        events: list[ChatEvent] = []
        with SilviaClient(base_url=url, token=TOKEN, timeout=TIMEOUT, **options) as client:
            try:
                with client.chat.stream(message) as stream:
                    events.extend(stream)
            except SilviaError as error:
                return Outcome(error, events)
        return Outcome(None, events)

    async def run_async() -> Outcome:
        events: list[ChatEvent] = []
        async with AsyncSilviaClient(
            base_url=url, token=TOKEN, timeout=TIMEOUT, **options
        ) as client:
            try:
                async with client.chat.stream(message) as stream:
                    async for event in stream:
                        events.append(event)
            except SilviaError as error:
                return Outcome(error, events)
        return Outcome(None, events)

    outcome, peak = traced(sync if mode == "sync" else lambda: asyncio.run(run_async()))
    outcome.peak = peak
    return outcome


def fetch(mode: str, url: str, session_id: str, headers: dict[str, str], **options: Any) -> Outcome:
    """`sessions.get(session_id)` with a fresh client of `mode`, sending `headers`."""
    options.update(base_url=url, token=TOKEN, timeout=TIMEOUT, default_headers=headers)

    def sync() -> Outcome:
        with SilviaClient(**options) as client:
            try:
                client.sessions.get(session_id)
            except SilviaError as error:
                return Outcome(error)
        return Outcome(None)

    async def run_async() -> Outcome:
        async with AsyncSilviaClient(**options) as client:
            try:
                await client.sessions.get(session_id)
            except SilviaError as error:
                return Outcome(error)
        return Outcome(None)

    outcome, peak = traced(sync if mode == "sync" else lambda: asyncio.run(run_async()))
    outcome.peak = peak
    return outcome


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


def assert_bounded(outcome: Outcome) -> None:
    assert outcome.peak < 4 * LIMIT, (
        f"{outcome.peak / MiB:.1f} MiB at the peak for a {LIMIT / MiB:g} MiB limit"
    )


# ---------------------------------------------------------------------------------- the limits


LIMIT_CASES = [
    ("fault-endless-line", "max_event_bytes"),
    ("fault-endless-line", "max_response_bytes"),
    ("fault-oversized-event", "max_event_bytes"),
    ("fault-oversized-event", "max_response_bytes"),
    ("fault-gzip-bomb", "max_response_bytes"),
]


@MODES
@pytest.mark.parametrize(("name", "limit"), LIMIT_CASES, ids=["-".join(c) for c in LIMIT_CASES])
def test_a_flood_stops_at_the_limit_with_the_partial_turn_in_bounded_memory(
    mode: str,
    name: str,
    limit: str,
    server: ReferenceServer,
    hostile: LoopbackServer,
    logs: pytest.LogCaptureFixture,
) -> None:
    # Only the limit under test is small: the other stays at its default.
    outcome = play(mode, hostile.url, f"/scenario {name}", **{limit: LIMIT})
    error = outcome.error
    assert isinstance(error, StreamTooLargeError), repr(error)
    assert error.limit == LIMIT
    assert f"{limit} ({LIMIT:,} bytes)" in str(error)
    assert_partial(error, outcome, server, name)
    assert_bounded(outcome)
    assert_hidden(outcome, logs)


@MODES
def test_a_gzip_bombed_session_body_stops_at_the_limit_in_bounded_memory(
    mode: str, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    headers = {SCENARIO_HEADER: "fault-gzip-bomb"}
    outcome = fetch(mode, hostile.url, "sess_bombed", headers, max_response_bytes=LIMIT)
    error = outcome.error
    assert isinstance(error, ResponseTooLargeError), repr(error)
    assert error.limit == LIMIT
    assert error.request_id is not None
    assert error.request_id.startswith("req_")
    assert_bounded(outcome)
    assert_hidden(outcome, logs)


# -------------------------------------------------------------------------------- the deadline


@MODES
@pytest.mark.parametrize("name", [scenario.name for scenario in FAST])
def test_bytes_forever_are_ended_by_the_deadline_not_the_idle_timeout(
    mode: str,
    name: str,
    server: ReferenceServer,
    hostile: LoopbackServer,
    logs: pytest.LogCaptureFixture,
) -> None:
    # Something arrives every 0.1 s, so an idle timeout of 1 s never fires: the
    # turn would go on forever but for the deadline.
    outcome = play(
        mode, hostile.url, f"/scenario {name}", idle_timeout=1.0, deadline=DEADLINE, **LIMITS
    )
    error = outcome.error
    assert isinstance(error, StreamTimeoutError), repr(error)
    assert f"deadline of {DEADLINE:g} s passed" in str(error)
    assert "idle timeout" not in str(error)
    assert_partial(error, outcome, server, name)
    assert_bounded(outcome)
    assert_hidden(outcome, logs)


# --------------------------------------------------------------------------- the token echoed


@MODES
def test_an_error_event_echoing_the_token_never_shows_it(
    mode: str, server: ReferenceServer, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    outcome = play(mode, hostile.url, "/scenario fault-echo-token", **LIMITS)
    error = outcome.error
    assert isinstance(error, ServerStreamError), repr(error)
    turn = assert_partial(error, outcome, server, "fault-echo-token")
    assert turn.error is not None
    assert turn.error.message == "Request failed for Authorization: Bearer <token>"
    assert "Bearer <token>" in str(error)
    assert outcome.events[-1] == turn.error  # the event handed out is the blanked one
    assert_bounded(outcome)
    assert_hidden(outcome, logs)


@MODES
@pytest.mark.parametrize("endpoint", ["chat", "session"])
def test_an_error_status_echoing_the_token_never_shows_it(
    mode: str, endpoint: str, hostile: LoopbackServer, logs: pytest.LogCaptureFixture
) -> None:
    if endpoint == "chat":
        outcome = play(mode, hostile.url, "/scenario fault-echo-token-401", **LIMITS)
    else:
        headers = {SCENARIO_HEADER: "fault-echo-token-401"}
        outcome = fetch(mode, hostile.url, "sess_any", headers, **LIMITS)
    error = outcome.error
    assert isinstance(error, AuthenticationError), repr(error)
    assert error.message == "Invalid bearer token: <token>"
    assert error.body == {
        "error": {"type": "authentication_error", "message": "Invalid bearer token: <token>"}
    }
    assert "<token>" in str(error)
    assert_bounded(outcome)
    assert_hidden(outcome, logs)


# ----------------------------------------------------------------------------- `silvia chat`


def silvia_chat(url: str, message: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SILVIA_")}
    env.update(SILVIA_TOKEN=TOKEN, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "silvia_client", "chat", "--base-url", url, message],
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD,  # a guard against a hang, not a bound on speed
        check=False,
    )


CLI_CASES = [
    ("fault-echo-token", "ServerStreamError"),
    ("fault-echo-token-401", "AuthenticationError"),
    ("fault-endless-line", "StreamTooLargeError"),  # at the default max_event_bytes
]


@pytest.mark.parametrize(("name", "error"), CLI_CASES, ids=[case[0] for case in CLI_CASES])
def test_silvia_chat_ends_with_the_error_and_never_prints_the_token(
    name: str, error: str, server: ReferenceServer, hostile: LoopbackServer
) -> None:
    done = silvia_chat(hostile.url, f"/scenario {name}")
    assert done.returncode == 1, done.stderr
    assert TOKEN not in done.stdout
    assert TOKEN not in done.stderr
    assert f"silvia chat: {error}: " in done.stderr
    if "echo" in name:
        assert "<token>" in done.stderr
    expected = server.expected_turn(name, token=TOKEN)
    if expected.status == 200:  # what arrived is on stdout, as it arrived
        assert done.stdout.startswith(expected.text.split(" and ")[0])
