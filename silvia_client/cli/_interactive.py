"""`silvia chat` with no message on a terminal: one session, a turn per line.

Each line at the `You: ` prompt is a turn (`play_turn`) of one session, whose id
is taken as soon as the stream names it. Ctrl-C ends a turn, or drops the line
being typed; Ctrl-D ends the session (status 0). `readline`'s history, where
Python has it, lives in memory only and is cleared at the end: the messages are
a user's finances, never written to a file.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from ._common import TurnOptions

PROMPT = "You: "
_HELLO = (
    "silvia chat: each line you type is a turn of one session; "
    "Ctrl-C ends a turn, Ctrl-D (end of input) quits"
)


def _line_editing() -> ModuleType | None:
    try:
        import readline
    except ImportError:  # Windows, or a Python built without it: plain input() still works
        return None
    readline.clear_history()
    return readline


def run_interactive(args: argparse.Namespace, options: TurnOptions) -> int:
    from .. import SilviaError
    from ._common import client_for, error_line, play_turn
    from ._render import TerminalRenderer, clean
    from ._server import choose_server

    server = choose_server(args.base_url, "chat")
    session: list[str] = [args.session] if args.session else []

    def on_session(session_id: str) -> None:
        if not session or session[-1] != session_id:
            session.append(session_id)

    readline = _line_editing()
    print(_HELLO, file=sys.stderr, flush=True)
    try:
        with client_for(server) as client:
            while True:
                try:
                    message = input(PROMPT)
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
                    print(error_line("chat", failure, embedded=server.embedded), file=sys.stderr)
                sys.stdout.write("\n")
                sys.stdout.flush()
    except SilviaError as error:  # the client could not be made (a malformed SILVIA_TOKEN, ...)
        print(error_line("chat", error, embedded=server.embedded), file=sys.stderr)
        return 1
    finally:
        if readline is not None:
            readline.clear_history()
    if session:
        shown = clean(session[-1])
        print(f"silvia chat: session {shown}; continue it with --session {shown}", file=sys.stderr)
    return 0
