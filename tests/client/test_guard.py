"""A guard's stop shuts its response's socket down; a socket that refuses is only logged (the
check between chunks still stops the read), with the error's type and never its text."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client._deadline import Guard, Halt, Lifecycle

from .conftest import no_alarm


class Refusing:
    """A transport's socket whose shutdown fails, as a closed one's does."""

    def shutdown(self, how: int) -> None:
        raise OSError("secret detail")


class Recording:
    """A transport's socket that is no `socket.socket` (asyncio's wrapper): its shutdowns."""

    def __init__(self) -> None:
        self.shut: list[int] = []

    def shutdown(self, how: int) -> None:
        self.shut.append(how)


class Stream:
    """A response's network stream, `sock` its socket."""

    def __init__(self, sock: object) -> None:
        self.sock = sock

    def get_extra_info(self, name: str) -> object:
        return self.sock if name == "socket" else None


def response(sock: object) -> httpx.Response:
    return httpx.Response(200, extensions={"network_stream": Stream(sock)})


def test_a_socket_that_cannot_be_shut_down_is_logged_by_its_error_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="silvia_client")
    guard = Guard(no_alarm)
    guard.watch(response(Refusing()))
    guard.stop("closed")
    assert guard.reason == "closed"
    messages = [r.getMessage() for r in caplog.records if r.name == "silvia_client"]
    assert messages == ["could not shut the socket down: OSError"]


def test_a_stop_shuts_the_socket_down_also_one_that_came_after_it() -> None:
    watched = Recording()
    guard = Guard(no_alarm)
    guard.watch(response(watched))
    assert watched.shut == []
    guard.stop("deadline")
    assert watched.shut == [socket.SHUT_RDWR]
    came_late = Recording()
    guard = Guard(no_alarm)
    guard.stop("closed")
    guard.watch(response(came_late))  # stopped before the response came: shut at once
    assert came_late.shut == [socket.SHUT_RDWR]


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


def test_closing_stops_every_guard_tracked_and_every_one_tracked_after() -> None:
    life = Lifecycle()
    before = life.track(Guard(no_alarm))
    life.close()
    after = life.track(Guard(no_alarm))
    assert (before.reason, after.reason) == ("closed", "closed")


def test_a_call_is_not_expired_until_its_deadline() -> None:
    with SilviaClient(base_url="https://silvia.test", token="t") as client:
        call = client._call("chat", deadline=0.5)
        call.start(no_alarm)
        assert not call.expired()
        request = httpx.Request("POST", "https://silvia.test/chat")  # no timeout extension yet
        call.wait_between_events(request)
        assert 0 < request.extensions["timeout"]["read"] <= 0.5
        call.at -= 1  # past it
        assert call.expired()
        with pytest.raises(Halt) as caught:
            call.wait_between_events(request)
        assert caught.value.reason == "deadline"


def test_a_guard_without_a_socket_stops_without_touching_one(
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
