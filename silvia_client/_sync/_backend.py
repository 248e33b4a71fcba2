"""What the sync I/O does its own way, by hand: the names of `_async/_backend.py`.

This module is not generated (see `silvia_client/_async/_backend.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx

from .._deadline import Guard
from .._wire import DEFAULTS

__all__ = [
    "ALREADY_RUNNING",
    "OTHER_CLIENT",
    "Opener",
    "drain_bound",
    "sleep",
]

Opener = Callable[[], httpx.Response]
"""How a stream opens its response."""

ALREADY_RUNNING: type[Exception] = ValueError
"""What reading or closing a generator that another thread is running raises."""

OTHER_CLIENT = "AsyncSilviaClient takes an httpx.AsyncClient"
"""The other twin's `http_client`, for the error that names this one's."""


def sleep(seconds: float) -> None:
    """Wait `seconds` (before a retry)."""
    time.sleep(seconds)


@contextmanager
def drain_bound(guard: Guard) -> Iterator[None]:
    """Bound the drain after `done` to `DEFAULTS.drain_seconds`: the guard's alarm then shuts
    its socket down, and stops the read at the next chunk on a transport without one."""
    guard.arm(time.monotonic() + DEFAULTS.drain_seconds, "drained")
    yield
