"""A client's connection pool: this process's, one event loop's, with a bounded cookie jar.

Where things are: `Pool` holds the httpx client that a `SilviaClient` (or its
async twin) and its `with_options` copies send through; `BoundedCookieJar` is the
cookie jar of every pool the SDK makes. The clients (`_client.py`) reach their
pool only through `Pool.get`, so every call passes the two checks below; the
testing kit's clients (`ReferenceServer.client()`) are made the same way, so
they fail where a production client fails.

A pool's connections belong to the process that opened them: after `os.fork()`,
a child that read from one would read the parent's answers, and the parent the
child's. So a pool notes the process it first served, and in another one the
SDK makes a fresh pool with the same settings (a forked child's own, at its
first call); a caller's own `http_client`, which the SDK cannot make anew, is
refused there with `ClientClosedError`. That is a process id compared at each
call, not a process-wide fork hook.

An async pool's connections also belong to the event loop that opened them: a
pool notes the loop it first served, and a call from another raises
`EventLoopChangedError` before anything is sent (`running_loop`, below, is the
one place that asks which loop runs: anyio's token of it, under asyncio or trio).

Every pool the SDK makes verifies TLS with one shared context (`tls_context`):
httpx loads the CA bundle into a new one for each client it makes, most of a new
client's cost (about 0.1 s), though a loaded context is only read.
"""

from __future__ import annotations

import functools
import http.cookiejar
import logging
import os
import ssl
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import httpx

from ._wire import DEFAULTS
from .errors import ClientClosedError, EventLoopChangedError

__all__ = ["BoundedCookieJar", "Pool", "running_loop", "tls_context"]

logger = logging.getLogger("silvia_client")

H = TypeVar("H", httpx.Client, httpx.AsyncClient)


def running_loop() -> object | None:
    """The event loop running in this thread (asyncio's loop, trio's token), None outside one."""
    from anyio.lowlevel import current_token  # here: `import silvia_client` stays without it

    try:
        return current_token().native_token  # a new wrapper per call, of the same loop
    except RuntimeError:  # no event loop runs in this thread (anyio's `NoEventLoopError`)
        return None


class Pool(Generic[H]):
    """The httpx client a client sends through, shared with its `with_options` copies.

    Given a caller's `http_client`, it holds that one; given None, one that `make`
    makes, which the SDK owns (closes with the client, makes anew in a forked
    child). `owner` names the client's class in error messages.
    """

    # Making a pool anew takes moments; a wait longer than this means the lock was
    # held by a thread of the parent when it forked, and is released nowhere here.
    FORK_LOCK_WAIT = 5.0

    def __init__(self, given: H | None, make: Callable[[], H], owner: str) -> None:
        self._http: H = make() if given is None else given
        self._make: Callable[[], H] | None = make if given is None else None
        self._owner = owner
        self._pid: int | None = None  # the process it first served
        self._loop: object = None  # the event loop it first served (an async pool)
        self._fork_lock = threading.Lock()

    @property
    def owned(self) -> bool:
        """Whether the SDK made this pool (and so closes it, and makes it anew after a fork)."""
        return self._make is not None

    def own(self, make: Callable[[], H]) -> None:
        """The SDK owns the pool it was given (the testing kit's): `make` makes it anew."""
        self._make = make

    def get(self) -> H:
        """The pool, for this process and (an async pool) the event loop running now.

        Raises `EventLoopChangedError` on a loop other than the first it served, and
        `ClientClosedError` for a caller's own `http_client` in a process forked
        after it was used. Outside any loop (a look at the pool from sync code)
        nothing is noted.
        """
        if self._pid != os.getpid():
            self._here()
        if isinstance(self._http, httpx.AsyncClient):
            loop = running_loop()
            if self._loop is None:
                self._loop = loop
            elif loop is not None and loop is not self._loop:
                raise EventLoopChangedError(
                    f"this {self._owner} first ran on another event loop, and its connections "
                    "belong to that one (nothing was sent): an async client serves one event "
                    "loop. Make the client inside the loop that uses it: one per asyncio.run, "
                    "and in tests, in the test or in a fixture on the test's loop"
                )
        return self._http

    def to_close(self) -> H | None:
        """The pool for `close()` to close: None in a process it did not serve (a child's
        copy of its parent's pool is the parent's to close)."""
        return self._http if self._pid in (None, os.getpid()) else None

    def _here(self) -> None:
        """The first call in this process: note it, or (used before the fork) a pool of its own."""
        pid = os.getpid()
        if self._pid is None:  # never used: no connection yet, whoever made it
            self._pid = pid
            return
        if self._make is None:
            raise ClientClosedError(
                f"this {self._owner}'s http_client was used in process {self._pid}, and this is "
                f"process {pid}, forked from it: its connections are the parent's, and the SDK "
                "cannot make your http_client anew. Make the client and its http_client after "
                "the fork, in each worker (or leave http_client out: the SDK's own pool is "
                "made anew in a forked child)"
            )
        held = self._fork_lock.acquire(timeout=self.FORK_LOCK_WAIT)
        try:
            if self._pid != pid:  # not already made by another of this process's threads
                self._http, self._loop, self._pid = self._make(), None, pid
        finally:
            if held:
                self._fork_lock.release()
            else:
                self._fork_lock = threading.Lock()


