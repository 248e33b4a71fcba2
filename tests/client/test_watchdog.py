"""The watchdog that fires every client's deadline alarms (in time order, never a cancelled
one, on past one that fails; idle threads end; a forked child starts afresh), and the guards
it fires: a stop shuts its response's socket down, and a socket that refuses is only logged,
by the error's type. Each test has a watchdog of its own (the process's, `thread_timer`, is
shared); the waits for alarms are generous bounds that only prove "does not hang".
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable

import httpx
import pytest

from silvia_client._deadline import Guard, Lifecycle, _Watchdog

from .conftest import no_alarm

HANG = 5.0  # seconds: far past any alarm here


def test_alarms_fire_in_time_order_never_a_cancelled_one_on_past_one_that_fails_or_sooner(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="silvia_client")
    watchdog = _Watchdog()
    fired: list[str] = []
    done = threading.Event()

    def fails() -> None:
        fired.append("fails")
        raise RuntimeError("boom")

    def last() -> None:
        fired.append("last")
        done.set()

    now = time.monotonic()
    cancel = watchdog.call_at(now + 0.04, lambda: fired.append("cancelled"))
    watchdog.call_at(now + 0.06, last)
    watchdog.call_at(now + 0.03, fails)
    watchdog.call_at(now + 0.02, lambda: fired.append("first"))
    cancel()
    assert done.wait(HANG)
    assert fired == ["first", "fails", "last"]
    failed = [r for r in caplog.records if r.getMessage() == "a deadline alarm failed"]
    assert len(failed) == 1
    assert failed[0].exc_info is not None
    assert isinstance(failed[0].exc_info[1], RuntimeError)
    # An alarm sooner than the one the thread waits for wakes it.
    watchdog = _Watchdog()
    cancel_far = watchdog.call_at(time.monotonic() + 600, lambda: None)
    started = threading.Event()
    watchdog.call_at(time.monotonic(), started.set)
    assert started.wait(HANG)
    time.sleep(0.01)  # the thread goes back to waiting for the far alarm
    sooner = threading.Event()
    watchdog.call_at(time.monotonic() + 0.01, sooner.set)
    assert sooner.wait(HANG), "the thread slept on until the far alarm"
    cancel_far()


def test_its_named_daemon_thread_ends_when_idle_and_the_next_alarm_starts_another() -> None:
    watchdog = _Watchdog()
    watchdog.IDLE_EXIT = 0.02
    first = threading.Event()
    watchdog.call_at(time.monotonic(), first.set)
    thread = watchdog._thread
    assert first.wait(HANG)
    # A daemon, so that a program exits with alarms still armed; named, for a thread dump.
    assert thread is not None
    assert thread.name == "silvia-client-deadlines"
    assert thread.daemon
    ends = time.monotonic() + HANG
    while watchdog._thread is not None and time.monotonic() < ends:
        time.sleep(0.01)
    assert watchdog._thread is None
    second = threading.Event()
    watchdog.call_at(time.monotonic(), second.set)
    assert second.wait(HANG)


def in_a_forked_child(watchdog: _Watchdog) -> threading.Event:
    """Put `watchdog` as a fork leaves it in the child: the parent's thread not running, the
    parent's alarm (the event returned) in its heap, and the process id not the child's."""
    watchdog._thread = threading.Thread(target=lambda: None)  # never started: as after a fork
    parents = threading.Event()
    watchdog.call_at(time.monotonic(), parents.set)
    watchdog._pid = -1
    return parents


def test_a_forked_child_starts_over_without_the_parents_alarms_and_a_held_lock() -> None:
    watchdog = _Watchdog()
    parents = in_a_forked_child(watchdog)
    lock = watchdog._fork_lock
    first, second = threading.Event(), threading.Event()
    now = time.monotonic()
    watchdog.call_at(now + 0.01, first.set)
    watchdog.call_at(now + 0.02, second.set)  # once started over, not again
    assert first.wait(HANG)
    assert second.wait(HANG)
    assert not parents.is_set()
    assert watchdog._pid == os.getpid()
    assert watchdog._fork_lock is lock  # free at the fork: kept
    # A lock held at the fork (by a parent's thread) is replaced after a short wait.
    watchdog = _Watchdog()
    watchdog.FORK_LOCK_WAIT = 0.01
    lock = watchdog._fork_lock
    assert lock.acquire()
    parents = in_a_forked_child(watchdog)
    fired = threading.Event()
    watchdog.call_at(time.monotonic(), fired.set)
    assert fired.wait(HANG)
    assert not parents.is_set()
    assert watchdog._fork_lock is not lock
    # The new lock serves the next start over (in a child of the child).
    watchdog._pid = -1
    again = threading.Event()
    watchdog.call_at(time.monotonic(), again.set)
    assert again.wait(HANG)
    assert watchdog._pid == os.getpid()


def test_cancelled_alarms_are_dropped_from_the_heap_now_and_then() -> None:
    watchdog = _Watchdog()
    now = time.monotonic()
    cancel_live = watchdog.call_at(now + 600, lambda: None)  # first: no later one wakes the thread
    lengths = [len(watchdog._heap)]
    for i in range(1, 200):
        watchdog.call_at(now + 600 + i, lambda: None)()  # armed, then cancelled at once
        lengths.append(len(watchdog._heap))
    cancel_live()
    # At 128 in the heap (more than 64, a multiple of 64) the cancelled go, the live one stays.
    assert lengths[:128] == list(range(1, 129)), "dropped too soon"
    assert lengths[128:] == list(range(2, 74)), "not dropped at 128"


# ------------------------------------------------------------------------------- guards


class Sock:
    """A transport's socket that is no `socket.socket` (asyncio's wrapper): its shutdowns, or
    with `refuses`, a shutdown that fails, as a closed socket's does."""

    def __init__(self, refuses: bool = False) -> None:
        self.refuses = refuses
        self.shut: list[int] = []

    def shutdown(self, how: int) -> None:
        if self.refuses:
            raise OSError("secret detail")
        self.shut.append(how)


