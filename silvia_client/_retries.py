"""When to send a request again, and how long to wait first.

A GET is safe to repeat: it is retried after a connection error, a body that
broke off, 408, 429 and 5xx. A chat POST is sent again only when it certainly
was not processed: the connection was never made, or the server refused it
with 429 (rate limited: it did not start the turn). After any other status, or
any error once the request may have gone out, the server may be running the
turn, so the message is never sent twice.

Every wait fits in the time the operation has left: a `Retry-After` longer
than that is not waited for at all (the caller gets the status's own error at
once), and neither is a backoff that would outlast it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import httpx

from ._responses import parse_retry_after
from ._wire import DEFAULTS

__all__ = ["RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = DEFAULTS.max_retries
    initial_delay: float = DEFAULTS.retry_backoff  # seconds before the first retry, doubled
    max_delay: float = DEFAULTS.max_backoff
    max_retry_after: float = DEFAULTS.max_retry_after  # a server's Retry-After, honoured up to

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")

    def _backoff(self, attempt: int) -> float:
        # Exponential, with jitter so that many clients do not retry in step.
        delay = min(self.initial_delay * 2.0**attempt, self.max_delay)
        return delay * (1 - 0.25 * random.random())

    def delay_after_status(
        self,
        response: httpx.Response,
        attempt: int,
        *,
        idempotent: bool = True,
        time_left: float = math.inf,
    ) -> float | None:
        """Seconds to wait before sending again after this status, or None for no retry."""
        status = response.status_code
        if attempt >= self.max_retries:
            return None
        if idempotent:
            if not (status in DEFAULTS.retry_statuses or status >= 500):
                return None
        elif status not in DEFAULTS.not_processed_statuses:
            return None
        retry_after = parse_retry_after(response)
        if retry_after is not None:
            if retry_after >= time_left:
                return None  # the server asks for longer than there is: give up now
            return min(retry_after, self.max_retry_after)
        return self._within(self._backoff(attempt), time_left)

    def delay_after_error(
        self,
        error: Exception,
        attempt: int,
        *,
        repeatable: bool,
        time_left: float = math.inf,
    ) -> float | None:
        """Seconds to wait before retrying after a transport error, or None for no retry."""
        if attempt >= self.max_retries:
            return None
        never_sent = isinstance(
            error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
        )
        if never_sent or (repeatable and isinstance(error, httpx.TransportError)):
            return self._within(self._backoff(attempt), time_left)
        return None

    @staticmethod
    def _within(delay: float, time_left: float) -> float | None:
        return delay if delay < time_left else None
