"""Recordings: one chat turn as it crossed the wire, in a file a person can read.

Where things are: this module holds the file format and the `Recording` value
(`load`, `save`, `redacted()`, and the replay entry points, which live in
`_replay.py`); `_record_transport.py` captures recordings from a live client
(`RecordingTransport`, `record_turn`); `_redact.py` takes the token and, on
request, account identities out.

The format, version 1
---------------------

JSON lines: UTF-8 text, one JSON object per line, each with a `type`, in this
order (a file is one recording)::

    {"type": "recording", "format": "silvia-recording", "version": 1, "redacted": false,
     "written_by": "silvia-client 0.1.0"}
    {"type": "request", "method": "POST", "path": "/api/claude",
     "body": {"message": "How much is in checking?"}}
    {"type": "response", "status": 200, "headers": [["content-type", "text/event-stream"], ...]}
    {"type": "chunk", "at": 0.004121, "text": "event: session\\ndata: {...}\\n\\n"}
    {"type": "chunk", "at": 0.005008, "base64": "4oCc"}
    {"type": "response_end", "at": 0.031, "how": "closed"}
    {"type": "reload", "path": "/api/chat/sessions/sess_1", "status": 200,
     "headers": [...], "text": "{\\"session\\": ...}"}
    {"type": "end", "lines": 8}

- `request`: the chat request's method, path (no host) and JSON body. Its
  headers are not kept: they carry the credentials.
- `response`: the status and the response headers, names lower-case.
- `chunk`: the response body exactly as it arrived, one line per chunk, in
  order. `at` is the arrival time in seconds since the request went out. The
  bytes are `text` when they are valid UTF-8 on their own, else `base64`
  (standard alphabet, padded): a chunk that splits a character is base64.
- `response_end`: how the body ended, and when: `ended` (the server ended it),
  `closed` (the reader stopped reading, as a client does after `done`),
  `disconnected` (the connection broke mid-body) or `timeout` (no bytes within
  the reader's timeout). `at` is null when unknown.
- `reload`: present when the turn completed and its session was reloaded: the
  GET's path, status, headers and body, the body encoded as a chunk is.
- `end`: the last line, with the number of lines in the file (itself included),
  so that a truncated file is told from a complete one.

Unknown keys are ignored (a later version 1 writer may add some); an unknown
`type`, a line out of order, or a newer `version` is an error. Reading never
evaluates anything: lines are parsed with `json.loads` and checked field by
field, and every problem is a `RecordingFormatError` naming the line.

Never in a recording: the bearer token, and the `Authorization`,
`Proxy-Authorization`, `Cookie` and `Set-Cookie` headers (a `Recording` drops
them whoever builds it; the capturing side also drops any header whose value
holds the token and blanks the token in the bodies). Account ids and providers
are kept, so that a replay is faithful: a recording is raw wire data, written
only when asked, and `redacted()` makes the copy to share.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .._version import __version__
from ..errors import SilviaError

if TYPE_CHECKING:
    from .. import AsyncSilviaClient, SilviaClient
    from ._replay import ReplayTransport

__all__ = [
    "FORBIDDEN_HEADERS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "BodyEnd",
    "RecordedChunk",
    "RecordedReload",
    "RecordedRequest",
    "RecordedResponse",
    "Recording",
    "RecordingFormatError",
]

FORMAT_NAME = "silvia-recording"
FORMAT_VERSION = 1
"""The version this SDK writes, and the newest it reads."""

FORBIDDEN_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Headers no recording ever holds (names lower-case)."""

BodyEnd = Literal["ended", "closed", "disconnected", "timeout"]
_BODY_ENDS: tuple[BodyEnd, ...] = ("ended", "closed", "disconnected", "timeout")

Headers = tuple[tuple[str, str], ...]


