"""What both clients share that does no I/O: `token_from` and `base_url_from` (the
arguments or the environment, checked); `Scrubber`, through which whatever the server
sends passes before an exception, a log record or the command line shows it; `Pool` and
`BoundedCookieJar`, a client's connection pool and cookie jar; `ResponseErrors`, a
response or a transport error as a typed error.
"""

from __future__ import annotations

import functools
import http.cookiejar
import ipaddress
import json
import logging
import os
import re
import socket
import ssl
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

import httpx

from ._retries import parse_retry_after
from ._text import escaped
from ._wire import DEFAULTS, WireFormat
from .citations import is_http_url
from .errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ClientClosedError,
    ConfigurationError,
    ConflictError,
    EventLoopChangedError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestTooLargeError,
    UnexpectedResponseError,
    UnprocessableEntityError,
)

logger = logging.getLogger("silvia_client")


class _Token:
    """The bearer token, kept out of every repr and str."""

    __slots__ = ("header", "value")

    def __init__(self, value: str) -> None:
        self.value = value
        self.header = f"Bearer {value}"  # the `Authorization` header's value

    def __repr__(self) -> str:
        return "<token>"

    __str__ = __repr__


# A bearer token is printable ASCII without spaces. One read from a file often ends in a
# newline, which httpx would refuse later with the whole header (the token) in its message.
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


def token_from(token: object) -> _Token | None:
    """The token from `token`, else `SILVIA_TOKEN` (empty or unset: no token)."""
    env = DEFAULTS.token_env
    if token is None:
        value = os.environ.get(env, "")
        if not value:
            return None
        where = f"the {env} environment variable"
    elif not isinstance(token, str):
        raise ConfigurationError(f"token must be a str, not {type(token).__name__}")
    elif not token:
        raise ConfigurationError(f"token is empty: pass the token, or leave token out to use {env}")
    else:
        value, where = token, "token"
    if not _TOKEN_CHARS.fullmatch(value):
        # Never the value, nor where in it the bad character is.
        raise ConfigurationError(
            f"{where} holds whitespace, a control character or a non-ASCII character "
            "(a trailing newline from a file?): a bearer token is printable ASCII"
        )
    return _Token(value)


def base_url_from(base_url: object) -> str:
    """The API's base URL, checked: absolute http(s), no credentials, no query or fragment."""
    where, env = "base_url", DEFAULTS.base_url_env
    if base_url is None:
        base_url, where = os.environ.get(env), env
    if not base_url:
        raise ConfigurationError(
            f"no base URL: pass base_url=... or set the {env} environment variable"
        )
    if not isinstance(base_url, str):
        raise ConfigurationError(f"base_url must be a str, not {type(base_url).__name__}")
    if not is_http_url(base_url):
        raise ConfigurationError(f"{where} must be an absolute http(s) URL")
    parts = urlsplit(base_url)
    if "@" in parts.netloc:
        # httpx would send `user:password` as Basic auth in place of the token.
        raise ConfigurationError(
            f"{where} must not hold credentials (user:password@): "
            f"pass the token as token=... or in {DEFAULTS.token_env}"
        )
    if "?" in base_url or "#" in base_url:
        raise ConfigurationError(f"{where} must not have a query (?) or a fragment (#)")
    return base_url.rstrip("/")


def is_local(host: str) -> bool:
    """Whether plain http to `host` stays on this machine, or on a name that is never public."""
    host = host.rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".test")):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MIN_SECRET_LENGTH = 8
BLANK = "<token>"

