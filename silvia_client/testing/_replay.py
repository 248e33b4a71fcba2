"""Playing a recording back in-process: `ReplayTransport`, what `Recording.transport()` returns.

Where things are: a POST gets the recorded response chunk for chunk, ending as
it did (`disconnected` raises `httpx.RemoteProtocolError`, `timeout`
`httpx.ReadTimeout`); a GET of the reloaded session gets the reload; anything
else a 404. With `timing`, chunks come at their recorded times. Bodies go as
streams of at most 64 KiB pieces (`_transport.pieces`), never a whole `content=`,
so the client's bounded body path and limits apply as live. `_replay_server.py`
shares `reloads` and `not_found`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import httpx

from .. import DEFAULT_WIRE
from ._recording_parts import Headers, RecordedResponse, written_value
from ._steps import json_bytes
from ._transport import PlayedStream, pieces, read_timeout

if TYPE_CHECKING:
    from ._recording import Recording

__all__ = ["ReplayTransport", "not_found", "reloads"]

_DROPPED = "peer closed connection without sending complete message body (replayed)"


def _last_segment(path: str) -> str:
    return unquote(urlsplit(path).path.rstrip("/").rpartition("/")[2])


def reloads(recording: Recording, path: str) -> bool:
    """Whether `path` is the session `recording` reloaded (its last segment, decoded)."""
    reload = recording.reload
    return reload is not None and _last_segment(reload.path) == _last_segment(path)


def not_found(message: str) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    """A 404 in the wire's error format: status, headers, body."""
    body = {DEFAULT_WIRE.error_key: {"type": "not_found_error", "message": message}}
    return 404, (("content-type", "application/json"),), json_bytes(body)


def _header_bytes(headers: Headers) -> list[tuple[bytes, bytes]]:
    """Headers for an in-process `httpx.Response`: UTF-8 bytes, values stripped.

    A lone surrogate (JSON can hold one) goes as its `\\udXXX` escape, not a crash.
    """
    return [(_utf8(name), _utf8(written_value(value))) for name, value in headers]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


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
        timeout = read_timeout(self._request)
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


def _replayed(response: RecordedResponse, pacer: _Pacer) -> Iterator[bytes | float]:
    """The plan of a recorded body for `PlayedStream`: each chunk when due, then its end."""
    for chunk in response.chunks:
        seconds, times_out = pacer.wait(chunk.at)
        yield seconds
        if times_out:
            raise pacer.timeout()
        pacer.heard()
        yield from pieces(chunk.data)
    seconds, times_out = pacer.wait(response.ended_at)
    yield seconds
    error = pacer.timeout() if times_out else pacer.ending(response)
    if error is not None:
        raise error


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
            and reloads(self.recording, request.url.path)
        ):
            reloaded = _header_bytes(reload.headers)
            stream = PlayedStream(pieces(reload.body))
            return httpx.Response(reload.status, headers=reloaded, stream=stream)
        status, headers, body = not_found("Not in this recording.")
        return httpx.Response(status, headers=list(headers), content=body)

    def _chat(self, request: httpx.Request) -> httpx.Response:
        response = self.recording.response
        pacer = _Pacer(request, time.perf_counter(), self.timing)
        return httpx.Response(
            response.status,
            headers=_header_bytes(response.headers),
            stream=PlayedStream(_replayed(response, pacer)),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the recording: its chat response, or its session for a reload."""
        request.read()
        return self._fixed(request) or self._chat(request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the recording: its chat response, or its session for a reload."""
        await request.aread()
        return self._fixed(request) or self._chat(request)
