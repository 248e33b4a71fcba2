"""GET retries: which failures, how many times, and how long to wait (recorded, never slept)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime, timezone
from email.utils import format_datetime

import httpx
import pytest
import respx

from silvia_client._deadline import Call, Kind, RequestOptions
from silvia_client._retries import RetryPolicy, after_failure
from silvia_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    ConfigurationError,
    InternalServerError,
    RateLimitError,
)

from .conftest import Api
from .sse import Body, json_response

pytestmark = pytest.mark.anyio

PATH = "/api/chat/sessions/s1"
GOOD = {"session": {"id": "s1", "title": "t"}, "messages": []}


def ok() -> httpx.Response:
    return json_response(GOOD)


RETRIED: list[tuple[Callable[[], object], type[Exception]]] = [
    (lambda: httpx.ConnectError("refused"), APIConnectionError),
    (lambda: httpx.ConnectTimeout("slow"), APITimeoutError),
    (lambda: httpx.ReadError("reset"), APIConnectionError),
    (lambda: httpx.ReadTimeout("slow"), APITimeoutError),
    (lambda: httpx.RemoteProtocolError("bad"), APIConnectionError),
    (lambda: httpx.Response(408), APIStatusError),
    (lambda: httpx.Response(429, headers={"retry-after": "1"}), RateLimitError),
    (lambda: httpx.Response(500), InternalServerError),
    (lambda: httpx.Response(502), InternalServerError),
    (lambda: httpx.Response(503, text="down"), InternalServerError),
    (lambda: httpx.Response(504), InternalServerError),
    # Headers arrived, then the body broke off: a GET is safe to send again.
    (
        lambda: httpx.Response(200, stream=Body([b'{"session": '], fail=httpx.ReadError("x"))),
        APIConnectionError,
    ),
]


def _answer(make: Callable[[], object]) -> Callable[[httpx.Request], httpx.Response]:
    def respond(request: httpx.Request) -> httpx.Response:
        value = make()  # a fresh exception or response per attempt
        if isinstance(value, Exception):
            raise value
        assert isinstance(value, httpx.Response)
        return value

    return respond


async def test_a_get_is_retried_twice_then_succeeds_or_gives_up(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    for make, cls in RETRIED:
        case = repr(make())
        answers = [_answer(make), _answer(make), lambda r: ok()]
        route = server.get(PATH).mock(side_effect=lambda r, a=answers: a.pop(0)(r))
        assert (await api.session(api.client(), "s1")).id == "s1", case
        assert route.call_count == 3, case
        route.reset()
        route = server.get(PATH).mock(side_effect=_answer(make))
        with pytest.raises(cls) as info:
            await api.session(api.client(), "s1")
        assert type(info.value) is cls, case
        assert route.call_count == 3, case  # the default: 2 retries
        assert len(sleeps) == 4, case
        route.reset()
        sleeps.clear()


async def test_max_retries_and_the_statuses_never_retried(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    for max_retries in (0, 1, 4):
        route = server.get(PATH).mock(return_value=httpx.Response(500))
        with pytest.raises(InternalServerError):
            await api.session(api.client(max_retries=max_retries), "s1")
        assert route.call_count == max_retries + 1, max_retries
        assert len(sleeps) == max_retries, max_retries
        route.reset()
        sleeps.clear()
    for status in (400, 401, 403, 404, 409, 422):
        route = server.get(PATH).mock(return_value=httpx.Response(status, text="no such session"))
        with pytest.raises(APIStatusError, match="no such session") as info:
            await api.session(api.client(), "s1")
        assert info.value.status_code == status
        assert route.call_count == 1, status
        assert sleeps == [], status
        route.reset()


# -------------------------------------------------------------------------------- how long to wait


async def test_retry_after_is_honoured_in_seconds_or_as_a_date(
    api: Api, server: respx.MockRouter, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    for status in (429, 503):
        server.get(PATH).mock(
            side_effect=[
                httpx.Response(status, headers={"retry-after": "3"}),
                httpx.Response(status, headers={"retry-after": "0"}),
                ok(),
            ]
        )
        await api.session(api.client(), "s1")
        assert sleeps == [3.0, 0.0], status
        sleeps.clear()
    now = datetime(2025, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
    monkeypatch.setattr(time, "time", now.timestamp)
    in_ten = format_datetime(now.replace(second=10), usegmt=True)
    past = format_datetime(now.replace(hour=11), usegmt=True)
    server.get(PATH).mock(
        side_effect=[
            httpx.Response(429, headers={"retry-after": in_ten}),
            httpx.Response(429, headers={"retry-after": past}),
            ok(),
        ]
    )
    await api.session(api.client(), "s1")
    assert sleeps == [10.0, 0.0]


async def test_a_huge_retry_after_is_capped_or_fails_at_once(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    for value in ("86400", "1e300", "inf"):
        # Without a deadline, the wait is the policy's cap.
        server.get(PATH).mock(
            side_effect=[httpx.Response(503, headers={"retry-after": value}), ok()]
        )
        await api.session(api.client(deadline=math.inf), "s1")
        assert sleeps == [RetryPolicy().max_retry_after], value
        sleeps.clear()
        server.reset()
    for status in (429, 503):
        for value in ("121", "99999999", "1e300", "inf"):
            route = server.get(PATH).mock(
                return_value=httpx.Response(status, headers={"retry-after": value})
            )
            with pytest.raises(APIStatusError) as caught:
                await api.session(api.client(), "s1")  # a GET's deadline: 120 s
            # The status's own error, not a timeout.
            assert caught.value.status_code == status, value
            assert route.call_count == 1, value
            assert sleeps == [], value
            if isinstance(caught.value, RateLimitError):
                assert caught.value.retry_after is not None
                assert 0 <= caught.value.retry_after <= 3600  # finite: a caller may sleep on it
            route.reset()


async def test_a_retry_after_within_the_time_left_is_waited_for(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    server.get(PATH).mock(side_effect=[httpx.Response(429, headers={"retry-after": "20"}), ok()])
    await api.session(api.client(deadline=30), "s1")
    assert sleeps == [20.0]
    server.get(PATH).mock(side_effect=[httpx.Response(429, headers={"retry-after": "20"}), ok()])
    with pytest.raises(RateLimitError):
        await api.session(api.client(deadline=10), "s1")
    assert sleeps == [20.0]
    server.reset()
    route = server.get(PATH).mock(return_value=httpx.Response(500))
    with pytest.raises(InternalServerError):  # a backoff past the time left is not waited for
        await api.session(api.client(retry_backoff=5.0, deadline=3.0), "s1")
    assert route.call_count == 1
    assert sleeps == [20.0]


async def test_the_cap_is_the_policys(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    server.get(PATH).mock(side_effect=[httpx.Response(429, headers={"retry-after": "30"}), ok()])
    client = api.client()
    client.retries = RetryPolicy(max_retry_after=5.0)
    await api.session(client, "s1")
    assert sleeps == [5.0]


async def test_backoff_grows_within_its_jitter(
    api: Api, server: respx.MockRouter, sleeps: list[float]
) -> None:
    server.get(PATH).mock(return_value=httpx.Response(500))
    with pytest.raises(InternalServerError):
        await api.session(api.client(max_retries=4, retry_backoff=0.5), "s1")
    assert len(sleeps) == 4
    for attempt, delay in enumerate(sleeps):
        nominal = 0.5 * 2**attempt
        assert 0.75 * nominal <= delay <= nominal, (attempt, delay)
    assert sleeps == sorted(sleeps)
    assert len(set(sleeps)) == 4
    sleeps.clear()
    server.get(PATH).mock(side_effect=httpx.ConnectError)  # after connection errors too
    with pytest.raises(APIConnectionError):
        await api.session(api.client(retry_backoff=2.0), "s1")
    assert 1.5 <= sleeps[0] <= 2.0
    assert 3.0 <= sleeps[1] <= 4.0


def test_backoff_is_capped_and_jittered(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = RetryPolicy(max_retries=20, initial_delay=0.5, max_delay=8.0)
    error = httpx.ConnectError("x")
    monkeypatch.setattr("random.random", lambda: 0.0)
    delays = [policy.delay(error, n, repeatable=True) for n in range(7)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    monkeypatch.setattr("random.random", lambda: 0.999999)
    assert policy.delay(error, 10, repeatable=True) == pytest.approx(6.0, abs=1e-4)


def test_retry_policy_is_checked_by_the_options_table() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ConfigurationError, match="max_retries"):
        RetryPolicy(max_retries=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="retry_backoff"):
        RetryPolicy(initial_delay=-1)


# ------------------------------------------------------------------ the decision, without I/O


def _call(kind: Kind, left: float = 120.0) -> Call:
    """A call of 120 s, started `120 - left` s ago (without a guard's alarm)."""
    call = Call(
        RequestOptions(
            kind,
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
    )
    call.at = time.monotonic() + left
    return call


def test_after_failure_gives_the_wait_or_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("random.random", lambda: 0.0)
    policy, status = RetryPolicy(), InternalServerError("down", status_code=503)
    assert after_failure(policy, _call("get"), httpx.Response(503), status, 0) == 0.5
    assert after_failure(policy, _call("get"), httpx.Response(503), status, 2) is status
    # A chat POST that reached the server is never sent again; one refused with 429 is.
    assert after_failure(policy, _call("chat"), httpx.Response(503), status, 0) is status
    assert after_failure(policy, _call("chat"), httpx.Response(429), status, 1) == 1.0
    broken = APIConnectionError("reset")
    assert after_failure(policy, _call("chat"), httpx.ReadError("x"), broken, 0) is broken
    assert after_failure(policy, _call("chat"), httpx.ConnectError("x"), broken, 0) == 0.5


def test_after_failure_past_the_deadline_is_the_deadlines_timeout() -> None:
    broken = APIConnectionError("reset")
    timed_out = after_failure(RetryPolicy(), _call("get", -1), httpx.ReadError("x"), broken, 0)
    assert isinstance(timed_out, APITimeoutError)
    assert str(timed_out) == "the deadline of 120 s passed"
    assert timed_out.__cause__ is broken
    # A status is its own error, even then.
    status = InternalServerError("down", status_code=503)
    late = _call("get", -1)
    assert after_failure(RetryPolicy(), late, httpx.Response(503), status, 0) is status
