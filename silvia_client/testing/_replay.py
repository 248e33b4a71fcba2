"""Playing recordings back: in-process (`ReplayTransport`) and on a socket (`ReplayServer`).

`ReplayTransport` (what `Recording.transport()` returns) is an httpx transport,
sync and async, for one recording. A POST, whatever its path and body, gets
the recorded response: status, headers, and the body chunk for chunk; then the
body ends the way it did (`disconnected` raises `httpx.RemoteProtocolError`,
`timeout` raises `httpx.ReadTimeout`, as on a socket). A GET whose last path
segment is the reloaded session's gets the recorded reload; any other request
is a 404. Without `timing` nothing waits; with it, each chunk comes at its
recorded time, and a gap longer than the request's read timeout ends in that
timeout, as it would live. Header values go without leading or trailing spaces
and tabs (a socket's reader drops them too), as UTF-8 bytes: in-process there is
no wire a header could split, so even one HTTP cannot carry is handed over
(`silvia qa check` judges it), while `Recording.client()` refuses it.

Every body, the reload's included, is handed over as a stream in pieces of at
most 64 KiB, as a socket's reads are, never as a whole `content=` (which httpx
reads and decodes at once): so a replaying client reads it through its own
bounded body path, a gzip body is inflated in pieces, and `max_response_bytes`
and `max_event_bytes` stop a recorded bomb exactly as they stop a live one.

`ReplayServer` serves several recordings by name, for `silvia serve --replay`
(`serve_loopback()`) or in-process (`transport()`, on the reference server's
runner). A request picks one the way it picks a scenario: the
`x-silvia-scenario` header, or a message starting `/recording NAME`; otherwise
the first. A session GET with no header finds the recording that reloaded that
session. In-process, its fixed bodies are streamed too (`_Streamed`). Like the
reference server, it wants a bearer token: any non-empty one, or exactly
`token=`. It writes headers on a socket, so it refuses a recording with a
header HTTP cannot carry (`Recording.header_errors()`: a name that is not an
RFC 9110 token, a value that is not visible ASCII with spaces and tabs
inside): a `RecordingFormatError` naming the line, and the file with
`from_files`.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from urllib.parse import unquote, urlsplit

import httpx

from .. import DEFAULT_WIRE
from ._loopback import LoopbackServer
from ._recording import Headers, RecordedResponse, Recording, written_value
from ._server import SCENARIO_HEADER
from ._steps import Drop, Pause, Raw, Reply, Request, Step, json_bytes
from ._transport import InProcessTransport

__all__ = ["RECORDING_COMMAND", "ReplayServer", "ReplayTransport"]

RECORDING_COMMAND = "/recording"
"""A message starting `/recording <name>` picks that recording on a `ReplayServer`."""

_DROPPED = "peer closed connection without sending complete message body (replayed)"
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})
# How long a replayed stall stays silent on a socket: the replaying client's own
# idle timeout is what ends it, as it ended the recorded one.
_STALL_SECONDS = 3600.0
# The most one read hands the client, as a socket's read would (httpx reads 64 KiB).
_PIECE = 64 * 1024


def _last_segment(path: str) -> str:
    return unquote(urlsplit(path).path.rstrip("/").rpartition("/")[2])


def _reloads(recording: Recording, path: str) -> bool:
    reload = recording.reload
    return reload is not None and _last_segment(reload.path) == _last_segment(path)


def _not_found(message: str) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    body = {DEFAULT_WIRE.error_key: {"type": "not_found_error", "message": message}}
    return 404, (("content-type", "application/json"),), json_bytes(body)


def _header_bytes(headers: Headers) -> list[tuple[bytes, bytes]]:
    """Headers for an in-process `httpx.Response`: UTF-8 bytes, values stripped.

    A lone surrogate (JSON can hold one) goes as its `\\udXXX` escape, not a crash.
    """
    return [(_utf8(name), _utf8(written_value(value))) for name, value in headers]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def _read_timeout(request: httpx.Request) -> float | None:
    timeout = request.extensions.get("timeout", {})
    value = timeout.get("read") if isinstance(timeout, dict) else None
    return float(value) if value is not None else None


class _Pacer:
    """When each chunk is due, with `timing`; and whether the wait outlasts the read timeout."""

    def __init__(self, request: httpx.Request, started: float, timing: bool) -> None:
        self._request = request
        self._started = started
        self._timing = timing
        self._last = started

    def wait(self, at: float | None) -> tuple[float, bool]:
        """(seconds to sleep, whether the read times out after them)."""
        if not self._timing or at is None:
            return 0.0, False
        now, due = time.perf_counter(), self._started + at
        # Read at each wait, as httpcore reads it for each read: a client sets a stream's
        # read timeout (its idle timeout) once the head has come.
        timeout = _read_timeout(self._request)
        if timeout is not None and due - self._last > timeout:
            return max(0.0, self._last + timeout - now), True
        return max(0.0, due - now), False

    def heard(self) -> None:
        self._last = time.perf_counter()

    def ending(self, response: RecordedResponse) -> Exception | None:
        if response.end == "disconnected":
            return httpx.RemoteProtocolError(_DROPPED, request=self._request)
        if response.end == "timeout":
            return self.timeout()
        return None

    def timeout(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout("timed out waiting for the next bytes", request=self._request)


def _pieces(data: bytes) -> Iterator[bytes]:
    """`data` in socket-sized pieces, so the client's limits stop it as they would live."""
    for start in range(0, len(data), _PIECE):
        yield data[start : start + _PIECE]


