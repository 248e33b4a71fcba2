"""Recordings served by name: `ReplayServer`, for `silvia serve --replay` and in-process.

Where things are: `ReplayServer` answers on a socket (`serve_loopback()`) or
in-process (`transport()`). A request picks a recording as it picks a scenario
(the `x-silvia-scenario` header, or a `/recording NAME` message; else the
first); a POST gets its response chunk for chunk (`recorded_steps`), a GET its
reload, found by session id when no header names it. It wants a bearer token
and refuses a recording with a header HTTP cannot carry (`header_errors()`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .. import DEFAULT_WIRE
from ._loopback import LoopbackServer
from ._recording import Recording, refuse_unwritable
from ._recording_parts import Headers, RecordedResponse, written_value
from ._replay import reloads
from ._scenario import SCENARIO_HEADER, commanded
from ._steps import Drop, Pause, Raw, Reply, Request, Step, error_reply
from ._transport import InProcessTransport

RECORDING_COMMAND = "/recording"
"""A message starting `/recording <name>` picks that recording on a `ReplayServer`."""

_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})
# How long a replayed stall stays silent on a socket: the replaying client's own
# idle timeout is what ends it, as it ended the recorded one.
_STALL_SECONDS = 3600.0


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


class ReplayServer:
    """Recordings served by name (the first by default) on the reference server's runners."""

    def __init__(
        self, recordings: Mapping[str, Recording], *, token: str | None = None, timing: bool = False
    ) -> None:
        if not recordings:
            raise ValueError("a replay server needs at least one recording")
        if token is not None and not token.strip():
            raise ValueError("token must be a non-empty string, or None to accept any token")
        for recording in recordings.values():
            refuse_unwritable(recording)
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
        """Load each file, named by its stem (a `RecordingFormatError` names its file and line,
        also for a header HTTP cannot carry)."""
        from pathlib import Path

        recordings: dict[str, Recording] = {}
        for path in paths:
            name = Path(path).stem
            if name in recordings:
                raise ValueError(f"two recordings named {name!r}: file names must differ")
            recordings[name] = Recording.load(path)
            refuse_unwritable(recordings[name], path)
        return cls(recordings, token=token, timing=timing)

    def transport(self) -> InProcessTransport:
        """An in-process httpx transport (sync and async) to this server."""
        return InProcessTransport(self)

    def serve_loopback(self, host: str = "127.0.0.1", port: int = 0) -> LoopbackServer:
        """A real HTTP/1.1 server for these recordings; `with ... as url:`."""
        return LoopbackServer(self, host=host, port=port)

    def error_reply(self, status: int, error_type: str, message: str) -> Reply:
        """An error reply in the wire's error format."""
        return error_reply(status, error_type, message)

    def handle(self, request: Request) -> Reply:
        """Answer one request (any thread)."""
        if (refused := request.bearer(self._token)[1]) is not None:
            return self.error_reply(401, "authentication_error", refused)
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
                if recording.reload is not None and reloads(recording, request.target):
                    reload = recording.reload
                    return Reply(reload.status, _unframed(reload.headers), body=reload.body)
        return error_reply(404, "not_found_error", "Not in these recordings.")


def _named_in(body: bytes) -> str | None:
    """NAME from a chat body whose message starts `/recording NAME`."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    message = value.get(DEFAULT_WIRE.message_field) if isinstance(value, dict) else None
    return commanded(message, RECORDING_COMMAND)
