"""Recordings: one chat turn as it crossed the wire, kept as a value and a file.

Where things are: this module holds the `Recording` value (`load`, `save`,
`redacted()`, and the replay entry points, which live in `_replay.py`);
`_recording_format.py` reads and writes the file, and its docstring is the
format's description; `_record_transport.py` captures recordings from a live
client (`RecordingTransport`, `record_turn`); `_redact.py` takes the token and,
on request, account identities out.

Never in a recording: the bearer token, and the `Authorization`,
`Proxy-Authorization`, `Cookie` and `Set-Cookie` headers (a `Recording` drops
them whoever builds it; the capturing side also drops any header whose value
holds the token and blanks the token in the bodies). Account ids and providers
are kept, so that a replay is faithful: a recording is raw wire data, written
only when asked, and `redacted()` makes the copy to share.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .. import AsyncSilviaClient, SilviaClient
    from ._replay import ReplayTransport

__all__ = [
    "BODY_ENDS",
    "FORBIDDEN_HEADERS",
    "BodyEnd",
    "Headers",
    "RecordedChunk",
    "RecordedReload",
    "RecordedRequest",
    "RecordedResponse",
    "Recording",
    "allowed_headers",
]

FORBIDDEN_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Headers no recording ever holds (names lower-case)."""

BodyEnd = Literal["ended", "closed", "disconnected", "timeout"]
BODY_ENDS: tuple[BodyEnd, ...] = ("ended", "closed", "disconnected", "timeout")

Headers = tuple[tuple[str, str], ...]


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
        from ._recording_format import RecordingFormatError

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
        from ._recording_format import parse

        return parse(data.encode("utf-8") if isinstance(data, str) else data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this recording to `path` (replacing the file)."""
        with open(path, "w", encoding="utf-8", newline="\n") as file:
            file.write(self.dumps())

    def dumps(self) -> str:
        """The file's contents: JSON lines, each ending in a newline."""
        from ._recording_format import dump

        return dump(self)

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
