"""The `silvia` command (also `python -m silvia_client`).

Each subcommand lives in its own module with a `register(subparsers)` that adds
its parser and sets `run`, a function of the parsed arguments returning the exit
status. Modules import what they need inside `run`, so `silvia --help` stays quick.

Shared parts: `_server.py` chooses the server a command talks to (and says
which), `_args.py` checks numeric arguments, `_render.py` writes answers and
sources to a terminal, `_hints.py` says an SDK error's hints for the command
line, `_interactive.py` is `silvia chat`'s session on a terminal, `_output.py`
is the one writer: `main` runs every
command with `sys.stdout` and `sys.stderr` wrapped so that text a stream's
encoding cannot carry (a lone surrogate, or anything outside ASCII under
`PYTHONIOENCODING=ascii`) is written escaped instead of raising.

Exit statuses, for every command: 0 ok, 1 an error (for `silvia qa`: error
findings), 2 a usage error, 3 the server unreachable or the credentials
refused (`silvia qa`), 4 an internal error, 130 interrupted. Ctrl-C ends any
command with status 130 and the line "interrupted" on stderr; a command that
was streaming text ends its line first. Any other exception that reaches
`main` is an internal error: one line on stderr naming the command and the
exception's type (never its message), the traceback before it only with
`--debug` or `SILVIA_DEBUG=1`, and status 4, so that a crash never reads as a
server's fault. `silvia qa` writes the reports asked for first, as it does on
Ctrl-C. A reader that goes away (`silvia chat ... | head`) ends the command
quietly, as a filter ends: no line, status 1, and stdout pointed at the null
device so that Python's last flush cannot fail again.

Hints for a terminal user, not for Python code: `_hints.py` rewrites what an
SDK error suggests (`token=...`) into what the command line has (`SILVIA_TOKEN`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]

# Subcommand modules, in the order `--help` lists them.
_COMMANDS = ("demo", "chat", "session", "record", "serve", "qa")


EXIT_STATUSES = (
    "exit status: 0 ok; 1 an error (silvia qa: error findings); 2 usage error; "
    "3 server unreachable or credentials refused; 4 internal error (a bug in silvia: "
    "--debug or SILVIA_DEBUG=1 prints the traceback); 130 interrupted"
)


def build_parser() -> argparse.ArgumentParser:
    """The `silvia` command's parser, with every subcommand."""
    from .. import __version__

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


def _command(args: argparse.Namespace) -> str:
    """The command as typed: `chat`, `qa run`, `session show`."""
    name: str = args.command
    sub = getattr(args, f"{name}_command", None)
    return f"{name} {sub}" if sub else name


def main(argv: Sequence[str] | None = None) -> int:
    """Run `silvia` with `argv` (default: the process's arguments); the exit status."""
    from ._output import writing_safely

    with writing_safely():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from ._args import UsageError
    from ._output import debug_from_environment, internal_error_lines

    command = ""
    debug = debug_from_environment()
    try:
        args = build_parser().parse_args(argv)
        command = _command(args)
        debug = debug or args.debug
        run: Callable[[argparse.Namespace], int] = args.run
        try:
            return run(args)
        except UsageError as error:
            name = getattr(args, "command_name", args.command)
            print(f"silvia {name}: {error}", file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_left()
    except Exception as error:  # an internal error: one line and 4, never the 1 of a finding
        sys.stderr.write(internal_error_lines(command, error, debug=debug))
        sys.stderr.flush()
        return 4


def _reader_left() -> int:
    """The reader of stdout went away (`| head`): stop quietly, as a filter does."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass  # no real file behind stdout (a test's capture): nothing to point elsewhere
    return 1
