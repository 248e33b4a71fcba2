"""`silvia chat MESSAGE`: one turn, streamed live with citation markers, then its sources.

The answer goes to stdout as it arrives, with `[n]` where each citation
streamed in; then the numbered sources with their links (terminal hyperlinks
where the terminal supports them). The session id, and how to continue it, go
to stderr, so stdout is only the answer.

The server is `--base-url`, else `SILVIA_BASE_URL`, else the embedded
reference server in this process (`_server.choose_server`; which one is said
on stderr). The token is `SILVIA_TOKEN`:
there is no flag for it, so it stays out of shell history and process lists.
`--timeout` bounds the connection and each silence of the stream, `--deadline`
the whole turn. An SDK error is one line on stderr and exit status 1; neither
the token nor an account's provider is ever printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ._args import seconds

if TYPE_CHECKING:
    from .. import SilviaClient, SilviaError

__all__ = [
    "add_base_url_argument",
    "add_server_arguments",
    "add_web_url_argument",
    "check_url",
    "check_web_url",
    "error_line",
    "open_client",
    "register",
    "run",
]


def add_base_url_argument(parser: argparse.ArgumentParser, *, embedded: bool = True) -> None:
    """`--base-url`: the API server (else `SILVIA_BASE_URL`, else maybe the embedded one)."""
    fallback = "the embedded reference server" if embedded else "a usage error"
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help=f"the API's base URL (default: SILVIA_BASE_URL; without either, {fallback}). "
        "The token is read from SILVIA_TOKEN.",
    )


def add_server_arguments(parser: argparse.ArgumentParser, *, embedded: bool = True) -> None:
    """`--base-url` (the API) and `--web-url` (the web app, for account links)."""
    add_base_url_argument(parser, embedded=embedded)
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
    """Add `silvia chat` to the parser."""
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
    parser.add_argument(
        "--timeout",
        type=seconds(positive=True),
        metavar="S",
        help="seconds to connect, and the longest silence of the stream (default: the client's, "
        "10 to connect and 90 of silence)",
    )
    parser.add_argument(
        "--deadline",
        type=seconds(positive=True),
        metavar="S",
        help="seconds for the whole turn, retries included (default: none)",
    )
    add_server_arguments(parser)
    parser.set_defaults(run=run)


def error_line(command: str, error: BaseException) -> str:
    """The one stderr line for an SDK error (its message holds no token and no provider)."""
    from ._render import clean

    return clean(f"silvia {command}: {type(error).__name__}: {error}")


@contextmanager
def open_client(
    base_url: str | None, command: str, *, embedded: bool = True
) -> Iterator[SilviaClient]:
    """A client for the server `choose_server` picks (said on stderr); `UsageError` if none."""
    import httpx

    from .. import SilviaClient
    from ._server import choose_server

    server = choose_server(base_url, command, embedded=embedded)
    transport = server.transport
    if transport is None:
        with SilviaClient(**server.client_options()) as client:
            yield client
        return
    with (
        httpx.Client(transport=transport) as http,
        SilviaClient(**server.client_options(), http_client=http) as client,
    ):
        yield client


def check_url(value: str | None, flag: str) -> str | None:
    """What is wrong with the URL given as `flag`, if anything (None: nothing)."""
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
    """Run `silvia chat`: stream one turn to the terminal; the exit status."""
    from .. import SilviaError, StreamError
    from ._args import UsageError
    from ._render import TerminalRenderer, clean

    problem = check_web_url(args.web_url)
    if problem:
        raise UsageError(problem)
    if not args.message.strip():
        raise UsageError("MESSAGE must not be empty")
    out = sys.stdout
    render = TerminalRenderer(out, web_url=args.web_url)
    failure: SilviaError | None = None
    try:
        with (
            open_client(args.base_url, "chat") as client,
            client.chat.stream(
                args.message,
                session_id=args.session,
                timeout=args.timeout,
                idle_timeout=args.timeout,
                deadline=args.deadline,
            ) as stream,
        ):
            for event in stream:
                render.event(event)
            turn = stream.until_done()
    except StreamError as error:  # what arrived is on screen: end it, and list its sources
        failure, turn = error, error.turn
    except SilviaError as error:
        render.end_line()
        print(error_line("chat", error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # "interrupted" goes on a line of its own
        render.end_line()
        raise
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
