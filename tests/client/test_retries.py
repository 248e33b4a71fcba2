"""Retries: which failures, how many times, how long to wait (recorded, never slept); a chat
POST is never sent twice once it may have reached the server. Then the decision alone, with
no I/O (`after_failure`, `RetryPolicy.delay`), at its edges: a closed client, a wait that would
end exactly as the deadline does."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime, timezone
from email.utils import format_datetime

import httpx
import pytest
import respx

from silvia_client._retries import RetryPolicy, after_failure
from silvia_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    ClientClosedError,
    ConfigurationError,
    ConflictError,
    InternalServerError,
    RateLimitError,
    SilviaError,
)

from .conftest import Api, started_call
from .sse import CHAT_URL, Body, done, json_response, session, sse_response

pytestmark = pytest.mark.anyio

PATH = "/api/chat/sessions/s1"
GOOD = {"session": {"id": "s1", "title": "t"}, "messages": []}


def ok() -> httpx.Response:
    return json_response(GOOD)


# Every failure safe to send again: any on a GET; on a chat POST, one never sent, or refused
# with 429 (the server started no turn).
Make = Callable[[], httpx.Response | Exception]  # a fresh answer per attempt
RETRIED: list[tuple[str, Make, type[Exception]]] = [
    ("session", lambda: httpx.ConnectError("refused"), APIConnectionError),
    ("session", lambda: httpx.ConnectTimeout("slow"), APITimeoutError),
    ("session", lambda: httpx.ReadError("reset"), APIConnectionError),
    ("session", lambda: httpx.ReadTimeout("slow"), APITimeoutError),
    ("session", lambda: httpx.RemoteProtocolError("bad"), APIConnectionError),
    ("session", lambda: httpx.Response(408), APIStatusError),
    ("session", lambda: httpx.Response(429, headers={"retry-after": "1"}), RateLimitError),
    ("session", lambda: httpx.Response(500), InternalServerError),
    ("session", lambda: httpx.Response(502), InternalServerError),
    ("session", lambda: httpx.Response(503, text="down"), InternalServerError),
    ("session", lambda: httpx.Response(504), InternalServerError),
    # Headers arrived, then the body broke off: a GET is safe to send again.
    (
        "session",
        lambda: httpx.Response(200, stream=Body([b'{"session": '], fail=httpx.ReadError("x"))),
        APIConnectionError,
    ),
    ("chat", lambda: httpx.ConnectError("refused"), APIConnectionError),
    ("chat", lambda: httpx.ConnectTimeout("slow"), APITimeoutError),
    ("chat", lambda: httpx.PoolTimeout("busy"), APITimeoutError),
    ("chat", lambda: httpx.Response(429, headers={"retry-after": "1"}), RateLimitError),
]


async def test_what_is_safe_to_send_again_is_retried_twice_then_succeeds_or_gives_up(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    for endpoint, make, cls in RETRIED:
        case = (endpoint, repr(make()))
        route = server.get(PATH) if endpoint == "session" else server.post(CHAT_URL)
        good = ok() if endpoint == "session" else sse_response(session("s") + done())
        route.mock(side_effect=[make(), make(), good])
        await api.request(api.client(), endpoint)
        assert route.call_count == 3, case
        route.reset()
        route.mock(side_effect=[make(), make(), make()])
        with pytest.raises(cls) as info:
            await api.request(api.client(), endpoint)
        assert type(info.value) is cls, case
        assert route.call_count == 3, case  # the default: 2 retries
        if cls is RateLimitError:
            assert sleeps == [1.0] * 4, case  # Retry-After honoured
        assert len(sleeps) == 4, case
        route.reset()
        sleeps.clear()


# Sent once: a status that would fail again, and a chat POST that may have been processed.
NOT_RETRIED: list[tuple[str, httpx.Response | type[Exception], type[SilviaError]]] = [
    *(("session", httpx.Response(code), APIStatusError) for code in (400, 401, 403, 404, 409, 422)),
    ("chat", httpx.Response(500), InternalServerError),
    ("chat", httpx.Response(503, headers={"retry-after": "0"}), InternalServerError),
    ("chat", httpx.Response(408), APIStatusError),
    ("chat", httpx.Response(409), ConflictError),
    ("chat", httpx.ReadError, APIConnectionError),
    ("chat", httpx.WriteError, APIConnectionError),
    ("chat", httpx.RemoteProtocolError, APIConnectionError),
    ("chat", httpx.ReadTimeout, APITimeoutError),
    ("chat", httpx.WriteTimeout, APITimeoutError),
]


async def test_max_retries_and_what_is_never_sent_twice(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    for max_retries in (0, 1, 4):
        sleeps.clear()
        route = server.get(PATH).mock(return_value=httpx.Response(500))
        with pytest.raises(InternalServerError):
            await api.session(api.client(max_retries=max_retries, retry_backoff=0.5), "s1")
        assert route.call_count == max_retries + 1, max_retries
        assert len(sleeps) == max_retries, max_retries
        # The backoff, doubled each time, less up to a quarter of it (jitter).
        for attempt, delay in enumerate(sleeps):
            assert 0.75 * 0.5 * 2**attempt <= delay <= 0.5 * 2**attempt, (attempt, delay)
        route.reset()
    assert len(set(sleeps)) == 4  # jittered
    sleeps.clear()
    for endpoint, answer, cls in NOT_RETRIED:
        route = server.get(PATH) if endpoint == "session" else server.post(CHAT_URL)
        route.mock(side_effect=[answer])
        with pytest.raises(cls) as caught:
            await api.request(api.client(), endpoint)
        assert type(caught.value) is cls or cls is APIStatusError, answer
        assert route.call_count == 1, answer
        assert sleeps == [], answer
        route.reset()


# -------------------------------------------------------------------------------- how long to wait


# Always finite and at most an hour: a caller may sleep on it.
RETRY_AFTER = [("7", 7.0), ("0.5", 0.5), ("-3", 0.0), ("soon", None), (None, None), ("nan", None)]
RETRY_AFTER += [("99999999", 3600.0), ("inf", 3600.0), ("1e300", 3600.0), ("-inf", 0.0)]


async def test_retry_after_is_honoured_in_seconds_or_as_a_date_and_kept_on_the_error(
    api: Api, server: respx.MockRouter, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime(2025, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
    monkeypatch.setattr(time, "time", now.timestamp)
    in_ten = format_datetime(now.replace(second=10), usegmt=True)
    past = format_datetime(now.replace(hour=11), usegmt=True)
    for status in (429, 503):
        asks = [
            httpx.Response(status, headers={"retry-after": v}) for v in ("3", in_ten, past, "0")
        ]
        server.get(PATH).mock(side_effect=[*asks, ok()])
        await api.session(api.client(max_retries=4), "s1")
        assert sleeps == [3.0, 10.0, 0.0, 0.0], status
        sleeps.clear()
    # A 429's error carries the wait, read as the retries read it.
    later = format_datetime(now.replace(minute=2), usegmt=True)  # two minutes later
    for value, expected in [*RETRY_AFTER, (later, 120.0)]:
        headers = {} if value is None else {"retry-after": value}
        server.post(CHAT_URL).mock(
            return_value=httpx.Response(429, headers=headers, text="slow down")
        )
        with pytest.raises(RateLimitError) as caught:
            await api.turn(api.client(max_retries=0))
        assert caught.value.retry_after == expected, value
        assert caught.value.message == "slow down", value


async def test_a_retry_after_is_waited_for_up_to_the_cap_if_the_time_left_allows(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    def asks(seconds: str, status: int = 429) -> httpx.Response:
        return httpx.Response(status, headers={"retry-after": seconds})

    for deadline, asked, slept in [(30, "20", [20.0]), (math.inf, "1e300", [60.0])]:
        server.get(PATH).mock(side_effect=[asks(asked), ok()])
        await api.session(api.client(deadline=deadline), "s1")
        assert sleeps == slept, (deadline, asked)  # without a deadline: the policy's cap
        sleeps.clear()
    server.get(PATH).mock(side_effect=[asks("30"), ok()])
    client = api.client()
    client.retries = RetryPolicy(max_retry_after=5.0)  # the cap is the policy's
    await api.session(client, "s1")
    assert sleeps == [5.0]
    sleeps.clear()
    server.reset()
    # A wait past the time left is not waited for: the status's own error, at once.
    too_long: list[tuple[int, str | None, dict[str, float]]] = [
        (429, "20", {"deadline": 10}),
        *((status, value, {}) for status in (429, 503) for value in ("121", "inf")),  # GET: 120 s
        (500, None, {"retry_backoff": 5.0, "deadline": 3.0}),  # a backoff too
    ]
    for status, value, options in too_long:
        answer = httpx.Response(status) if value is None else asks(value, status)
        route = server.get(PATH).mock(return_value=answer)
        with pytest.raises(APIStatusError) as caught:
            await api.session(api.client(**options), "s1")
        assert caught.value.status_code == status, value
        assert route.call_count == 1, value
        assert sleeps == [], value
        if isinstance(caught.value, RateLimitError):
            assert caught.value.retry_after is not None
            assert 0 <= caught.value.retry_after <= 3600  # finite: a caller may sleep on it
        route.reset()


def test_retry_policy_is_checked_by_the_options_table() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ConfigurationError, match="max_retries"):
        RetryPolicy(max_retries=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="retry_backoff"):
        RetryPolicy(initial_delay=-1)


# ------------------------------------------------------------------ the decision, without I/O


def test_past_the_deadline_or_after_close_a_failure_is_the_timeout_or_the_closed_error() -> None:
    broken = APIConnectionError("reset")
    late = started_call("get", -1)
    timed_out = after_failure(RetryPolicy(), late, httpx.ReadError("x"), broken, 0)
    assert isinstance(timed_out, APITimeoutError)
    assert str(timed_out) == "the deadline of 120 s passed"
    assert timed_out.__cause__ is broken
    # A status is its own error, even then.
    status = InternalServerError("down", status_code=503)
    assert after_failure(RetryPolicy(), late, httpx.Response(503), status, 0) is status
    # A closed client's call: the closed error, whatever the failure; not a deadline's stop.
    for failure in (httpx.Response(503), httpx.ConnectError("x")):
        call = started_call()
        call.guard.stop("closed")  # type: ignore[union-attr]
        step = after_failure(RetryPolicy(), call, failure, status, 0)
        assert isinstance(step, ClientClosedError), failure
        assert str(step) == "the client was closed while the request was under way"
    call = started_call()
    call.guard.stop("deadline")  # type: ignore[union-attr]
    step = after_failure(RetryPolicy(), call, httpx.ReadError("x"), APIConnectionError("r"), 0)
    assert not isinstance(step, ClientClosedError)


def test_backoff_is_capped_and_jittered_and_no_wait_ends_as_the_time_left_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = RetryPolicy(max_retries=20, initial_delay=0.5, max_delay=8.0)
    error = httpx.ConnectError("x")
    monkeypatch.setattr("random.random", lambda: 0.999999)
    assert policy.delay(error, 10, repeatable=True) == pytest.approx(6.0, abs=1e-4)
    monkeypatch.setattr("random.random", lambda: 0.0)  # no jitter
    delays = [policy.delay(error, n, repeatable=True) for n in range(7)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    asks_5 = httpx.Response(503, headers={"retry-after": "5"})
    assert policy.delay(asks_5, 0, repeatable=True, time_left=5.0) is None
    assert policy.delay(asks_5, 0, repeatable=True, time_left=5.001) == 5.0
    assert policy.delay(error, 2, repeatable=True, time_left=2.0) is None  # the backoff: 2 s
    assert policy.delay(error, 2, repeatable=True, time_left=2.001) == 2.0
