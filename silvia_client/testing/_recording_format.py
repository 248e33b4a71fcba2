"""The recording file: writing a `Recording` as JSON lines, and reading one back, strictly.

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
field, and every problem is a `RecordingFormatError` naming the line. A file
is untrusted input, so every number is bounded: times (`at`) finite, 0 or more
and at most a day (`MAX_SECONDS`), checked without converting first (a
400-digit integer is an error, not an `OverflowError`); `version` and `lines`
integers from 1 to 2**53 (what any JSON reader keeps exact); `status` 100 to 599.
Sizes are bounded by what a live client reads at most (`MAX_BODY_BYTES`, the
default `max_response_bytes`): the response's chunks together, and the reload's
body, each hold at most that many bytes as recorded (a gzip body inflates
further; a replay's client bounds that as it reads, as it does live). Every
field has its type checked: a `method` is an HTTP token, a `path` a string
starting with `/`, `headers` a list of pairs of strings, `redacted` a boolean.

Headers are kept as the file has them, even those HTTP cannot carry, so that
`silvia qa check` can judge such a recording. Writing them is another matter:
`Recording.header_errors()` (in `_recording.py`) lists each header whose name
is not an RFC 9110 token or whose value is not visible ASCII (spaces and tabs
inside; leading and trailing ones are dropped when written), each a
`RecordingFormatError` naming its line, and `Recording.client()` and
`ReplayServer` refuse such a recording (a CR LF in a value would add headers
of its own on a socket).

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
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeGuard

from .. import __version__
from .._wire import DEFAULTS
from ..errors import SilviaError
from ._recording_parts import (
    BODY_ENDS,
    Headers,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
)

if TYPE_CHECKING:
    from ._recording import Recording

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_BODY_BYTES",
    "MAX_SECONDS",
    "RecordingFormatError",
    "dump",
    "encode_bytes",
    "parse",
]

FORMAT_NAME = "silvia-recording"
FORMAT_VERSION = 1
"""The version this SDK writes, and the newest it reads."""

MAX_SECONDS = 86_400
"""The latest time (`at`) a recording may hold, in seconds: a day."""

MAX_BODY_BYTES = DEFAULTS.max_response_bytes
"""The most bytes a recorded body (the response's chunks together, or the reload's) holds."""

_MAX_COUNT = 2**53
"""The largest `version` or `lines`: integers any JSON reader keeps exact."""


class RecordingFormatError(SilviaError, ValueError):
    """A recording that cannot be read: truncated, corrupted, or from a newer format.

    `line` is the 1-based line the problem is on (None when it is the whole file);
    `path` is the file's, when `Recording.load` read one.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line
        self.path: str | None = None


# -- writing ----------------------------------------------------------------


def encode_bytes(data: bytes) -> dict[str, str]:
    """`{"text": ...}` when `data` is valid UTF-8 on its own, else `{"base64": ...}`."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def dump(recording: Recording) -> str:
    """The file's contents: JSON lines, each ending in a newline."""
    lines = list(_lines(recording))
    lines.append({"type": "end", "lines": len(lines) + 1})
    return "".join(_json_line(line) + "\n" for line in lines)


_SURROGATE = re.compile(r"[\ud800-\udfff]")  # raw: no lone surrogate in the source


def _json_line(value: dict[str, Any]) -> str:
    """One line, as UTF-8 can write it: a lone surrogate (JSON holds one) as its escape."""
    text = json.dumps(value, ensure_ascii=False)
    # Outside strings JSON is ASCII, so every surrogate here is inside one.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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
        value = self.get(
            "at", _is_time, f"a number of seconds, from 0 to {MAX_SECONDS}", optional=optional
        )
        return None if value is None else float(value) + 0.0  # (-0.0 is 0.0)

    def data(self, room: int, what: str) -> bytes:
        """The line's bytes; an error if they are more than `room` (what `what` has left)."""
        text, encoded = self.value.get("text"), self.value.get("base64")
        if isinstance(text, str) and encoded is None:
            # A character is at most 4 bytes: check before encoding a huge one.
            if len(text) > room:
                raise self._too_large(what)
            data = _utf8(text)
            if data is None:
                raise self.error("`text` holds a lone surrogate, which is not UTF-8")
        elif isinstance(encoded, str) and text is None:
            if len(encoded) // 4 * 3 > room + 2:
                raise self._too_large(what)
            try:
                data = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise self.error("`base64` is not valid base64") from None
        else:
            raise self.error("the bytes must be one of `text` (a string) or `base64` (a string)")
        if len(data) > room:
            raise self._too_large(what)
        return data

    def _too_large(self, what: str) -> RecordingFormatError:
        return self.error(
            f"{what} would hold more than {MAX_BODY_BYTES:,} bytes, "
            "the most a client reads (max_response_bytes)"
        )


