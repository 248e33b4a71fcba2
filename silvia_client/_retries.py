"""When to send a request again, and how long to wait first: plain decisions, no I/O.

A GET is safe to repeat: it is retried after a connection error, a body that broke
off, 408, 429 and 5xx. A chat POST is sent again only when it certainly was not
processed: the connection was never made, or a 429 refused it. After anything else
the server may be running the turn, so the message is never sent twice. No wait
outlasts the operation's deadline: a longer `Retry-After` or backoff is not waited for.
`RetryPolicy` decides from how an attempt ended (as the Anthropic SDK's
`_should_retry` and `_calculate_retry_timeout`); `after_failure` adds the deadline.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from ._deadline import check
from ._wire import DEFAULTS
from .errors import ClientClosedError

if TYPE_CHECKING:
    from ._deadline import Call
    from .errors import SilviaError


Failure = httpx.Response | httpx.TransportError  # how an attempt ended, when not with a 2xx

# A transport error that means the request never left: safe to send again, whatever it is.
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def parse_retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asked us to wait (`Retry-After` as seconds or an HTTP date), or None;
    from 0 to `DEFAULTS.retry_after_ceiling`."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, OverflowError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), DEFAULTS.retry_after_ceiling)


@dataclass(frozen=True)
class RetryPolicy:
    """How often, and after how long, a failed request is sent again."""

    max_retries: int = DEFAULTS.max_retries
    initial_delay: float = DEFAULTS.retry_backoff  # seconds before the first retry, doubled
    max_delay: float = DEFAULTS.max_backoff
    max_retry_after: float = DEFAULTS.max_retry_after  # a server's Retry-After, honoured up to

    def __post_init__(self) -> None:
        check("max_retries", self.max_retries)
        check("retry_backoff", self.initial_delay)

    def delay(
        self, failure: Failure, attempt: int, *, repeatable: bool, time_left: float = math.inf
    ) -> float | None:
        """Seconds to wait before sending again after `failure` (`attempt` counts from 0), or
        None for no retry; no wait outlasts `time_left`."""
        if isinstance(failure, httpx.TransportError):
            retry = repeatable or isinstance(failure, _NEVER_SENT)
        elif repeatable:
            retry = failure.status_code in DEFAULTS.retry_statuses or failure.status_code >= 500
        else:
            retry = failure.status_code in DEFAULTS.not_processed_statuses
        if attempt >= self.max_retries or not retry:
            return None
        if isinstance(failure, httpx.Response):
            retry_after = parse_retry_after(failure)
            if retry_after is not None:
                if retry_after >= time_left:
                    return None  # the server asks for longer than there is: give up now
                return min(retry_after, self.max_retry_after)
        # Exponential, with jitter so that many clients do not retry in step.
        backoff = min(self.initial_delay * 2.0**attempt, self.max_delay)
        backoff *= 1 - 0.25 * random.random()
        return backoff if backoff < time_left else None


def after_failure(
    policy: RetryPolicy, call: Call, failure: Failure, error: SilviaError, attempt: int
) -> float | SilviaError:
    """The seconds to wait before the next attempt, or the error to raise (`error`, what
    `failure` means to the caller; after the deadline, the deadline's timeout)."""
    if call.guard is not None and call.guard.reason == "closed":  # the client was closed
        return ClientClosedError("the client was closed while the request was under way")
    if isinstance(failure, httpx.TransportError) and call.expired():
        timed_out = call.timed_out()
        timed_out.__cause__ = error
        return timed_out
    delay = policy.delay(
        failure, attempt, repeatable=call.options.repeatable, time_left=call.left()
    )
    return error if delay is None else delay
