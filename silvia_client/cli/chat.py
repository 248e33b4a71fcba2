"""`silvia chat MESSAGE`: one turn, streamed live with citation markers, then its sources.

The answer goes to stdout as it arrives, with `[n]` where each citation
streamed in; then the numbered sources with their links (terminal hyperlinks
where the terminal supports them). The session id, and how to continue it, go
to stderr, so stdout is only the answer.

The server is `--base-url`, else `SILVIA_BASE_URL`, else the embedded
reference server in this process (said on stderr). The token is `SILVIA_TOKEN`:
there is no flag for it, so it stays out of shell history and process lists.
An SDK error is one line on stderr and exit status 1; neither the token nor an
account's provider is ever printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import SilviaClient, SilviaError

__all__ = [
    "add_server_arguments",
    "check_url",
    "check_web_url",
    "error_line",
    "open_client",
    "register",
    "run",
]

EMBEDDED_TOKEN = "silvia-cli"  # the embedded reference server accepts any non-empty token


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """`--base-url` (the API) and `--web-url` (the web app, for account links)."""
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the API's base URL (default: SILVIA_BASE_URL; without either, the embedded "
        "reference server). The token is read from SILVIA_TOKEN.",
    )
    add_web_url_argument(parser)


def add_web_url_argument(parser: argparse.ArgumentParser) -> None:
    """`--web-url`: the web app's origin, for absolute account links."""
    parser.add_argument(
        "--web-url",
        metavar="URL",
        help="the web app's origin, to print account links as absolute URLs "
        "(default: SILVIA_WEB_URL; without either, the app's relative /accounts/<id> paths)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="send a message and stream the answer with its citations",
        description=(
            "Send MESSAGE, stream the answer as it arrives with a marker [n] where each "
            "citation streamed in, then list the numbered sources with their links. "
            "Against the embedded reference server, a message starting '/scenario NAME' "
            "plays that scenario (see `silvia serve --list`)."
        ),
    )
    parser.add_argument("message", metavar="MESSAGE", help="what to ask")
    parser.add_argument(
        "--session", metavar="ID", help="continue this session (default: start a new one)"
    )
    add_server_arguments(parser)
    parser.set_defaults(run=run)


def error_line(command: str, error: BaseException) -> str:
    """The one stderr line for an SDK error (its message holds no token and no provider)."""
    from ._render import clean

    return clean(f"silvia {command}: {type(error).__name__}: {error}")


@contextmanager
def open_client(base_url: str | None, command: str) -> Iterator[SilviaClient]:
    """A client for `base_url`, else `SILVIA_BASE_URL`, else the embedded reference server."""
    import httpx

    from .. import SilviaClient

    if base_url or os.environ.get("SILVIA_BASE_URL"):
        with SilviaClient(base_url=base_url) as client:
            yield client
        return
    from ..testing import IN_PROCESS_URL, ReferenceServer

    print(
        f"silvia {command}: no --base-url and no SILVIA_BASE_URL: using the embedded "
        "reference server (in this process, made-up data)",
        file=sys.stderr,
        flush=True,
    )
    server = ReferenceServer()
    with (
        httpx.Client(transport=server.transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token=EMBEDDED_TOKEN, http_client=http) as client,
    ):
        yield client


def check_url(value: str | None, flag: str) -> str | None:
    from ..citations import is_http_url

    if value is not None and not is_http_url(value):
        return f"{flag} must be an absolute http(s) URL"
    return None


def check_web_url(value: str | None) -> str | None:
    """What is wrong with `--web-url`, else with a non-empty `SILVIA_WEB_URL`, if anything."""
    if value is None:
        return check_url(os.environ.get("SILVIA_WEB_URL") or None, "SILVIA_WEB_URL")
    return check_url(value, "--web-url")


def run(args: argparse.Namespace) -> int:
    from .. import SilviaError, StreamError
    from ._render import TerminalRenderer, clean

    for problem in (check_url(args.base_url, "--base-url"), check_web_url(args.web_url)):
        if problem:
            print(f"silvia chat: {problem}", file=sys.stderr)
            return 2
    if not args.message.strip():
        print("silvia chat: MESSAGE must not be empty", file=sys.stderr)
        return 2
    out = sys.stdout
    render = TerminalRenderer(out, web_url=args.web_url)
    failure: SilviaError | None = None
    try:
        with (
            open_client(args.base_url, "chat") as client,
            client.chat.stream(args.message, session_id=args.session) as stream,
        ):
            for event in stream:
                render.event(event)
            turn = stream.until_done()
    except StreamError as error:  # what arrived is on screen: end it, and list its sources
        failure, turn = error, error.turn
    except SilviaError as error:
        print(error_line("chat", error), file=sys.stderr)
        return 1
    out.write("\n")
    render.sources(turn.inline_citations, turn.citations)
    if failure is not None:
        print(error_line("chat", failure), file=sys.stderr)
        return 1
    if turn.session_id:
        session = clean(turn.session_id)
        print(
            f"silvia chat: session {session}; continue it with --session {session}",
            file=sys.stderr,
        )
    return 0