class _Whole(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A fixed body (the reload) as a stream, never as `content=`.

    httpx reads and decodes a `content=` body whole when the response is made,
    so a gzip reload would inflate all at once, before any limit; a stream goes
    through the client's own bounded body path, as a socket's does.
    """

    def __init__(self, body: bytes) -> None:
        self._body = body

    def __iter__(self) -> Iterator[bytes]:
        yield from _pieces(self._body)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in _pieces(self._body):
            yield piece


class _SyncReplay(httpx.SyncByteStream):
    def __init__(self, response: RecordedResponse, pacer: _Pacer) -> None:
        self._response = response
        self._pacer = pacer
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        pacer = self._pacer
        for chunk in self._response.chunks:
            seconds, times_out = pacer.wait(chunk.at)
            time.sleep(seconds)
            if times_out:
                raise pacer.timeout()
            if self._closed:
                return
            pacer.heard()
            for piece in _pieces(chunk.data):  # noqa: UP028 (line for line with its async twin)
                yield piece
        seconds, times_out = pacer.wait(self._response.ended_at)
        time.sleep(seconds)
        error = pacer.timeout() if times_out else pacer.ending(self._response)
        if error is not None:
            raise error

    def close(self) -> None:
        self._closed = True


class _AsyncReplay(httpx.AsyncByteStream):
    def __init__(self, response: RecordedResponse, pacer: _Pacer) -> None:
        self._response = response
        self._pacer = pacer
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pacer = self._pacer
        for chunk in self._response.chunks:
            seconds, times_out = pacer.wait(chunk.at)
            await asyncio.sleep(seconds)
            if times_out:
                raise pacer.timeout()
            if self._closed:
                return
            pacer.heard()
            for piece in _pieces(chunk.data):
                yield piece
        seconds, times_out = pacer.wait(self._response.ended_at)
        await asyncio.sleep(seconds)
        error = pacer.timeout() if times_out else pacer.ending(self._response)
        if error is not None:
            raise error

    async def aclose(self) -> None:
        self._closed = True


class ReplayTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Sync and async httpx transport replaying one `Recording` (see the module docstring)."""

    def __init__(self, recording: Recording, *, timing: bool = False) -> None:
        self.recording = recording
        self.timing = timing

    def _fixed(self, request: httpx.Request) -> httpx.Response | None:
        """The reply to a request that is not the chat POST, else None."""
        if request.method == "POST":
            return None
        reload = self.recording.reload
        if (
            request.method == "GET"
            and reload is not None
            and _reloads(self.recording, request.url.path)
        ):
            reloaded = _header_bytes(reload.headers)
            return httpx.Response(reload.status, headers=reloaded, stream=_Whole(reload.body))
        status, headers, body = _not_found("Not in this recording.")
        return httpx.Response(status, headers=list(headers), content=body)

    def _chat(
        self, request: httpx.Request, stream: type[_SyncReplay] | type[_AsyncReplay]
    ) -> httpx.Response:
        response = self.recording.response
        pacer = _Pacer(request, time.perf_counter(), self.timing)
        return httpx.Response(
            response.status,
            headers=_header_bytes(response.headers),
            stream=stream(response, pacer),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the recording: its chat response, or its session for a reload."""
        request.read()
        return self._fixed(request) or self._chat(request, _SyncReplay)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the recording: its chat response, or its session for a reload."""
        await request.aread()
        return self._fixed(request) or self._chat(request, _AsyncReplay)


# -- on a socket --------------------------------------------------------------


def recorded_steps(response: RecordedResponse, *, timing: bool = False) -> tuple[Step, ...]:
    """The loopback runner's steps for a recorded body (pauses only with `timing`)."""
    steps: list[Step] = []
    last = 0.0
    for chunk in response.chunks:
        if timing and chunk.at > last:
            steps.append(Pause(chunk.at - last))
            last = chunk.at
        steps.append(Raw(chunk.data))
    if response.end == "timeout":
        steps += [Pause(_STALL_SECONDS), Drop()]
    elif response.end == "disconnected":
        steps.append(Drop())
    return tuple(steps)


def _unframed(headers: Headers) -> Headers:
    # The runner frames the body itself (chunked, or a Content-Length).
    return tuple((name, written_value(value)) for name, value in headers if name not in _FRAMING)


def _refuse_unwritable(recording: Recording, path: str | None = None) -> None:
    """Raise the first header error of `recording` (naming its line, and `path`)."""
    errors = recording.header_errors()
    if errors:
        errors[0].path = path
        raise errors[0]


class ReplayServer:
    """Recordings served by name on the reference server's runners (see the module docstring).

    `recordings` maps names to recordings, the first being the default;
    `from_files` names each file by its stem.
    """

    def __init__(
        self,
        recordings: Mapping[str, Recording],
        *,
        token: str | None = None,
        timing: bool = False,
    ) -> None:
        if not recordings:
            raise ValueError("a replay server needs at least one recording")
        if token is not None and not token.strip():
            raise ValueError("token must be a non-empty string, or None to accept any token")
        for recording in recordings.values():
            _refuse_unwritable(recording)
        self.recordings: dict[str, Recording] = dict(recordings)
        self.default: str = next(iter(self.recordings))
        self.timing = timing
        self._token = token

    def __repr__(self) -> str:
        required = self._token is not None
        return f"<ReplayServer recordings={list(self.recordings)} token_required={required}>"

    @classmethod
    def from_files(
        cls, paths: list[str], *, token: str | None = None, timing: bool = False
    ) -> ReplayServer:
        """Load each file (a `RecordingFormatError` names its file and line); names are stems.

        A file with a header HTTP cannot carry is refused the same way.
        """
        from pathlib import Path

        recordings: dict[str, Recording] = {}
        for path in paths:
            name = Path(path).stem
            if name in recordings:
                raise ValueError(f"two recordings named {name!r}: file names must differ")
            recordings[name] = Recording.load(path)
            _refuse_unwritable(recordings[name], path)
        return cls(recordings, token=token, timing=timing)

    def transport(self) -> InProcessTransport:
        """An in-process httpx transport (sync and async) to this server.

        Every body goes as a stream (`_Streamed`), so a client reads even a
        reload through its own bounded body path, decompressed in pieces.
        """
        return InProcessTransport(_Streamed(self))

    def serve_loopback(self, host: str = "127.0.0.1", port: int = 0) -> LoopbackServer:
        """A real HTTP/1.1 server for these recordings; `with ... as url:`."""
        return LoopbackServer(self, host=host, port=port)

    def error_reply(self, status: int, error_type: str, message: str) -> Reply:
        """An error reply in the wire's error format."""
        body = {DEFAULT_WIRE.error_key: {"type": error_type, "message": message}}
        return Reply(status, (("content-type", "application/json"),), body=json_bytes(body))

    def handle(self, request: Request) -> Reply:
        """Answer one request (any thread)."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return self.error_reply(401, "authentication_error", "Missing bearer token.")
        if self._token is not None and not hmac.compare_digest(
            token.encode(), self._token.encode()
        ):
            return self.error_reply(401, "authentication_error", "Invalid bearer token.")
        name = request.headers.get(SCENARIO_HEADER, "").strip() or None
        if request.method == "POST":
            name = name or _named_in(request.body)
        if name is not None and name not in self.recordings:
            known = ", ".join(self.recordings)
            return self.error_reply(
                400,
                "invalid_request_error",
                f"No recording named {name!r}; this server has {known}.",
            )
        if request.method == "POST":
            response = self.recordings[name or self.default].response
            steps = recorded_steps(response, timing=self.timing)
            return Reply(response.status, _unframed(response.headers), steps=steps)
        if request.method == "GET":
            candidates = [self.recordings[name]] if name else list(self.recordings.values())
            for recording in candidates:
                if recording.reload is not None and _reloads(recording, request.target):
                    reload = recording.reload
                    return Reply(reload.status, _unframed(reload.headers), body=reload.body)
        status, headers, body = _not_found("Not in these recordings.")
        return Reply(status, headers, body=body)


class _Streamed:
    """A `ReplayServer` whose fixed bodies are streamed steps, for the in-process transport.

    The in-process transport hands a fixed body to httpx as `content=`, which
    httpx reads and decodes whole at once (a gzip reload inflated before any
    limit); as steps it is read the way a socket's body is. On a socket the
    server itself answers, with a Content-Length.
    """

    def __init__(self, server: ReplayServer) -> None:
        self._server = server

    def handle(self, request: Request) -> Reply:
        reply = self._server.handle(request)
        if reply.steps is not None or not reply.body:
            return reply
        steps = tuple(Raw(piece) for piece in _pieces(reply.body))
        return Reply(reply.status, reply.headers, steps=steps)


def _named_in(body: bytes) -> str | None:
    """NAME from a chat body whose message starts `/recording NAME`."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    message = value.get(DEFAULT_WIRE.message_field) if isinstance(value, dict) else None
    words = message.split(maxsplit=2) if isinstance(message, str) else []
    return words[1] if len(words) >= 2 and words[0] == RECORDING_COMMAND else None
