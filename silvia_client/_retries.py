"""When to send a request again, and how long to wait first.

Only requests that are safe to repeat are retried: a GET, or any request that
certainly never reached the server (the connection was never made). A chat
POST that may have reached the server is never sent again, because the server
may already be running the turn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx

from ._responses import parse_retry_after

__all__ = ["RetryPolicy"]

RETRY_STATUSES = frozenset({408, 429})  # plus every 5xx


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    initial_delay: float = 0.5  # seconds before the first retry, doubled each time
    max_delay: float = 8.0
    max_retry_after: float = 60.0  # a server's Retry-After is honoured up to this

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")

    def _backoff(self, attempt: int) -> float:
        # Exponential, with jitter so that many clients do not retry in step.
        delay = min(self.initial_delay * 2.0**attempt, self.max_delay)
        return delay * (1 - 0.25 * random.random())

    def delay_after_status(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying a repeatable request, or None for no retry."""
        status = response.status_code
        if attempt >= self.max_retries or not (status in RETRY_STATUSES or status >= 500):
            return None
        retry_after = parse_retry_after(response)
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return self._backoff(attempt)

    def delay_after_error(
        self, error: Exception, attempt: int, *, repeatable: bool
    ) -> float | None:
        """Seconds to wait before retrying after a transport error, or None for no retry."""
        if attempt >= self.max_retries:
            return None
        never_sent = isinstance(
            error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
        )
        if never_sent or (repeatable and isinstance(error, httpx.TransportError)):
            return self._backoff(attempt)
        return None
