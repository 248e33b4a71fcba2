"""The retry decisions at their edges (`_retries.py`, no I/O): a closed client, and a
wait that would end exactly as the deadline does."""

from __future__ import annotations

import time

import httpx
import pytest

from silvia_client import APIConnectionError, ClientClosedError, InternalServerError
from silvia_client._deadline import Call, Guard, RequestOptions
from silvia_client._retries import RetryPolicy, after_failure


def _started(kind: str = "get") -> Call:
    options = RequestOptions(
        kind,  # type: ignore[arg-type]
        headers=httpx.Headers(),
        timeout=httpx.Timeout(5.0),
        idle_timeout=9.0,
        deadline=120.0,
        max_event_bytes=1,
        max_response_bytes=1,
        max_values=1,
        extra_body={},
        extra_query={},
    )
    call = Call(options)
    call.at = time.monotonic() + 120
    call.guard = Guard(lambda at, callback: lambda: None)  # no alarm
    return call


def test_a_failure_after_the_client_closed_is_the_closed_error_whatever_it_was() -> None:
    call = _started()
    call.guard.stop("closed")  # type: ignore[union-attr]
    for failure in (httpx.Response(503), httpx.ConnectError("x")):
        error = InternalServerError("down", status_code=503)
        step = after_failure(RetryPolicy(), call, failure, error, 0)
        assert isinstance(step, ClientClosedError), failure
        assert str(step) == "the client was closed while the request was under way"
    # Stopped by its deadline, it is not the closed error.
    late = _started()
    late.guard.stop("deadline")  # type: ignore[union-attr]
    step = after_failure(RetryPolicy(), late, httpx.ReadError("x"), APIConnectionError("r"), 0)
    assert not isinstance(step, ClientClosedError)


def test_no_wait_that_ends_as_the_time_left_does(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = RetryPolicy(initial_delay=2.0)
    asks_5 = httpx.Response(503, headers={"retry-after": "5"})
    assert policy.delay(asks_5, 0, repeatable=True, time_left=5.0) is None
    assert policy.delay(asks_5, 0, repeatable=True, time_left=5.001) == 5.0
    monkeypatch.setattr("random.random", lambda: 0.0)  # no jitter: the backoff is 2 s
    broken = httpx.ReadError("x")
    assert policy.delay(broken, 0, repeatable=True, time_left=2.0) is None
    assert policy.delay(broken, 0, repeatable=True, time_left=2.001) == 2.0
