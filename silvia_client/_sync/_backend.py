"""What the sync I/O does its own way, by hand: the names of `_async/_backend.py`.

This module is not generated (see `silvia_client/_async/_backend.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext

import httpx

__all__ = ["ALREADY_RUNNING", "OTHER_CLIENT", "Opener", "drain_scope", "sleep"]

Opener = Callable[[], tuple[httpx.Response, Iterable[bytes]]]
"""How a stream opens its response and its decoded body."""

ALREADY_RUNNING: type[Exception] = ValueError
"""What reading or closing a generator that another thread is running raises."""

OTHER_CLIENT = "AsyncSilviaClient takes an httpx.AsyncClient"
"""The other twin's `http_client`, for the error that names this one's."""


def sleep(seconds: float) -> None:
    """Wait `seconds` (before a retry)."""
    time.sleep(seconds)


drain_scope: Callable[[float], AbstractContextManager[object]] = nullcontext
"""Nothing: the guard's alarm alone bounds the drain; it shuts the socket down, and stops
the read at the next chunk on a transport without one."""