def _utf8(text: str) -> bytes | None:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _is_status(value: Any) -> bool:
    return type(value) is int and 100 <= value <= 599


def _is_path(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("/")


def _is_time(value: Any) -> bool:
    # An int is compared as it is: converting a huge one to float would overflow.
    if type(value) is int:
        return 0 <= value <= MAX_SECONDS
    return type(value) is float and math.isfinite(value) and 0 <= value <= MAX_SECONDS


def _is_count(value: Any) -> TypeGuard[int]:
    return type(value) is int and 1 <= value <= _MAX_COUNT


_METHOD = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,32}")


def _is_method(value: Any) -> bool:
    return isinstance(value, str) and _METHOD.fullmatch(value) is not None


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


def parse(data: bytes) -> tuple[RecordedRequest, RecordedResponse, RecordedReload | None, bool]:
    """A recording's parts from a file's bytes, and whether it is redacted.

    `RecordingFormatError` names the bad line. `Recording.loads` makes the value.
    """
    reader = _Reader(data)
    header = reader.next("recording")
    if header.type != "recording" or header.value.get("format") != FORMAT_NAME:
        raise header.error(f"not a {FORMAT_NAME} file (its first line must say so)")
    version = header.value.get("version")
    if not _is_count(version):
        raise header.error("`version` must be a positive integer (at most 2**53)")
    if version > FORMAT_VERSION:
        raise header.error(
            f"format version {version} is newer than this silvia-client reads "
            f"({FORMAT_VERSION}): upgrade silvia-client"
        )
    redacted = header.get("redacted", lambda v: isinstance(v, bool), "true or false", optional=True)

    line = reader.expect("request")
    request = RecordedRequest(
        method=line.get("method", _is_method, "an HTTP method (a token of 1 to 32 characters)"),
        path=line.path(),
        body=line.value.get("body"),
    )
    line = reader.expect("response")
    status, headers = line.status(), line.headers()

    chunks: list[RecordedChunk] = []
    room = MAX_BODY_BYTES
    line = reader.next("response_end")
    while line.type == "chunk":
        at = line.at()
        assert at is not None
        piece = line.data(room, "the response's chunks")
        room -= len(piece)
        chunks.append(RecordedChunk(at, piece))
        line = reader.next("response_end")
    if line.type != "response_end":
        raise line.error(f"a `{line.type}` line where a `chunk` or `response_end` line belongs")
    how = line.get("how", lambda v: v in BODY_ENDS, f"one of {', '.join(BODY_ENDS)}")
    response = RecordedResponse(status, headers, tuple(chunks), how, line.at(optional=True))

    reload = None
    line = reader.next("end")
    if line.type == "reload":
        reload = RecordedReload(
            line.path(),
            line.status(),
            line.headers(),
            line.data(MAX_BODY_BYTES, "the reload's body"),
        )
        line = reader.next("end")
    if line.type != "end":
        raise line.error(f"a `{line.type}` line where the `end` line belongs")
    count = line.get("lines", _is_count, "a number of lines (1 to 2**53)")
    if count != line.number:
        raise line.error(
            f"the recording says it has {count} lines but has {line.number}: it is corrupted"
        )
    extra = next(_parsed_lines_after(data, line.number), None)
    if extra is not None:
        raise RecordingFormatError("nothing may follow the `end` line", line=extra)
    return request, response, reload, bool(redacted)


def _parsed_lines_after(data: bytes, number: int) -> Iterator[int]:
    """Line numbers after `number` that hold anything (a file is one recording)."""
    lines = data.split(b"\n")
    for index in range(number, len(lines)):
        if lines[index].strip():
            yield index + 1
