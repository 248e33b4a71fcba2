"""The recording file: a `Recording` written as JSON lines, and read back strictly.

Where things are: `docs/recordings.md` describes the format (version 1) and its
bounds; here `dump` writes it, and `parse` reads it line by line, each line through
a pydantic model of its `type`, every problem a `RecordingFormatError` naming the
line and the field. Times are bounded without converting first (a 400-digit
integer is an error, not an `OverflowError`); bodies by what a client reads at
most (`MAX_BODY_BYTES`). Headers are kept as the file has them, even those HTTP
cannot carry: `Recording.header_errors()` judges those.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from .. import __version__
from .._wire import DEFAULTS
from ..errors import SilviaError
from ._recording_parts import (
    BODY_ENDS,
    BodyEnd,
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

_Str = Annotated[str, Strict()]
_Seconds = Annotated[float, Strict(), Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
_Count = Annotated[int, Strict(), Field(ge=1, le=_MAX_COUNT)]
_Status = Annotated[int, Strict(), Field(ge=100, le=599)]
_Path = Annotated[str, Strict(), Field(pattern=r"^/")]
_Method = Annotated[str, Strict(), Field(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,32}$")]
_Headers = list[tuple[_Str, _Str]]

# What each field must be, as an error says it.
_MUST_BE = {
    "version": "a positive integer (at most 2**53)",
    "redacted": "true or false",
    "method": "an HTTP method (a token of 1 to 32 characters)",
    "path": "a path starting with `/`",
    "status": "an HTTP status (100 to 599)",
    "headers": "a list of [name, value] pairs",
    "at": f"a number of seconds, from 0 to {MAX_SECONDS}",
    "how": f"one of {', '.join(BODY_ENDS)}",
    "lines": "a number of lines (1 to 2**53)",
    "text": "a string",
    "base64": "a string",
}


class _Line(BaseModel):
    # Each scalar strict: JSON's types as they are (no "1" for 1, no true for 1).
    model_config = ConfigDict(extra="ignore", frozen=True)


_M = TypeVar("_M", bound=_Line)


class _Header(_Line):
    version: _Count
    redacted: Annotated[bool, Strict()] | None = None


class _Request(_Line):
    method: _Method
    path: _Path
    body: Any = None


class _Response(_Line):
    status: _Status
    headers: _Headers


class _Bytes(_Line):
    text: _Str | None = None
    base64: _Str | None = None


class _Chunk(_Bytes):
    at: _Seconds


class _ResponseEnd(_Line):
    at: _Seconds | None = None
    how: BodyEnd


class _Reload(_Bytes):
    path: _Path
    status: _Status
    headers: _Headers


class _End(_Line):
    lines: _Count


_MODELS: dict[str, type[_Line]] = {
    "recording": _Header,
    "request": _Request,
    "response": _Response,
    "chunk": _Chunk,
    "response_end": _ResponseEnd,
    "reload": _Reload,
    "end": _End,
}


class _Parsed:
    """One line of the file: its number, its `type` and its JSON object."""

    def __init__(self, number: int, value: dict[str, Any]) -> None:
        self.number, self.value, self.type = number, value, value["type"]

    def error(self, message: str) -> RecordingFormatError:
        return RecordingFormatError(message, line=self.number)

    def read(self, model: type[_M]) -> _M:
        """The line through `model`: an error names the line and the first bad field."""
        try:
            return model.model_validate(self.value)
        except ValidationError as invalid:
            key = str(invalid.errors()[0]["loc"][0])
            if key not in self.value:
                raise self.error(f"the `{self.type}` line has no `{key}`") from None
            raise self.error(f"`{key}` must be {_MUST_BE[key]}") from None

    def data(self, line: _Bytes, room: int, what: str) -> bytes:
        """The line's bytes; an error if they are more than `room` (what `what` has left)."""
        text, encoded = line.text, line.base64
        if text is not None and encoded is None:
            if len(text) > room:  # a character is at least a byte: refused before encoding
                raise self._too_large(what)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                raise self.error("`text` holds a lone surrogate, which is not UTF-8") from None
        elif encoded is not None and text is None:
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


class _Reader:
    """The file's lines in order, each parsed as JSON; `next` and `expect` say what belongs."""

    def __init__(self, data: bytes) -> None:
        self.raw = data.split(b"\n")
        if self.raw[-1] == b"":
            self.raw.pop()  # the newline that ends the last line
        self.last = 0

    def next(self, expected: str) -> _Parsed:
        if self.last == len(self.raw):
            where = f"after line {self.last}" if self.last else "before its first line"
            raise RecordingFormatError(
                f"the recording ends {where}, without its `{expected}` line: it is truncated"
            )
        self.last += 1
        try:
            value = json.loads(self.raw[self.last - 1].decode("utf-8"))
        except UnicodeDecodeError:
            raise RecordingFormatError("not UTF-8 text", line=self.last) from None
        except (ValueError, RecursionError):
            raise RecordingFormatError(
                "not a JSON line (is the file truncated or corrupted?)", line=self.last
            ) from None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise RecordingFormatError("not a JSON object with a `type`", line=self.last)
        return _Parsed(self.last, value)

    def expect(self, *expected: str) -> _Parsed:
        line = self.next(expected[-1])
        if line.type not in expected:
            belongs = " or ".join(f"`{name}`" for name in expected)
            article = "the" if len(expected) == 1 else "a"
            raise line.error(f"a `{line.type}` line where {article} {belongs} line belongs")
        return line


def parse(data: bytes) -> tuple[RecordedRequest, RecordedResponse, RecordedReload | None, bool]:
    """A recording's parts from a file's bytes, and whether it is redacted.

    `RecordingFormatError` names the bad line. `Recording.loads` makes the value.
    """
    reader = _Reader(data)
    line = reader.next("recording")
    if line.type != "recording" or line.value.get("format") != FORMAT_NAME:
        raise line.error(f"not a {FORMAT_NAME} file (its first line must say so)")
    header = line.read(_Header)
    if header.version > FORMAT_VERSION:
        raise line.error(
            f"format version {header.version} is newer than this silvia-client reads "
            f"({FORMAT_VERSION}): upgrade silvia-client"
        )
    request = reader.expect("request").read(_Request)
    response = reader.expect("response").read(_Response)

    chunks: list[RecordedChunk] = []
    room = MAX_BODY_BYTES
    line = reader.expect("chunk", "response_end")
    while line.type == "chunk":
        chunk = line.read(_Chunk)
        piece = line.data(chunk, room, "the response's chunks")
        room -= len(piece)
        chunks.append(RecordedChunk(chunk.at + 0.0, piece))  # (-0.0 is 0.0)
        line = reader.expect("chunk", "response_end")
    end = line.read(_ResponseEnd)
    ended_at = None if end.at is None else end.at + 0.0

    reload = None
    line = reader.expect("reload", "end")
    if line.type == "reload":
        got = line.read(_Reload)
        body = line.data(got, MAX_BODY_BYTES, "the reload's body")
        reload = RecordedReload(got.path, got.status, tuple(got.headers), body)
        line = reader.expect("end")
    count = line.read(_End).lines
    if count != line.number:
        raise line.error(
            f"the recording says it has {count} lines but has {line.number}: it is corrupted"
        )
    for number in range(line.number, len(reader.raw)):
        if reader.raw[number].strip():
            raise RecordingFormatError("nothing may follow the `end` line", line=number + 1)
    return (
        RecordedRequest(request.method, request.path, request.body),
        RecordedResponse(
            response.status, tuple(response.headers), tuple(chunks), end.how, ended_at
        ),
        reload,
        bool(header.redacted),
    )
