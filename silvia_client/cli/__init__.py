"""The `silvia` command (also `python -m silvia_client`).

Each subcommand lives in its own module with a `register(subparsers)` that adds
its parser and sets `run`, a function of the parsed arguments returning the exit
status. Modules import what they need inside `run`, so `silvia --help` stays quick.
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
    parser = argparse.ArgumentParser(
        prog="silvia",
        description="Talk to Silvia's chat API, or to the embedded reference server.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