class BoundedCookieJar(http.cookiejar.CookieJar):
    """A cookie jar that keeps at most `max_cookies`, and `max_bytes` of `Cookie` header.

    What a load balancer's sticky session or a gateway needs is a cookie or two; a
    server that sets cookies of new names on every response would otherwise grow
    every request's `Cookie` header without end. A cookie that would take the jar
    past either bound is not kept (an update of one already kept leaves the old
    value), so the cookies kept first, the sticky session's among them, stay. The
    defaults are `DEFAULTS.max_cookies` and `DEFAULTS.max_cookie_bytes`.

    The standard library's public API only: `set_cookie` is where its jar stores
    each cookie. httpx stores a response's cookies through `extract_cookies`, which
    holds the jar's own lock while it calls `set_cookie` for each, so the count and
    the store change together. The count is kept beside the jar, and made again
    after `clear` (which expired and deleted cookies go through): counting the jar
    for each of a response's 300 cookies would cost more than reading them.
    """

    def __init__(
        self,
        max_cookies: int = DEFAULTS.max_cookies,
        max_bytes: int = DEFAULTS.max_cookie_bytes,
    ) -> None:
        super().__init__()
        self.max_cookies = max_cookies
        self.max_bytes = max_bytes
        # What the jar holds, by (domain, path, name): each cookie's header bytes. None:
        # count again (cookies have gone since).
        self._held: dict[tuple[str, str, str], int] | None = None

    def clear(
        self, domain: str | None = None, path: str | None = None, name: str | None = None
    ) -> None:
        self._held = None  # the one other way the stdlib's jar lets a cookie go
        super().clear(domain, path, name)

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        held = self._held
        if held is None:
            held = {(c.domain, c.path, c.name): _header_bytes(c) for c in self}
        key, size = (cookie.domain, cookie.path, cookie.name), _header_bytes(cookie)
        count = len(held) + (key not in held)
        total = sum(held.values()) - held.get(key, 0) + size
        if count > self.max_cookies or total > self.max_bytes:
            logger.debug(
                "a cookie was not kept: the jar holds at most %d cookies, %d bytes",
                self.max_cookies,
                self.max_bytes,
            )
        else:
            super().set_cookie(cookie)
            held[key] = size
        self._held = held


def _header_bytes(cookie: http.cookiejar.Cookie) -> int:
    """The most `cookie` adds to a `Cookie` header: `name=value; `, and an RFC 2965
    cookie's `$Version`, `$Path` and `$Domain` beside it."""
    size = len(cookie.name.encode()) + len((cookie.value or "").encode()) + 3
    if cookie.version:
        size += len(cookie.path.encode()) + len(cookie.domain.encode()) + 40
    return size


def tls_context() -> ssl.SSLContext:
    """The verifying TLS context of the SDK's own pools, made once as httpx makes its own.

    `SSL_CERT_FILE` and `SSL_CERT_DIR`, which httpx reads when it makes one, are part of
    the key: a process that changes them gets a context of the new setting.
    """
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()