# C0 and C1 controls and DEL (a newline forges a log line, an escape sequence drives a
# terminal), the Unicode line and paragraph separators, and the bidi controls.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class Scrubber:
    """Blanks one client's bearer token (and its `with_options` copies') in what the server
    sends back."""

    __slots__ = ("__weakref__", "_byte_forms", "_forms")

    def __init__(self, token: str | None) -> None:
        forms: list[str] = []
        if token is not None and len(token) >= MIN_SECRET_LENGTH:
            # As sent, and as a JSON string would spell it if it holds `"`, `\` or `/`.
            forms = [token, json.dumps(token)[1:-1], token.replace("/", "\\/")]
        self._forms = tuple(dict.fromkeys(forms))
        self._byte_forms = tuple(form.encode("utf-8") for form in self._forms)
        if self._forms:
            _LIVE.add(self)
            for name in _LIBRARY_LOGGERS:  # a logger adds the filter once
                logging.getLogger(name).addFilter(_blank_tokens)

    def blank(self, text: str) -> str:
        """`text` with the token blanked."""
        for form in self._forms:
            if form in text:
                text = text.replace(form, BLANK)
        return text

    def text(self, text: str) -> str:
        """`text`, fit for a message: the token blanked, every control character escaped."""
        for form in self._forms:  # `blank`, inline: every request id comes through here
            if form in text:
                text = text.replace(form, BLANK)
        return _CONTROLS.sub(escaped, text)

    def optional(self, text: str | None) -> str | None:
        """`text(...)` of a value that may be missing (a request id, say)."""
        return None if text is None else self.text(text)

    def bytes(self, body: bytes) -> bytes:
        """`body` with the token blanked."""
        for form in self._byte_forms:
            if form in body:
                body = body.replace(form, BLANK.encode())
        return body

    def value(self, value: Any) -> Any:
        """A parsed JSON body with the token blanked wherever it holds it (escaped or not)."""
        if not self._forms or isinstance(value, (int, float, bool)) or value is None:
            return value
        try:
            # `default=str`: a number kept as a `Decimal` (`_sse.py`) holds no token, and
            # must not make the rest go unscrubbed; in a scrubbed copy it is its digits.
            dumped = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            return value
        if not any(form in dumped for form in self._forms):
            return value
        return json.loads(self.blank(dumped))

    def exception(self, error: BaseException) -> BaseException:
        """`error`, and every error behind it (which may quote the server), token blanked."""
        if not self._forms:
            return error
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            text = repr(current.args)
            if any(form in text for form in self._forms):
                current.args = tuple(
                    self.blank(arg) if isinstance(arg, str) else self.blank(repr(arg))
                    for arg in current.args
                )
            current = current.__cause__ or current.__context__
        return error


_LIVE: weakref.WeakSet[Scrubber] = weakref.WeakSet()
_LIBRARY_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "hpack.hpack",
)


def _blank_tokens(record: logging.LogRecord) -> bool:
    """A log filter of the HTTP libraries: every live client's token blanked."""
    scrubbers = tuple(_LIVE)
    if not scrubbers:
        return True
    try:
        message = record.getMessage()
    except Exception:  # a record that cannot be formatted is the handler's to report
        return True
    clean = message
    for scrubber in scrubbers:
        clean = scrubber.blank(clean)
    if clean != message:
        record.msg, record.args = clean, ()
    return True


