"""What the `silvia` commands share: their options, a client, one turn on screen.

- `UsageError`, for what argparse cannot see (the environment, a combination of
  options): `main` prints it as `silvia COMMAND: message`, status 2. The argument
  types (`whole`, `seconds`: argparse `type=`, a bad value a usage line, never a
  traceback; NaN and the infinities are no seconds).
- The options (`OPTIONS`, added by `add_options`) and their checks (`check_web_url`,
  `scenario_headers`); the timeout options' help states the defaults from
  `DEFAULTS`, as the client applies them.
- `client_for` a chosen server (`_server.py`), over its in-process transport when
  it is the embedded one, or over a transport given (`record`'s recorder).
- `play_turn`: one turn streamed to a `TerminalRenderer` (`_render.py`), then its
  sources, for `chat` (and its interactive session) and `record`; `TurnOptions`.
- `say_error`: an SDK error's stderr line, its hints for Python code (`token=...`)
  said as the command line says them (`terminal_message`: `SILVIA_TOKEN`, and a 401's
  own hint, unset or refused; only whether `SILVIA_TOKEN` is set is read); `is_terminal`.

No command module imports another.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._wire import DEFAULTS
from ..errors import AuthenticationError, SilviaError, StreamError
from ._output import say

if TYPE_CHECKING:
    import httpx

    from .. import SilviaClient
    from ..chat import Turn
    from ._render import TerminalRenderer
    from ._server import ServerChoice


class UsageError(Exception):
    """A usage error found after parsing: one line on stderr, exit status 2."""


def whole(low: int, high: int, refusal: str = "") -> Callable[[str], int]:
    """A whole number from `low` to `high`; else `refusal` (default: "use LOW to HIGH")."""

    def parse(value: str) -> int:
        try:
            number = int(value, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(refusal or f"use {low} to {high}")
        return number

    return parse


def seconds(*, positive: bool = False, at_most: float | None = None) -> Callable[[str], float]:
    """Seconds: at least 0 (more than 0 when `positive`), and at most `at_most` when given."""

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if not math.isfinite(number):
            raise argparse.ArgumentTypeError(f"not a finite number: {value!r}")
        if not (number > 0 if positive else number >= 0) or (
            at_most is not None and number > at_most
        ):
            low = "more than 0" if positive else "0 or more"
            high = f" and at most {at_most:g}" if at_most is not None else ""
            raise argparse.ArgumentTypeError(f"use {low}{high} seconds")
        return number

    return parse


_D = DEFAULTS
# The options more than one command takes, by flag: `add_options` adds them.
OPTIONS: dict[str, dict[str, Any]] = {
    "--session": {"metavar": "ID", "help": "continue this session (default: start a new one)"},
    "--scenario": {
        "metavar": "NAME",
        "help": "the reference server's scenario to play (see `silvia serve --list`), sent as its "
        "x-silvia-scenario header, so the message stays yours; a real server ignores it",
    },
    "--timeout": {
        "type": seconds(positive=True),
        "metavar": "S",
        "help": "seconds for each wait of a turn: connecting, sending, the wait for the answer to "
        "start and each silence between its events (the client's timeout and idle_timeout; "
        f"default: {_D.connect_timeout:g} to connect, {_D.write_timeout:g} to send, "
        f"{_D.read_timeout:g} for the answer to start, {_D.idle_timeout:g} between events)",
    },
    "--deadline": {
        "type": seconds(positive=True),
        "metavar": "S",
        "help": "seconds for the whole turn, retries included (the client's deadline; "
        f"default: {_D.chat_deadline:g})",
    },
    "--base-url": {
        "metavar": "URL",
        "help": "the API's base URL (default: SILVIA_BASE_URL; without either, the embedded "
        "reference server). The token is read from SILVIA_TOKEN.",
    },
    "--web-url": {
        "metavar": "URL",
        "help": "the web app's origin, to print account links as absolute URLs "
        "(default: SILVIA_WEB_URL; without either, the app's relative /accounts/<id> paths)",
    },
}


def add_options(parser: argparse.ArgumentParser, *flags: str) -> None:
    """Add the shared options named by `flags` (keys of `OPTIONS`) to `parser`."""
    for flag in flags:
        parser.add_argument(flag, **OPTIONS[flag])


def scenario_headers(name: str | None) -> dict[str, str] | None:
    """The request header that picks scenario `name`; None for none; `UsageError` for a bad name."""
    from ..testing import SCENARIO_HEADER, is_scenario_name

    if name is None:
        return None
    if not is_scenario_name(name):
        raise UsageError(
            "--scenario takes a scenario's name: letters, digits, '-', '_' and '.', "
            "a letter or digit first (see `silvia serve --list`)"
        )
    return {SCENARIO_HEADER: name}


def check_web_url(value: str | None) -> None:
    """`UsageError` for a `--web-url`, else a non-empty `SILVIA_WEB_URL`, that is no http(s) URL."""
    from ..citations import is_http_url

    flag = "--web-url" if value is not None else "SILVIA_WEB_URL"
    value = value if value is not None else os.environ.get("SILVIA_WEB_URL") or None
    if value is not None and not is_http_url(value):
        raise UsageError(f"{flag} must be an absolute http(s) URL")


AUTH_HINT_UNSET = "no token was sent: set SILVIA_TOKEN to the server's bearer token"
AUTH_HINT_REFUSED = (
    "the server refused the token in SILVIA_TOKEN: set it to the server's bearer token "
    "(for `silvia serve --token T`, that is T)"
)

# The client's hints for Python code, and what the command line has instead. Whole
# phrases first (so that no sentence names SILVIA_TOKEN twice), then single arguments.
_REWRITES = (
    (r",? or pass token=\.\.\.", ""),
    (r"pass the token as token=\.\.\. or in SILVIA_TOKEN", "put the token in SILVIA_TOKEN"),
    (r"pass the token, or leave token out to use SILVIA_TOKEN", "set SILVIA_TOKEN"),
    (
        r"pass base_url=\.\.\. or set the SILVIA_BASE_URL environment variable",
        "pass --base-url or set SILVIA_BASE_URL",
    ),
    (r"\btoken=\.\.\.", "SILVIA_TOKEN"),
    (r"\bbase_url=\.\.\.", "--base-url"),
    (r"\bweb_url=\.\.\.", "--web-url"),
)
# What a client appends to a 401's message: " (...token...)" at its end.
_AUTH_SUFFIX = re.compile(r"\s*\([^()]*(?:token=|SILVIA_TOKEN)[^()]*\)\s*$")


def _rewritten(text: str) -> str:
    for pattern, replacement in _REWRITES:
        text = re.sub(pattern, replacement, text)
    return text


def terminal_message(error: BaseException, *, embedded: bool = False) -> str:
    if not isinstance(error, AuthenticationError):
        return _rewritten(str(error))
    said = _AUTH_SUFFIX.sub("", str(getattr(error, "message", ""))) or "authentication failed"
    text = f"{error.status_code}: {_rewritten(said)}"
    if not embedded:
        hint = AUTH_HINT_REFUSED if os.environ.get("SILVIA_TOKEN") else AUTH_HINT_UNSET
        text += f" ({hint})"
    if error.request_id:
        text += f" (request id {error.request_id})"
    return text


def say_error(command: str, error: BaseException, *, embedded: bool = False, end: str = "") -> int:
    """Say an SDK error on stderr, its hints as the command line says them; status 1."""
    say(command, f"{type(error).__name__}: {terminal_message(error, embedded=embedded)}{end}")
    return 1


@contextmanager
def client_for(
    server: ServerChoice, transport: httpx.BaseTransport | None = None, **options: Any
) -> Iterator[SilviaClient]:
    """A client of `server` (with `options`), over `transport` if given, else the server's own."""
    import httpx

    from .. import SilviaClient

    transport = transport if transport is not None else server.transport
    with (
        httpx.Client(transport=transport) if transport is not None else nullcontext() as http,
        SilviaClient(**server.client_options(), **options, http_client=http) as client,
    ):
        yield client


def is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):  # no stream, or a closed one
        return False


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

    The turn is None when nothing arrived; a broken stream gives its partial turn.
    `on_session` hears the session id as soon as the stream names it. `heading`
    is written once the stream has started. Ctrl-C ends the open line and goes on.
    """
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
                render.write(heading)
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
