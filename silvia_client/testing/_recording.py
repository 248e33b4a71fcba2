"""Recordings: one chat turn as it crossed the wire, kept as a value and a file.

Where things are: the `Recording` value and its file are here; its parts (which
headers a recording keeps, `RecordingFormatError`) are in `_recording_parts.py`,
redaction in `_redact.py`, replay in `_replay.py` (in-process) and
`_replay_server.py` (by name), capture in `_record_transport.py`.

The file: `docs/recordings.md` describes the format (version 1) and its bounds;
`dumps` writes it, and `loads` reads it line by line, each line through a
pydantic model of its `type`, every problem a `RecordingFormatError` naming the
line and the field. Times are bounded without converting first (a 400-digit
integer is an error, not an `OverflowError`); bodies by what a client reads at
most (`MAX_BODY_BYTES`). Never in a recording: the bearer token and the
credential headers; account ids and providers are kept (`redacted()` makes the
copy to share). Headers HTTP cannot carry are kept too, for `header_errors()`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from .. import AsyncSilviaClient, SilviaClient, __version__
from .._wire import DEFAULTS
from ._recording_parts import (
    BODY_ENDS,
    BodyEnd,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    RecordingFormatError,
    header_error,
)
from ._redact import redact
from ._replay import ReplayTransport
from ._steps import json_text
from ._transport import IN_PROCESS_URL

FORMAT_NAME = "silvia-recording"
FORMAT_VERSION = 1
"""The version this SDK writes, and the newest it reads."""

MAX_SECONDS = 86_400
"""The latest time (`at`) a recording may hold, in seconds: a day."""

MAX_BODY_BYTES = DEFAULTS.max_response_bytes
"""The most bytes a recorded body (the response's chunks together, or the reload's) holds."""

_C = TypeVar("_C", SilviaClient, AsyncSilviaClient)
_MAX_COUNT = 2**53
"""The largest `version` or `lines`: integers any JSON reader keeps exact."""


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
    yield {
        "type": "response",
        "status": response.status,
        "headers": list(map(list, response.headers)),
    }
    for chunk in response.chunks:
        yield {"type": "chunk", "at": chunk.at, **encode_bytes(chunk.data)}
    yield {"type": "response_end", "at": response.ended_at, "how": response.end}
    if reload is not None:
        yield {
            "type": "reload",
            "path": reload.path,
            "status": reload.status,
            "headers": list(map(list, reload.headers)),
            **encode_bytes(reload.body),
        }


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


def _parse(data: bytes) -> tuple[RecordedRequest, RecordedResponse, RecordedReload | None, bool]:
    """A recording's parts from a file's bytes, and whether it is redacted."""
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
        """Read a recording from the file's contents (a lone surrogate: an error naming a line)."""
        request, response, reload, redacted = _parse(
            data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        )
        return cls(request, response, reload, is_redacted=redacted)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this recording to `path` (replacing the file)."""
        with open(path, "w", encoding="utf-8", newline="\n") as file:
            file.write(self.dumps())

    def dumps(self) -> str:
        """The file's contents: JSON lines, each ending in a newline."""
        lines = list(_lines(self))
        lines.append({"type": "end", "lines": len(lines) + 1})
        return "".join(json_text(line, (", ", ": ")) + "\n" for line in lines)

    def redacted(self) -> Recording:
        """A copy to share: each `provider` null, each account id a stable pseudonym
        (`_redact.py` says exactly what changes); the replay still types its targets."""
        return redact(self)

    def header_errors(self) -> tuple[RecordingFormatError, ...]:
        """Each recorded header HTTP cannot carry, as an error naming its line; () if none.

        A header name must be an RFC 9110 token, a value visible ASCII (spaces
        and tabs inside). `client()`, `async_client()` and `ReplayServer`
        raise the first of these; `load` keeps such a recording, and
        `silvia qa check` reports each as a finding.
        """
        # The lines of the file (`dumps()`): the response's headers are on line
        # 3, the reload's after the chunks and the `response_end` line.
        owners = [(3, "response", self.response.headers)]
        if self.reload is not None:
            owners.append((len(self.response.chunks) + 5, "reload", self.reload.headers))
        return tuple(
            RecordingFormatError(f"{message}: a replay cannot send it", line=line)
            for line, where, headers in owners
            for name, value in headers
            if (message := header_error(name, value, where)) is not None
        )

    def transport(self, *, timing: bool = False) -> ReplayTransport:
        """An httpx transport (sync and async) that replays this turn.

        A POST gets the recorded response, chunk for chunk (with `timing`, each
        at its recorded time); a GET of the reloaded session gets the recorded
        reload; anything else is a 404. In-process there is no wire a header
        could split, so it hands over even headers HTTP cannot carry, as their
        UTF-8 bytes (for `silvia qa check` to judge); `client()` refuses them.
        """
        return ReplayTransport(self, timing=timing)

    def client(self, *, timing: bool = False, **options: Any) -> SilviaClient:
        """A `SilviaClient` on `transport()`: no URL or token needed.

        `options` go to `SilviaClient` (`idle_timeout=`, `wire=`, ...). Retries
        default to 0: a replay answers the same every time. A recording with a
        header HTTP cannot carry is refused (`header_errors()`): a
        `RecordingFormatError` naming its line.
        """
        return self._client(SilviaClient, httpx.Client, timing, options)

    def async_client(self, *, timing: bool = False, **options: Any) -> AsyncSilviaClient:
        """The `AsyncSilviaClient` twin of `client()`."""
        return self._client(AsyncSilviaClient, httpx.AsyncClient, timing, options)

    def _client(self, kind: type[_C], http: Any, timing: bool, options: dict[str, Any]) -> _C:
        refuse_unwritable(self)
        # The replay transport holds no connections, so the httpx client the SDK
        # is handed (and does not close) has nothing to leak.
        options = {"base_url": IN_PROCESS_URL, "token": "replay", "max_retries": 0, **options}
        return kind(**options, http_client=http(transport=self.transport(timing=timing)))


def refuse_unwritable(recording: Recording, path: str | None = None) -> None:
    """Raise the first header error of `recording` (naming its line, and `path`), if any."""
    errors = recording.header_errors()
    if errors:
        errors[0].path = path
        raise errors[0]
