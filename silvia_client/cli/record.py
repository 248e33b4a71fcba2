"""`silvia record MESSAGE -o FILE`: one live turn, saved as a recording to replay anywhere.

The answer streams to stderr (stdout stays empty) over a `RecordingTransport`, as
`testing.record_turn` records; the token never goes into the file. A failed turn is
recorded too (what a developer most needs to replay); then the file is replayed to say
what it holds: status 0 for a complete turn, 1 otherwise. `--redact` writes the copy to
share (`Recording.redacted`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import APIConnectionError, SilviaError
from . import _common
from ._common import UsageError
from ._output import say
from ._server import choose_server

if TYPE_CHECKING:
    from ..testing import Recording
    from ._server import ServerChoice

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia record` to the command's subparsers."""
    parser = subparsers.add_parser(
        "record",
        help="record one live turn to a file, to replay it later",
        description="Send MESSAGE, and save the exchange as a recording: the request, the "
        "response's status, headers and exact bytes with their arrival times, and the session "
        "reloaded after a completed turn. The answer streams to stderr as it is recorded. The "
        "token is never saved; account ids and providers are, unless --redact. Replay it with "
        "`silvia serve --replay FILE` or Recording.load().",
    )
    parser.add_argument("message", metavar="MESSAGE", help="what to ask")
    parser.add_argument(
        "-o", "--output", metavar="FILE", required=True, help="the recording file to write"
    )
    _common.add_options(parser, "--session", "--scenario", "--base-url")
    parser.add_argument(
        "--redact",
        action="store_true",
        help="replace each provider with null and each account id with a stable pseudonym",
    )
    parser.set_defaults(run=run)


def _record(
    server: ServerChoice, message: str, session_id: str | None, headers: dict[str, str] | None
) -> Recording:
    """The turn recorded and shown on stderr; a request with no response at all raises."""
    from ..testing import RecordingTransport
    from ._render import TerminalRenderer

    render = TerminalRenderer(sys.stderr)
    recorder = RecordingTransport(server.transport)
    with _common.client_for(server, recorder) as client, recorder.capture() as capture:
        turn, failure = _common.play_turn(
            client, message, session_id, _common.TurnOptions(headers), render, heading="Silvia: "
        )
        if failure is None and turn is not None and turn.session_id:
            try:
                client.sessions.get(turn.session_id, extra_headers=headers)
            except SilviaError as error:  # the reload's answer is recorded; replay shows it
                failure = error
    recording = capture.recording()
    if recording is None:
        raise failure if failure is not None else APIConnectionError("no chat response")
    return recording


def run(args: argparse.Namespace) -> int:
    """Run `silvia record`; the exit status."""
    if not args.message.strip():
        raise UsageError("MESSAGE must not be empty")
    headers = _common.scenario_headers(args.scenario)
    server = choose_server(args.base_url, "record")
    try:
        recording = _record(server, args.message, args.session, headers)
        if args.redact:
            recording = recording.redacted()
    except (SilviaError, ValueError) as error:
        return _common.say_error("record", error, embedded=server.embedded)
    try:
        recording.save(args.output)
    except OSError as error:
        say("record", f"cannot write {args.output}: {error.strerror or type(error).__name__}")
        return 1

    # What the file replays as: exactly what a developer loading it will see.
    failure: SilviaError | None = None
    with recording.client() as client:
        try:
            with client.chat.stream(args.message, session_id=args.session) as stream:
                turn = stream.until_done()
        except SilviaError as error:
            failure = error
    response = recording.response
    held = f"HTTP {response.status}, {len(response.chunks)} chunks"
    if recording.reload is not None:
        held += f", the session reloaded (HTTP {recording.reload.status})"
    say("record", f"wrote {args.output}: {held}")
    if failure is not None:
        return _common.say_error("record", failure, embedded=server.embedded, end=" (as recorded)")
    if turn.session_id:
        say("record", f"a complete turn in session {turn.session_id}")
    return 0