H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class Pool(Generic[H]):
    """The httpx client a client and its `with_options` copies send through: a caller's
    `http_client`, or one of class `make`, which the SDK owns (closes, makes anew in a
    forked child). `owner` names the client's class in error messages.

    Its connections belong to the process that opened them (a forked child reading one
    would read the parent's answers), and an async pool's to the event loop that opened
    them: `get` checks both at each call (a process id, not a process-wide fork hook).
    """

    FORK_LOCK_WAIT = 5.0  # making a pool takes moments; longer, the lock was held at fork

    def __init__(self, given: H | None, make: type[H], timeout: httpx.Timeout, owner: str) -> None:
        self._make: Callable[[], H] | None = None
        if given is None:
            # One verifying TLS context for every client (loading the CA bundle is most
            # of a new client's cost), made as httpx makes its own.
            verify = _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
            self._make = lambda: make(timeout=timeout, cookies=BoundedCookieJar(), verify=verify)
            given = self._make()
        self._http: H = given
        self._owner = owner
        self._pid: int | None = None  # the process it first served
        self._loop: object = None  # the event loop it first served (an async pool)
        self._fork_lock = threading.Lock()

    def own(self, make: Callable[[], H]) -> None:
        """The SDK owns the pool it was given (the testing kit's): `make` makes it anew."""
        self._make = make

    def get(self) -> H:
        """The pool, for this process and (an async pool) the event loop running now."""
        if self._pid != os.getpid():
            self._here()
        if isinstance(self._http, httpx.AsyncClient):
            from anyio.lowlevel import current_token  # here: `import silvia_client` without it

            try:  # asyncio's loop or trio's token (a new wrapper per call, of the same loop)
                loop: object = current_token().native_token
            except RuntimeError:  # no event loop runs in this thread: nothing noted
                loop = None
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
        """The pool for `close()` to close: None if a caller's, or in a process it did not
        serve (a child's copy of its parent's pool is the parent's to close)."""
        mine = self._make is not None and self._pid in (None, os.getpid())
        return self._http if mine else None

    def _here(self) -> None:
        """The first call in this process: note it, or (used before the fork) a pool anew."""
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

    A cookie past either bound is not kept (an update of one kept leaves the old value),
    so the first ones, a sticky session's, stay (`DEFAULTS.max_cookies`). The count is
    kept beside the jar (counting it for each of 300 cookies would cost more than
    reading them), made again after `clear`, which every cookie that goes goes through.
    """

    def __init__(
        self, max_cookies: int = DEFAULTS.max_cookies, max_bytes: int = DEFAULTS.max_cookie_bytes
    ) -> None:
        super().__init__()
        self.max_cookies = max_cookies
        self.max_bytes = max_bytes
        # (domain, path, name) -> its header bytes; None: count again.
        self._held: dict[tuple[str, str, str], int] | None = None

    def clear(
        self, domain: str | None = None, path: str | None = None, name: str | None = None
    ) -> None:
        self._held = None
        super().clear(domain, path, name)

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:  # under the jar's lock
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
    """`name=value; `, and an RFC 2965 cookie's `$Version`, `$Path` and `$Domain`."""
    size = len(cookie.name.encode()) + len((cookie.value or "").encode()) + 3
    if cookie.version:
        size += len(cookie.path.encode()) + len(cookie.domain.encode()) + 40
    return size


@functools.lru_cache(maxsize=4)
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # The environment httpx reads (`SSL_CERT_FILE`, `SSL_CERT_DIR`) is the key.
    return httpx.create_ssl_context()


_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: RequestTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


# A body shown in an error may hold citation targets, whose provider is never shown
# (wire contract, Privacy): its value is blanked, even when cut short.
_PROVIDER_VALUE = re.compile(r'("provider"\s*:\s*)"(?:[^"\\]|\\.)*(?:"|\\?$)')


def _preview(body: bytes) -> str:
    chars = DEFAULTS.body_preview_chars
    text = body[: chars * 4].decode("utf-8", errors="replace")  # 4: UTF-8's longest character
    text = _PROVIDER_VALUE.sub(r'\1"…"', text)
    text = " ".join(text.split())
    return text[:chars] + ("…" if len(text) > chars else "")