class Stream:
    """A response's network stream, `sock` its socket."""

    def __init__(self, sock: object) -> None:
        self.sock = sock

    def get_extra_info(self, name: str) -> object:
        return self.sock if name == "socket" else None


def response(sock: object) -> httpx.Response:
    return httpx.Response(200, extensions={"network_stream": Stream(sock)})


def test_a_stop_shuts_the_socket_down_also_one_that_came_after_it_and_close_stops_all() -> None:
    watched = Sock()
    guard = Guard(no_alarm)
    guard.watch(response(watched))
    assert watched.shut == []
    guard.stop("deadline")
    assert watched.shut == [socket.SHUT_RDWR]
    came_late = Sock()
    guard = Guard(no_alarm)
    guard.stop("closed")
    guard.watch(response(came_late))  # stopped before the response came: shut at once
    assert came_late.shut == [socket.SHUT_RDWR]
    # A client's close() stops every guard it tracks, and every one tracked after.
    life = Lifecycle()
    before = life.track(Guard(no_alarm))
    life.close()
    after = life.track(Guard(no_alarm))
    assert (before.reason, after.reason) == ("closed", "closed")


def test_a_released_guard_cancels_its_alarm_and_arms_none() -> None:
    # An alarm at infinity would keep the guard, and its socket, in the watchdog for ever.
    armed: list[float] = []
    cancelled: list[float] = []

    def timer(at: float, callback: Callable[[], None]) -> Callable[[], None]:
        armed.append(at)
        return lambda: cancelled.append(at)

    guard = Guard(timer)
    guard.arm(5.0, "deadline")
    guard.release()
    assert (armed, cancelled) == ([5.0], [5.0])


def test_a_guard_without_a_socket_stops_silently_and_a_refusing_one_logs_its_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="silvia_client")

    class Failing:  # a caller's transport whose stream fails when asked for its socket
        def get_extra_info(self, name: str) -> object:
            raise RuntimeError("transport")

    # Never watched; watching no response; watching one whose socket cannot be had.
    for watched in ((), (None,), (httpx.Response(200, extensions={"network_stream": Failing()}),)):
        guard = Guard(no_alarm)
        for each in watched:
            guard.watch(each)
        guard.stop("deadline")
        assert guard.reason == "deadline"
        logged = [r.getMessage() for r in caplog.records if r.name == "silvia_client"]
        assert not logged, f"watched {watched}: {logged}"
    # A socket that cannot be shut down is logged by its error's type, never its text.
    guard = Guard(no_alarm)
    guard.watch(response(Sock(refuses=True)))
    guard.stop("closed")
    assert guard.reason == "closed"
    messages = [r.getMessage() for r in caplog.records if r.name == "silvia_client"]
    assert messages == ["could not shut the socket down: OSError"]
