"""What the `silvia` commands share: their server and timeout options, a client, one turn on screen.

- The options: `--base-url`, `--web-url`, `--scenario`, `--timeout` and
  `--deadline` (`add_*_argument`), with their checks (`check_url`,
  `check_web_url`, `scenario_headers`); the timeout options' help states the
  defaults from `DEFAULTS`, as the client applies them.
- A client: `client_for` a chosen server (over its in-process transport when it
  is the embedded one), `open_client` for the server `choose_server` picks.
- `play_turn`: one turn streamed to a `TerminalRenderer` (`_render.py`), then its
  sources, for `silvia chat`, its interactive session and `silvia record`;
  `TurnOptions`, what each turn sends beside its message.
- `error_line`: an SDK error's one stderr line, its hints said for the command
  line (`_hints.py`); `read_stdin`, a message from stdin.

Each command is a module of its own (`chat.py`, `session.py`, ...) that imports
this one; none imports another command.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._wire import DEFAULTS
from ._args import seconds

if TYPE_CHECKING:
    from .. import SilviaClient, SilviaError
    from ..chat import Turn
    from ._render import TerminalRenderer
    from ._server import ServerChoice

__all__ = [
    "TurnOptions",
    "add_base_url_argument",
    "add_scenario_argument",
    "add_server_arguments",
    "add_timeout_arguments",
    "add_web_url_argument",
    "check_url",
    "check_web_url",
    "client_for",
    "deadline_help",
    "error_line",
    "open_client",
    "play_turn",
    "read_stdin",
    "scenario_headers",
    "timeout_help",
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


def add_scenario_argument(parser: argparse.ArgumentParser) -> None:
    """`--scenario NAME`: the reference server's scenario, sent as a header, not in the message."""
    parser.add_argument(
        "--scenario",
        metavar="NAME",
        help="the reference server's scenario to play (see `silvia serve --list`), sent as its "
        "x-silvia-scenario header, so the message stays yours; a real server ignores it",
    )


def scenario_headers(name: str | None) -> dict[str, str] | None:
    """The request header that picks scenario `name`; None for none; `UsageError` for a bad name."""
    from ..testing import SCENARIO_HEADER, is_scenario_name
    from ._args import UsageError

    if name is None:
        return None
    if not is_scenario_name(name):
        raise UsageError(
            "--scenario takes a scenario's name: letters, digits, '-', '_' and '.', "
            "a letter or digit first (see `silvia serve --list`)"
        )
    return {SCENARIO_HEADER: name}


def timeout_help() -> str:
    """`--timeout`'s help: what it bounds, and the defaults the client applies without it."""
    d = DEFAULTS
    return (
        "seconds for each wait of a turn: connecting, sending, the wait for the answer to "
        "start and each silence between its events (the client's timeout and idle_timeout; "
        f"default: {d.connect_timeout:g} to connect, {d.write_timeout:g} to send, "
        f"{d.read_timeout:g} for the answer to start, {d.idle_timeout:g} between events)"
    )


def deadline_help() -> str:
    """`--deadline`'s help: what it bounds, and the default a chat turn gets without it."""
    return (
        "seconds for the whole turn, retries included (the client's deadline; "
        f"default: {DEFAULTS.chat_deadline:g})"
    )


def add_timeout_arguments(parser: argparse.ArgumentParser) -> None:
    """`--timeout` (every wait of a turn) and `--deadline` (the whole turn)."""
    parser.add_argument("--timeout", type=seconds(positive=True), metavar="S", help=timeout_help())
    parser.add_argument(
        "--deadline", type=seconds(positive=True), metavar="S", help=deadline_help()
    )


def error_line(command: str, error: BaseException, *, embedded: bool = False) -> str:
    """The one stderr line for an SDK error (its message holds no token and no provider).

    The client's hints for Python code are said as the command line says them
    (`_hints.terminal_message`: `SILVIA_TOKEN`, not `token=...`).
    """
    from ._hints import terminal_message
    from ._render import clean

    message = terminal_message(error, embedded=embedded)
    return clean(f"silvia {command}: {type(error).__name__}: {message}")


@contextmanager
def client_for(server: ServerChoice) -> Iterator[SilviaClient]:
    """A client for `server`: over its in-process transport when it is the embedded one."""
    import httpx

    from .. import SilviaClient

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


@contextmanager
def open_client(
    base_url: str | None, command: str, *, embedded: bool = True
) -> Iterator[SilviaClient]:
    """A client for the server `choose_server` picks (said on stderr); `UsageError` if none."""
    from ._server import choose_server

    with client_for(choose_server(base_url, command, embedded=embedded)) as client:
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


def read_stdin() -> str:
    """The message on stdin, surrounding whitespace (the final newline) removed."""
    from ._args import UsageError

    if sys.stdin is None:  # started with stdin closed
        raise UsageError("no MESSAGE, and no stdin to read it from")
    try:
        return sys.stdin.read().strip()
    except UnicodeDecodeError:
        raise UsageError("the message on stdin is not text in the terminal's encoding") from None
    except OSError as error:
        raise UsageError(f"cannot read the message from stdin: {error.strerror or error}") from None


@dataclass(frozen=True)
class TurnOptions:
    """What every turn of one `silvia chat` sends beside its message."""

    headers: dict[str, str] | None = None
    timeout: float | None = None
    deadline: float | None = None


def play_turn(
    client: SilviaClient,
    message: str,
    session_id: str | None,
    options: TurnOptions,
    render: TerminalRenderer,
    on_session: Callable[[str], None] | None = None,
    *,
    heading: str = "",
) -> tuple[Turn | None, SilviaError | None]:
    """Stream one turn to `render`, then its sources: (the turn, the error that ended it).

    The turn is None when no part of it arrived (an error before the stream);
    a stream that broke gives its partial turn with the error. `on_session`
    hears the session id as soon as the stream names it (an interactive
    session continues it even when Ctrl-C cuts the turn short). `heading`
    (`Silvia: `) is written once the stream has started, so a refused request
    leaves no empty heading behind. Ctrl-C ends the line the answer left open
    and goes on as `KeyboardInterrupt`.
    """
    from .. import SilviaError, StreamError
    from ..chat import SessionEvent

    failure: SilviaError | None = None
    try:
        with client.chat.stream(
            message,
            session_id=session_id,
            extra_headers=options.headers,
            timeout=options.timeout,
            idle_timeout=options.timeout,
            deadline=options.deadline,
        ) as stream:
            for event in stream:
                render.write(heading)  # once: the stream started
                heading = ""
                if on_session is not None and isinstance(event, SessionEvent):
                    on_session(event.session_id)
                render.event(event)
            turn = stream.until_done()
    except StreamError as error:  # what arrived is on screen: end it, and list its sources
        failure, turn = error, error.turn
    except SilviaError as error:
        render.end_line()
        return None, error
    except KeyboardInterrupt:  # "interrupted" goes on a line of its own
        render.end_line()
        raise
    render.write("\n")
    render.sources(turn.inline_citations, turn.citations)
    return turn, failure
