"""`silvia session show ID`: a session's history, each answer with its numbered sources.

Markers `[n]` appear where a stored citation has an offset (history rows usually
have none). The embedded reference server keeps no sessions between runs, so the
server must be named (`--base-url` or `SILVIA_BASE_URL`): else a usage error.
"""

from __future__ import annotations

import argparse
import sys

from .._text import terminal_text as clean
from ..errors import SilviaError
from . import _common
from ._output import say
from ._server import choose_server

__all__ = ["register", "run_show"]

_SPEAKERS = {"user": "You", "assistant": "Silvia"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia session` to the command's subparsers."""
    parser = subparsers.add_parser(
        "session",
        help="look at a session's history",
        description="Look at a session stored on the server.",
    )
    commands = parser.add_subparsers(dest="session_command", metavar="COMMAND", required=True)
    show = commands.add_parser(
        "show",
        help="print a session's messages with their citations",
        description="Print every message of session ID, each answer followed by its numbered "
        "sources with their links. The embedded reference server keeps sessions only "
        "within one process, so pass --base-url (or set SILVIA_BASE_URL) for a real server.",
    )
    show.add_argument("session_id", metavar="ID", help="the session's id")
    show.add_argument(
        "--base-url",
        metavar="URL",
        help="the API's base URL (default: SILVIA_BASE_URL; without either, a usage error). "
        "The token is read from SILVIA_TOKEN.",
    )
    _common.add_options(show, "--web-url")
    show.set_defaults(run=run_show, command_name="session show")


def run_show(args: argparse.Namespace) -> int:
    """Run `silvia session show`; the exit status."""
    from ._render import TerminalRenderer

    _common.check_web_url(args.web_url)
    server = choose_server(args.base_url, "session show", embedded=False)
    try:
        with _common.client_for(server) as client:
            session = client.sessions.get(args.session_id)
    except SilviaError as error:
        return _common.say_error("session show", error)
    out = sys.stdout
    title = clean(" ".join((session.title or "").split()))
    out.write(f"Session {clean(session.id)}" + (f": {title}" if title else "") + "\n")
    if not session.messages:
        out.write("\nNo messages.\n")
    for message in session.messages:
        speaker = _SPEAKERS.get(message.role or "", clean(message.role or "message"))
        out.write(f"\n{speaker}: ")
        render = TerminalRenderer(out, web_url=args.web_url)
        render.answer(message.text, message.inline_citations, message.citations)
        if message.citations or message.inline_citations:
            render.sources(message.inline_citations, message.citations)
    skipped = len(session.message_errors) + sum(
        len(m.citation_errors) + len(m.inline_citation_errors) for m in session.messages
    )
    if skipped:
        say("session show", f"skipped {skipped} unreadable message or citation row(s)")
    out.flush()
    return 0
