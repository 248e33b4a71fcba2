"""Playing a recording back in-process: `ReplayTransport`, what `Recording.transport()` returns.

Where things are: a POST gets the recorded response chunk for chunk, ending as
it did (`disconnected` raises `httpx.RemoteProtocolError`, `timeout`
`httpx.ReadTimeout`); a GET of the reloaded session gets the reload; anything
else a 404. With `timing`, chunks come at their recorded times. Bodies go as
streams of at most 64 KiB pieces (`_transport.pieces`), never a whole `content=`,
so the client's bounded body path and limits apply as live. `_replay_server.py`
shares `reloads`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import httpx

from ._recording_parts import Headers, RecordedResponse, written_value
from ._steps import error_reply
from ._transport import PlayedStream, pieces, read_timeout

if TYPE_CHECKING:
    from ._recording import Recording


_DROPPED = "peer closed connection without sending complete message body (replayed)"


def _last_segment(path: str) -> str:
    return unquote(urlsplit(path).path.rstrip("/").rpartition("/")[2])


def reloads(recording: Recording, path: str) -> bool:
    """Whether `path` is the session `recording` reloaded (its last segment, decoded)."""
    reload = recording.reload
    return reload is not None and _last_segment(reload.path) == _last_segment(path)


def _header_bytes(headers: Headers) -> list[tuple[bytes, bytes]]:
    """Headers for an in-process `httpx.Response`: UTF-8 bytes (a lone surrogate as its
    `\\udXXX` escape, not a crash), values stripped."""
    return [(_utf8(name), _utf8(written_value(value))) for name, value in headers]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def _replayed(
    response: RecordedResponse, request: httpx.Request, timing: bool
) -> Iterator[bytes | float]:
    """The plan of a recorded body for `PlayedStream`: each chunk when due (with `timing`,
    at its recorded time; a wait past the read timeout raises it), then its end."""
    started = last = time.perf_counter()
    for at, data in [
        *((chunk.at, chunk.data) for chunk in response.chunks),
        (response.ended_at, None),
    ]:
        late = False
        if timing and at is not None:
            # Read at each wait, as httpcore reads it for each read: a client sets a
            # stream's read timeout (its idle timeout) once the head has come.
            timeout = read_timeout(request)
            late = timeout is not None and started + at - last > timeout
            due = last + timeout if late and timeout is not None else started + at
            yield max(0.0, due - time.perf_counter())
        else:
            yield 0.0
        if late or (data is None and response.end == "timeout"):
            raise httpx.ReadTimeout("timed out waiting for the next bytes", request=request)
        if data is None:
            if response.end == "disconnected":
                raise httpx.RemoteProtocolError(_DROPPED, request=request)
            return
        last = time.perf_counter()
        yield from pieces(data)


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
        reply = error_reply(404, "not_found_error", "Not in this recording.")
        return httpx.Response(reply.status, headers=list(reply.headers), content=reply.body)

    def _chat(self, request: httpx.Request) -> httpx.Response:
        response = self.recording.response
        return httpx.Response(
            response.status,
            headers=_header_bytes(response.headers),
            stream=PlayedStream(_replayed(response, request, self.timing)),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the recording: its chat response, or its session for a reload."""
        request.read()
        return self._fixed(request) or self._chat(request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the recording: its chat response, or its session for a reload."""
        await request.aread()
        return self._fixed(request) or self._chat(request)