class RecordingFormatError(SilviaError, ValueError):
    """A recording that cannot be read: truncated, corrupted, or from a newer format.

    `line` is the 1-based line the problem is on (None when it is the whole file);
    `path` is the file's, when `Recording.load` read one.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line
        self.path: str | None = None


def allowed_headers(headers: Iterable[tuple[str, str]]) -> Headers:
    """`headers` with lower-case names, without the `FORBIDDEN_HEADERS`."""
    return tuple(
        (name.lower(), value) for name, value in headers if name.lower() not in FORBIDDEN_HEADERS
    )


@dataclass(frozen=True)
class RecordedChunk:
    """Bytes of a response body as they arrived, `at` seconds after the request went out."""

    at: float
    data: bytes = field(repr=False)  # raw wire data: it may hold account ids and providers


@dataclass(frozen=True)
class RecordedRequest:
    """The chat request: method, path (no host) and JSON body; never its headers."""

    method: str
    path: str
    body: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class RecordedResponse:
    """The chat response: status, headers, the body's chunks and how the body ended."""

    status: int
    headers: Headers = field(default=(), repr=False)
    chunks: tuple[RecordedChunk, ...] = field(default=(), repr=False)
    end: BodyEnd = "ended"
    ended_at: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", allowed_headers(self.headers))
        object.__setattr__(self, "chunks", tuple(self.chunks))

    @property
    def body(self) -> bytes:
        """Every chunk's bytes, joined."""
        return b"".join(chunk.data for chunk in self.chunks)


@dataclass(frozen=True)
class RecordedReload:
    """The session GET after a completed turn: path, status, headers and body."""

    path: str
    status: int
    headers: Headers = field(default=(), repr=False)
    body: bytes = field(default=b"", repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", allowed_headers(self.headers))


@dataclass(frozen=True)
class Recording:
    """One recorded chat turn (and the session reloaded after it), replayable byte for byte.

    ::

        recording = Recording.load("turn.jsonl")
        with recording.client() as client, client.chat.stream("anything") as stream:
            turn = stream.until_done()  # the recorded turn, chunk for chunk
        recording.redacted().save("turn-to-share.jsonl")

    `is_redacted` says whether `redacted()` made it. The repr shows the shape
    of the exchange, never its data.
    """

    request: RecordedRequest
    response: RecordedResponse
    reload: RecordedReload | None = None
    is_redacted: bool = False

    def __repr__(self) -> str:
        response = self.response
        reload = "none" if self.reload is None else str(self.reload.status)
        return (
            f"<Recording {self.request.method} {self.request.path} -> {response.status}, "
            f"{len(response.chunks)} chunks, body {response.end}, reload {reload}>"
        )

    # -- files ---------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Recording:
        """Read a recording file (`RecordingFormatError` if it is not a whole, readable one)."""
        with open(path, "rb") as file:
            data = file.read()
        try:
            return cls.loads(data)
        except RecordingFormatError as error:
            error.path = os.fspath(path)
            raise

    @classmethod
    def loads(cls, data: bytes | str) -> Recording:
        """Read a recording from the file's contents."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        return _parse(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this recording to `path` (replacing the file)."""
        with open(path, "w", encoding="utf-8", newline="\n") as file:
            file.write(self.dumps())

    def dumps(self) -> str:
        """The file's contents: JSON lines, each ending in a newline."""
        lines = list(_lines(self))
        lines.append({"type": "end", "lines": len(lines) + 1})
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)

    # -- sharing -------------------------------------------------------------

    def redacted(self) -> Recording:
        """A copy to share: each `provider` null, each account id a stable pseudonym.

        See `_redact.py` for exactly what changes; the replay still parses, with
        typed account targets.
        """
        from ._redact import redact

        return redact(self)

    # -- replaying -----------------------------------------------------------

    def transport(self, *, timing: bool = False) -> ReplayTransport:
        """An httpx transport (sync and async) that replays this turn.

        A POST gets the recorded response, chunk for chunk (with `timing`, each
        at its recorded time); a GET of the reloaded session gets the recorded
        reload; anything else is a 404.
        """
        from ._replay import ReplayTransport

        return ReplayTransport(self, timing=timing)

    def client(self, *, timing: bool = False, **options: Any) -> SilviaClient:
        """A `SilviaClient` on `transport()`: no URL or token needed.

        `options` go to `SilviaClient` (`idle_timeout=`, `wire=`, ...). Retries
        default to 0: a replay answers the same every time.
        """
        import httpx

        from .. import SilviaClient

        http = httpx.Client(transport=self.transport(timing=timing))
        return SilviaClient(**_replay_options(options), http_client=http)

    def async_client(self, *, timing: bool = False, **options: Any) -> AsyncSilviaClient:
        """The `AsyncSilviaClient` twin of `client()`."""
        import httpx

        from .. import AsyncSilviaClient

        http = httpx.AsyncClient(transport=self.transport(timing=timing))
        return AsyncSilviaClient(**_replay_options(options), http_client=http)


