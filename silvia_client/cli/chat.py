"""`silvia chat MESSAGE`: one turn, streamed live with citation markers, then its sources.

The answer goes to stdout, the session id and how to continue it to stderr. MESSAGE `-`,
or none when stdin is not a terminal, reads stdin; none on a terminal is an interactive
session (a turn per line, one session; Ctrl-C ends a turn or drops the line typed; Ctrl-D
ends it, status 0) whose `readline` history stays in memory and is cleared at the end:
the messages are a user's finances. The token is `SILVIA_TOKEN` only (no flag: it stays
out of shell history). An SDK error is one line on stderr and status 1.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import SilviaError
from . import _server
from ._common import (
    TurnOptions,
    UsageError,
    add_options,
    check_web_url,
    client_for,
    is_terminal,
    play_turn,
    say_error,
    scenario_headers,
)
from ._output import say

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia chat` to the command's subparsers."""
    parser = subparsers.add_parser(
        "chat",
        help="send a message and stream the answer with its citations",
        description="Send MESSAGE, stream the answer as it arrives with a marker [n] where each "
        "citation streamed in, then list the numbered sources with their links. "
        "MESSAGE '-' reads the message from stdin, and so does no MESSAGE when stdin is "
        "not a terminal; with no MESSAGE on a terminal, an interactive session: each line "
        "a turn of the same session, Ctrl-C ends a turn, Ctrl-D quits. Against the "
        "embedded reference server, --scenario NAME plays that scenario "
        "(see `silvia serve --list`).",
    )
    parser.add_argument(
        "message",
        metavar="MESSAGE",
        nargs="?",
        help="what to ask; '-' reads it from stdin (default: stdin when it is not a terminal, "
        "else an interactive session)",
    )
    add_options(parser, "--session", "--scenario", "--timeout", "--deadline")
    add_options(parser, "--base-url", "--web-url")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `silvia chat`; the exit status."""
    from ._render import TerminalRenderer

    check_web_url(args.web_url)
    options = TurnOptions(scenario_headers(args.scenario), args.timeout, args.deadline)
    message: str | None = args.message
    if message is None and is_terminal(sys.stdin):
        return _interactive(args, options)
    if message is None or message == "-":
        message = _read_stdin()
    if not message.strip():
        raise UsageError("MESSAGE must not be empty")
    render = TerminalRenderer(sys.stdout, web_url=args.web_url)
    server = _server.choose_server(args.base_url, "chat")
    try:
        with client_for(server) as client:
            turn, failure = play_turn(client, message, args.session, options, render)
    except SilviaError as error:  # the client could not be made (a malformed SILVIA_TOKEN, ...)
        turn, failure = None, error
    if failure is not None:
        return say_error("chat", failure, embedded=server.embedded)
    if turn is not None and turn.session_id:
        _say_session(turn.session_id)
    return 0


def _read_stdin() -> str:
    """The message on stdin, surrounding whitespace (the final newline) removed."""
    if sys.stdin is None:  # started with stdin closed
        raise UsageError("no MESSAGE, and no stdin to read it from")
    try:
        return sys.stdin.read().strip()
    except UnicodeDecodeError:
        raise UsageError("the message on stdin is not text in the terminal's encoding") from None
    except OSError as error:
        raise UsageError(f"cannot read the message from stdin: {error.strerror or error}") from None


def _say_session(session_id: str) -> None:
    say("chat", f"session {session_id}; continue it with --session {session_id}")


def _interactive(args: argparse.Namespace, options: TurnOptions) -> int:
    """The interactive session: a turn per line typed, until Ctrl-D."""
    from ._render import TerminalRenderer

    server = _server.choose_server(args.base_url, "chat")
    session: list[str] = [args.session] if args.session else []

    def on_session(session_id: str) -> None:
        if not session or session[-1] != session_id:
            session.append(session_id)

    try:
        import readline
    except ImportError:  # Windows, or a Python built without it: plain input() still works
        readline = None  # type: ignore[assignment]
    else:
        readline.clear_history()
    say(
        "chat",
        "each line you type is a turn of one session; Ctrl-C ends a turn, "
        "Ctrl-D (end of input) quits",
    )
    try:
        with client_for(server) as client:
            while True:
                try:
                    message = input("You: ")
                except KeyboardInterrupt:  # drop the line being typed, as a shell does
                    sys.stdout.write("\n")
                    continue
                except EOFError:  # Ctrl-D: the session ends here
                    sys.stdout.write("\n")
                    break
                if not message.strip():
                    continue
                render = TerminalRenderer(sys.stdout, web_url=args.web_url)
                current = session[-1] if session else None
                try:
                    _, failure = play_turn(
                        client, message, current, options, render, on_session, heading="Silvia: "
                    )
                except KeyboardInterrupt:
                    print("interrupted", file=sys.stderr, flush=True)
                    continue
                if failure is not None:
                    say_error("chat", failure, embedded=server.embedded)
                sys.stdout.write("\n")
                sys.stdout.flush()
    except SilviaError as error:  # the client could not be made (a malformed SILVIA_TOKEN, ...)
        return say_error("chat", error, embedded=server.embedded)
    finally:
        if readline is not None:
            readline.clear_history()
    if session:
        _say_session(session[-1])
    return 0
