"""`silvia chat MESSAGE`: one turn, streamed live with citation markers, then its sources.

The answer goes to stdout, the session id and how to continue it to stderr. MESSAGE
`-`, or none when stdin is not a terminal, reads stdin; none on a terminal is an
interactive session (`_interactive.py`). The turn on screen, the options and an
error's line are `_common.py`'s; the server is `_server.choose_server`'s; the token
is `SILVIA_TOKEN` only (no flag: it stays out of shell history). An SDK error is
one line on stderr and status 1.
"""

from __future__ import annotations

import argparse
import sys

from ._common import (
    TurnOptions,
    add_base_url_argument,
    add_scenario_argument,
    add_timeout_arguments,
    add_web_url_argument,
    check_web_url,
    client_for,
    error_line,
    is_terminal,
    play_turn,
    read_stdin,
    scenario_headers,
)

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia chat` to the command's subparsers."""
    parser = subparsers.add_parser(
        "chat",
        help="send a message and stream the answer with its citations",
        description=(
            "Send MESSAGE, stream the answer as it arrives with a marker [n] where each "
            "citation streamed in, then list the numbered sources with their links. "
            "MESSAGE '-' reads the message from stdin, and so does no MESSAGE when stdin is "
            "not a terminal; with no MESSAGE on a terminal, an interactive session: each line "
            "a turn of the same session, Ctrl-C ends a turn, Ctrl-D quits. Against the "
            "embedded reference server, --scenario NAME plays that scenario "
            "(see `silvia serve --list`)."
        ),
    )
    parser.add_argument(
        "message",
        metavar="MESSAGE",
        nargs="?",
        help="what to ask; '-' reads it from stdin (default: stdin when it is not a terminal, "
        "else an interactive session)",
    )
    parser.add_argument(
        "--session", metavar="ID", help="continue this session (default: start a new one)"
    )
    add_scenario_argument(parser)
    add_timeout_arguments(parser)
    add_base_url_argument(parser)
    add_web_url_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `silvia chat`; the exit status."""
    from .. import SilviaError
    from ._args import UsageError
    from ._render import TerminalRenderer, clean
    from ._server import choose_server

    check_web_url(args.web_url)
    options = TurnOptions(scenario_headers(args.scenario), args.timeout, args.deadline)
    message: str | None = args.message
    if message is None and is_terminal(sys.stdin):
        from ._interactive import run_interactive

        return run_interactive(args, options)
    if message is None or message == "-":
        message = read_stdin()
    if not message.strip():
        raise UsageError("MESSAGE must not be empty")
    render = TerminalRenderer(sys.stdout, web_url=args.web_url)
    server = choose_server(args.base_url, "chat")
    try:
        with client_for(server) as client:
            turn, failure = play_turn(client, message, args.session, options, render)
    except SilviaError as error:  # the client could not be made (a malformed SILVIA_TOKEN, ...)
        turn, failure = None, error
    if failure is not None:
        print(error_line("chat", failure, embedded=server.embedded), file=sys.stderr)
        return 1
    if turn is not None and turn.session_id:
        shown = clean(turn.session_id)
        print(f"silvia chat: session {shown}; continue it with --session {shown}", file=sys.stderr)
    return 0