def _replay_options(options: Mapping[str, Any]) -> dict[str, Any]:
    from ._server import IN_PROCESS_URL

    # The replay transport holds no connections, so the httpx client the SDK
    # is handed (and does not close) has nothing to leak.
    return {"base_url": IN_PROCESS_URL, "token": "replay", "max_retries": 0, **options}


# -- writing ----------------------------------------------------------------


def encode_bytes(data: bytes) -> dict[str, str]:
    """`{"text": ...}` when `data` is valid UTF-8 on its own, else `{"base64": ...}`."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def _lines(recording: Recording) -> Iterator[dict[str, Any]]:
    request, response, reload = recording.request, recording.response, recording.reload
    yield {
        "type": "recording",
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "redacted": recording.is_redacted,
        "written_by": f"silvia-client {__version__}",
    }
    yield {"type": "request", "method": request.method, "path": request.path, "body": request.body}
    yield {"type": "response", "status": response.status, "headers": _header_list(response)}
    for chunk in response.chunks:
        yield {"type": "chunk", "at": chunk.at, **encode_bytes(chunk.data)}
    yield {"type": "response_end", "at": response.ended_at, "how": response.end}
    if reload is not None:
        yield {
            "type": "reload",
            "path": reload.path,
            "status": reload.status,
            "headers": _header_list(reload),
            **encode_bytes(reload.body),
        }


def _header_list(owner: RecordedResponse | RecordedReload) -> list[list[str]]:
    return [[name, value] for name, value in owner.headers]


# -- reading ----------------------------------------------------------------


class _Line:
    """One parsed line, and checked access to its fields (errors name the line)."""

    def __init__(self, number: int, value: dict[str, Any]) -> None:
        self.number = number
        self.value = value
        self.type = value.get("type")

    def error(self, message: str) -> RecordingFormatError:
        return RecordingFormatError(message, line=self.number)

    def get(
        self, key: str, check: Callable[[Any], bool], what: str, *, optional: bool = False
    ) -> Any:
        if key not in self.value:
            if optional:
                return None
            raise self.error(f"the `{self.type}` line has no `{key}`")
        value = self.value[key]
        if (value is None and optional) or check(value):
            return value
        raise self.error(f"`{key}` must be {what}")

    def headers(self) -> Headers:
        value = self.get("headers", _is_list, "a list of [name, value] pairs")
        if not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)
            for pair in value
        ):
            raise self.error("`headers` must be a list of [name, value] pairs")
        return tuple((name, header) for name, header in value)

    def status(self) -> int:
        return int(self.get("status", _is_status, "an HTTP status (100 to 599)"))

    def path(self) -> str:
        return str(self.get("path", _is_path, "a path starting with `/`"))

    def at(self, *, optional: bool = False) -> float | None:
        value = self.get("at", _is_time, "a number of seconds (0 or more)", optional=optional)
        return None if value is None else float(value)

    def data(self) -> bytes:
        text, encoded = self.value.get("text"), self.value.get("base64")
        if isinstance(text, str) and encoded is None:
            return text.encode("utf-8")
        if isinstance(encoded, str) and text is None:
            try:
                return base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise self.error("`base64` is not valid base64") from None
        raise self.error("the bytes must be one of `text` (a string) or `base64` (a string)")


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _is_status(value: Any) -> bool:
    return type(value) is int and 100 <= value <= 599


def _is_path(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("/")


def _is_time(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value >= 0


def _is_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _parsed_lines(data: bytes) -> Iterator[_Line]:
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the newline that ends the last line
    for number, raw in enumerate(raw_lines, start=1):
        try:
            value = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise RecordingFormatError("not UTF-8 text", line=number) from None
        except (ValueError, RecursionError):
            raise RecordingFormatError(
                "not a JSON line (is the file truncated or corrupted?)", line=number
            ) from None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise RecordingFormatError("not a JSON object with a `type`", line=number)
        yield _Line(number, value)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._lines = _parsed_lines(data)
        self.last = 0

    def next(self, expected: str) -> _Line:
        line = next(self._lines, None)
        if line is None:
            where = f"after line {self.last}" if self.last else "before its first line"
            raise RecordingFormatError(
                f"the recording ends {where}, without its `{expected}` line: it is truncated"
            )
        self.last = line.number
        return line

    def expect(self, expected: str) -> _Line:
        line = self.next(expected)
        if line.type != expected:
            raise line.error(f"a `{line.type}` line where the `{expected}` line belongs")
        return line


def _parse(data: bytes) -> Recording:
    reader = _Reader(data)
    header = reader.next("recording")
    if header.type != "recording" or header.value.get("format") != FORMAT_NAME:
        raise header.error(f"not a {FORMAT_NAME} file (its first line must say so)")
    version = header.value.get("version")
    if type(version) is not int or version < 1:
        raise header.error("`version` must be a positive integer")
    if version > FORMAT_VERSION:
        raise header.error(
            f"format version {version} is newer than this silvia-client reads "
            f"({FORMAT_VERSION}): upgrade silvia-client"
        )
    redacted = header.get("redacted", lambda v: isinstance(v, bool), "true or false", optional=True)

    line = reader.expect("request")
    request = RecordedRequest(
        method=line.get("method", _is_str, "an HTTP method"),
        path=line.path(),
        body=line.value.get("body"),
    )
    line = reader.expect("response")
    status, headers = line.status(), line.headers()

    chunks: list[RecordedChunk] = []
    line = reader.next("response_end")
    while line.type == "chunk":
        at = line.at()
        assert at is not None
        chunks.append(RecordedChunk(at, line.data()))
        line = reader.next("response_end")
    if line.type != "response_end":
        raise line.error(f"a `{line.type}` line where a `chunk` or `response_end` line belongs")
    how = line.get("how", lambda v: v in _BODY_ENDS, f"one of {', '.join(_BODY_ENDS)}")
    response = RecordedResponse(status, headers, tuple(chunks), how, line.at(optional=True))

    reload = None
    line = reader.next("end")
    if line.type == "reload":
        reload = RecordedReload(line.path(), line.status(), line.headers(), line.data())
        line = reader.next("end")
    if line.type != "end":
        raise line.error(f"a `{line.type}` line where the `end` line belongs")
    count = line.get("lines", lambda v: type(v) is int, "a number of lines")
    if count != line.number:
        raise line.error(
            f"the recording says it has {count} lines but has {line.number}: it is corrupted"
        )
    extra = next(_parsed_lines_after(data, line.number), None)
    if extra is not None:
        raise RecordingFormatError("nothing may follow the `end` line", line=extra)
    return Recording(request, response, reload, is_redacted=bool(redacted))


def _parsed_lines_after(data: bytes, number: int) -> Iterator[int]:
    """Line numbers after `number` that hold anything (a file is one recording)."""
    lines = data.split(b"\n")
    for index in range(number, len(lines)):
        if lines[index].strip():
            yield index + 1
