"""The `silvia` command (also `python -m silvia_client`).

Each subcommand lives in its own module with a `register(subparsers)` that adds
its parser and sets `run`, a function of the parsed arguments returning the exit
status. Modules import what they need inside `run`, so `silvia --help` stays quick.

Shared parts: `_server.py` chooses the server a command talks to (and says
which), `_args.py` checks numeric arguments, `_render.py` writes answers and
sources to a terminal. Ctrl-C ends any command with status 130 and the line
"interrupted" on stderr; a command that was streaming text ends its line first.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]

# Subcommand modules, in the order `--help` lists them.
_COMMANDS = ("demo", "chat", "session", "record", "serve", "qa")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="silvia",
        description="Talk to Silvia's chat API, or to the embedded reference server.",
    )
    parser.add_argument("--version", action="version", version=f"silvia {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ._args import UsageError

    args = build_parser().parse_args(argv)
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