class ResponseErrors:
    """One client's responses into errors (`token_sent`: else a 401 says how to give one)."""

    __slots__ = ("scrub", "token_sent", "wire")

    def __init__(self, wire: WireFormat, scrub: Scrubber, *, token_sent: bool) -> None:
        self.wire: WireFormat = wire
        self.scrub: Scrubber = scrub
        self.token_sent: bool = token_sent

    def request_id(self, response: httpx.Response) -> str | None:
        """The server's id for the request, scrubbed, if it sent one."""
        value: str | None = response.headers.get(self.wire.request_id_header)
        return None if value is None else self.scrub.text(value)

    def _server_error(self, body: bytes) -> tuple[str | None, str | None, object]:
        """(error type, message, parsed body) of `{"error": {...}}`, `{"error": "..."}` or text."""
        body = self.scrub.bytes(body)
        try:
            parsed: object = json.loads(body)
        except (ValueError, RecursionError):
            return None, _preview(body) or None, body.decode("utf-8", errors="replace")
        parsed = self.scrub.value(parsed)
        error = parsed.get(self.wire.error_key) if isinstance(parsed, dict) else None
        if isinstance(error, str):
            return None, error, parsed
        if not isinstance(error, dict):  # a top-level `message`, if any
            error = {"message": parsed.get("message")} if isinstance(parsed, dict) else {}
        kind, message = error.get("type"), error.get("message")
        return (
            kind if isinstance(kind, str) else None,
            message if isinstance(message, str) else None,
            parsed,
        )

    def status_error(self, response: httpx.Response, body: bytes) -> APIStatusError:
        """The typed error for a non-2xx response (`body`: its start)."""
        status = response.status_code
        error_type, message, parsed = self._server_error(body)
        text = self.scrub.text(message or response.reason_phrase or "error")
        if status == 401 and not self.token_sent:
            text += f" (no token was sent: set {DEFAULTS.token_env}, or pass token=...)"
        cls = _STATUS_ERRORS.get(status, InternalServerError if status >= 500 else APIStatusError)
        error = cls(
            text,
            status_code=status,
            request_id=self.request_id(response),
            error_type=self.scrub.optional(error_type),
            body=parsed,
            response=self._kept(response, body),
        )
        if isinstance(error, RateLimitError):
            error.retry_after = parse_retry_after(response)
        return error

    def _kept(self, response: httpx.Response, body: bytes) -> httpx.Response:
        """A new, read response holding what an error keeps: the status, the headers and
        the (bounded) body, the token blanked in each; its request only the method and
        the URL without its query, so no header sent (`Authorization`) is held."""
        blank = self.scrub.blank
        headers = httpx.Headers(
            [(blank(name), blank(value)) for name, value in response.headers.multi_items()]
        )
        url = response.request.url.copy_with(query=None, fragment=None)
        kept = httpx.Response(
            response.status_code,
            content=self.scrub.bytes(body),
            request=httpx.Request(response.request.method, blank(str(url))),
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )
        # After building: the body is decoded already, so a `Content-Encoding` given to
        # the constructor would have it decoded again.
        kept.headers = headers
        return kept

    def unexpected(
        self, response: httpx.Response, body: bytes, expected: str
    ) -> UnexpectedResponseError:
        """A 2xx whose body is not `expected`; the message shows the start of the body."""
        shown = self.scrub.optional(response.headers.get("content-type")) or "no content type"
        preview = _preview(self.scrub.bytes(body))
        why = f"expected {expected}, got {response.status_code} {shown}: {preview!r}"
        return self.undecodable(response, why)

    def undecodable(
        self, response: httpx.Response, why: str | None = None
    ) -> UnexpectedResponseError:
        """A 2xx body that its Content-Encoding belies, or in one the SDK cannot decode (`why`)."""
        if why is None:
            encoding = response.headers.get("content-encoding", "")
            return self.unexpected(response, b"", f"a body that decodes as {encoding!r}")
        return UnexpectedResponseError(
            self.scrub.text(why),
            status_code=response.status_code,
            request_id=self.request_id(response),
            content_type=self.scrub.optional(response.headers.get("content-type")),
        )

    def connection_error(self, error: httpx.TransportError, url: httpx.URL) -> APIConnectionError:
        """The error for a transport error, caused by it: it names `scheme://host:port`,
        never the path or the query (a session id), nor any userinfo."""
        self.scrub.exception(error)
        port = url.port or {"http": 80, "https": 443}.get(url.scheme)
        where = f"{url.scheme}://{url.host}:{port}"
        if isinstance(error, httpx.TimeoutException):
            failure: APIConnectionError = APITimeoutError(
                f"timed out: {type(error).__name__} ({where})"
            )
        else:
            # In the operating system's words (the `errno` at the bottom of the chain):
            # httpx's sync and async transports word one refusal differently.
            reason, seen = str(error), set[int]()
            cause: BaseException | None = error
            while cause is not None and id(cause) not in seen:
                seen.add(id(cause))
                if isinstance(cause, socket.gaierror) and cause.strerror:
                    reason = cause.strerror  # a name that did not resolve
                elif isinstance(cause, OSError) and cause.errno is not None and cause.errno > 0:
                    reason = os.strerror(cause.errno)
                cause = cause.__cause__ or cause.__context__
            failure = APIConnectionError(
                self.scrub.text(f"connection to {where} failed: {type(error).__name__}: {reason}")
            )
        failure.__cause__ = error
        return failure
