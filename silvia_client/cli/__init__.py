"""The `silvia` command (also `python -m silvia_client`); docs/cli.md is its manual.

Each subcommand is a module with `register(subparsers)`, which adds its parser
and sets `run` (parsed arguments -> exit status); what is slow to load (the client,
the servers, `_render.py` with the display) is imported inside `run`, so `--help`
stays quick. Shared parts: `_server.py` (which server, said on stderr),
`_common.py` (options, a client, one turn on screen, an SDK error said for the command
line, argument types, `UsageError`), `_render.py` (a terminal), `_output.py` (the one
writer: what a stream cannot carry is escaped).

`main` maps what ends a command to its status: `UsageError` 2, Ctrl-C 130 with
"interrupted" on stderr, a reader gone away (`| head`) 1 quietly with stdout sent
to the null device, anything else an internal error: one line naming the command
and the exception's type (never its message), the traceback only with `--debug`
or `SILVIA_DEBUG=1`, status 4.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from .._text import terminal_text as clean
from ._common import UsageError
from ._output import debug_from_environment, internal_error_lines, writing_safely

__all__ = ["main"]

_COMMANDS = ("demo", "chat", "session", "record", "serve", "qa")  # in `--help`'s order

EXIT_STATUSES = (
    "exit status: 0 ok; 1 an error (silvia qa: error findings); 2 usage error; "
    "3 server unreachable or credentials refused; 4 internal error (a bug in silvia: "
    "--debug or SILVIA_DEBUG=1 prints the traceback); 130 interrupted"
)


def build_parser() -> argparse.ArgumentParser:
    """The `silvia` command's parser, every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="silvia",
        description="Talk to Silvia's chat API, or to the embedded reference server.",
        epilog=EXIT_STATUSES,
    )
    parser.add_argument("--version", action="version", version=f"silvia {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an internal error (exit status 4), print the traceback too (also SILVIA_DEBUG=1)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `silvia` with `argv` (default: the process's arguments); the exit status."""
    command = ""
    debug = debug_from_environment()
    with writing_safely():
        try:
            args = build_parser().parse_args(argv)
            sub = getattr(args, f"{args.command}_command", None)  # `qa run`, `session show`
            command = f"{args.command} {sub}" if sub else args.command
            debug = debug or args.debug
            run: Callable[[argparse.Namespace], int] = args.run
            try:
                return run(args)
            except UsageError as error:  # its message may quote a file or the server: cleaned
                name = getattr(args, "command_name", args.command)
                print(clean(f"silvia {name}: {error}"), file=sys.stderr)
                return 2
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # the reader went away: stop quietly, as a filter does
            with contextlib.suppress(AttributeError, OSError, ValueError):  # a test's capture
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
            return 1
        except Exception as error:  # an internal error: one line and 4, never a finding's 1
            sys.stderr.write(internal_error_lines(command, error, debug=debug))
            sys.stderr.flush()
            return 4
