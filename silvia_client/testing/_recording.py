"""Recordings: one chat turn as it crossed the wire, kept as a value and a file.

Where things are: the `Recording` value is here; its parts (and which headers
a recording keeps) in `_recording_parts.py`, the file in `_recording_format.py`,
redaction in `_redact.py`, replay in `_replay.py` (in-process) and
`_replay_server.py` (by name), capture in `_record_transport.py`. None imports
this module back.

Never in a recording: the bearer token and the credential headers. Account ids
and providers are kept, so a replay is faithful; `redacted()` makes the copy to
share. A header HTTP cannot carry is kept for `silvia qa check` to judge, and
`header_errors()` lists it; `client()`, `async_client()` and `ReplayServer`
refuse such a recording.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._recording_parts import RecordedReload, RecordedRequest, RecordedResponse, header_error

if TYPE_CHECKING:
    from .. import AsyncSilviaClient, SilviaClient
    from ._recording_format import RecordingFormatError
    from ._replay import ReplayTransport

__all__ = ["Recording"]


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

        # A lone surrogate in a str is kept as bytes that are not UTF-8: an error naming its line.
        request, response, reload, redacted = parse(
            data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        )
        return cls(request, response, reload, is_redacted=redacted)

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

    def header_errors(self) -> tuple[RecordingFormatError, ...]:
        """Each recorded header HTTP cannot carry, as an error naming its line; () if none.

        A header name must be an RFC 9110 token, a value visible ASCII (spaces
        and tabs inside). `client()`, `async_client()` and `ReplayServer`
        raise the first of these; `load` keeps such a recording, and
        `silvia qa check` reports each as a finding.
        """
        from ._recording_format import RecordingFormatError

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

    def _replayable(self) -> None:
        errors = self.header_errors()
        if errors:
            raise errors[0]

    def transport(self, *, timing: bool = False) -> ReplayTransport:
        """An httpx transport (sync and async) that replays this turn.

        A POST gets the recorded response, chunk for chunk (with `timing`, each
        at its recorded time); a GET of the reloaded session gets the recorded
        reload; anything else is a 404. In-process there is no wire a header
        could split, so it hands over even headers HTTP cannot carry, as their
        UTF-8 bytes (for `silvia qa check` to judge); `client()` refuses them.
        """
        from ._replay import ReplayTransport

        return ReplayTransport(self, timing=timing)

    def client(self, *, timing: bool = False, **options: Any) -> SilviaClient:
        """A `SilviaClient` on `transport()`: no URL or token needed.

        `options` go to `SilviaClient` (`idle_timeout=`, `wire=`, ...). Retries
        default to 0: a replay answers the same every time. A recording with a
        header HTTP cannot carry is refused (`header_errors()`): a
        `RecordingFormatError` naming its line.
        """
        import httpx

        from .. import SilviaClient

        self._replayable()
        http = httpx.Client(transport=self.transport(timing=timing))
        return SilviaClient(**_replay_options(options), http_client=http)

    def async_client(self, *, timing: bool = False, **options: Any) -> AsyncSilviaClient:
        """The `AsyncSilviaClient` twin of `client()`."""
        import httpx

        from .. import AsyncSilviaClient

        self._replayable()
        http = httpx.AsyncClient(transport=self.transport(timing=timing))
        return AsyncSilviaClient(**_replay_options(options), http_client=http)


def _replay_options(options: Mapping[str, Any]) -> dict[str, Any]:
    from ._server import IN_PROCESS_URL

    # The replay transport holds no connections, so the httpx client the SDK
    # is handed (and does not close) has nothing to leak.
    return {"base_url": IN_PROCESS_URL, "token": "replay", "max_retries": 0, **options}
