"""`silvia chat MESSAGE`: one turn, streamed live with citation markers, then its sources.

The answer goes to stdout as it arrives, with `[n]` where each citation
streamed in; then the numbered sources with their links (terminal hyperlinks
where the terminal supports them). The session id, and how to continue it, go
to stderr, so stdout is only the answer. MESSAGE `-` reads the message from
stdin, and so does no MESSAGE when stdin is not a terminal; no MESSAGE on a
terminal is an interactive session (`_interactive.py`), turn after turn.
`--scenario NAME` picks the reference server's scenario with its header
(`scenario_headers`), so the message, and the session's title, stay the user's.

One turn on screen (`play_turn`), the client, the options and an error's line
are `_common.py`'s, shared with the other commands and the interactive session.

The server is `--base-url`, else `SILVIA_BASE_URL`, else the embedded
reference server in this process (`_server.choose_server`; which one is said
on stderr). The token is `SILVIA_TOKEN`:
there is no flag for it, so it stays out of shell history and process lists.
`--timeout` bounds each wait of a turn (the client's `timeout` and
`idle_timeout`), `--deadline` the whole turn; their help states the defaults
from `DEFAULTS`, as the client applies them. An SDK error is one line on stderr
and exit status 1; neither the token nor an account's provider is ever printed.
"""

from __future__ import annotations

import argparse
import sys

from ._common import (
    TurnOptions,
    add_scenario_argument,
    add_server_arguments,
    add_timeout_arguments,
    check_web_url,
    client_for,
    error_line,
    play_turn,
    read_stdin,
    scenario_headers,
)

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia chat` to the parser."""
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
    add_server_arguments(parser)
    parser.set_defaults(run=run)


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):  # no stdin, or a closed one
        return False


def run(args: argparse.Namespace) -> int:
    """Run `silvia chat`: one turn streamed to the terminal, or a conversation; the exit status."""
    from .. import SilviaError
    from ._args import UsageError
    from ._render import TerminalRenderer, clean
    from ._server import choose_server

    problem = check_web_url(args.web_url)
    if problem:
        raise UsageError(problem)
    options = TurnOptions(scenario_headers(args.scenario), args.timeout, args.deadline)
    message: str | None = args.message
    if message is None and _is_terminal(sys.stdin):
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
        session = clean(turn.session_id)
        print(
            f"silvia chat: session {session}; continue it with --session {session}",
            file=sys.stderr,
        )
    return 0
