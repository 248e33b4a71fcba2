"""Every flag of every `silvia` command is in its `--help` and in `docs/cli.md`, and no more.

The flags come from the parsers themselves (argparse keeps them in `_actions`:
the standard library offers no public way to list them), so a flag added to a
command without a word in the docs fails here, and so does a flag the docs
describe that the command does not take. The `qa` subcommands are read as they
are. In `docs/cli.md`, a command's section is the heading `` `silvia COMMAND` ``
and its flags are the bullets that start with them (`` - `--flag ARG`: ... ``).

A flag hidden from `--help` on purpose is listed in `HIDDEN` with the reason.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client.cli import build_parser

DOCS = Path(__file__).parents[2] / "docs" / "cli.md"

# (command, flag): why `--help` does not show it, and the docs do not list it as a flag.
HIDDEN = {
    ("demo", "--base-url"): (
        "the demo always plays on the embedded server and never asks an API server: "
        "the flag exists only to refuse itself and point to --web-url"
    ),
}

_HEADING = re.compile(r"^#{2,3} `silvia(?: (?P<command>[a-z][a-z ]*))?`\s*$")
_FLAG_ITEM = re.compile(r"^- ((?:`-[^`]+`(?:, )?)+):")
_CODE = re.compile(r"`(-[^` ]+)[^`]*`")


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command as typed (`""` for `silvia` itself, `qa run`), with its parser."""

    def walk(
        path: str, parser: argparse.ArgumentParser
    ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(f"{path} {name}".strip(), sub)

    yield from walk("", build_parser())


def _flags(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Each option string but `-h`/`--help`, and whether `--help` shows it."""
    return {
        option: action.help != argparse.SUPPRESS
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
    }


def _documented() -> dict[str, set[str]]:
    """The flags `docs/cli.md` lists for each command's section."""
    sections: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        heading = _HEADING.match(line)
        if heading:
            command = heading.group("command") or ""
            assert command not in sections, f"two sections for `silvia {command}`"
            current = sections[command] = set()
        elif line.startswith("#"):
            current = None
        elif current is not None and (item := _FLAG_ITEM.match(line)):
            current.update(_CODE.findall(item.group(1)))
    return sections


PARSERS = dict(_parsers())


@pytest.mark.parametrize("command", list(PARSERS), ids=lambda c: c or "silvia")
def test_every_flag_is_in_the_help(command: str) -> None:
    parser = PARSERS[command]
    shown = parser.format_help()
    for flag, visible in _flags(parser).items():
        if (command, flag) in HIDDEN:
            assert not visible, f"{flag} is listed as hidden, but --help shows it"
            assert flag not in shown
        else:
            assert visible, f"`silvia {command} {flag}` is hidden: list it in HIDDEN with why"
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", shown), (command, flag)


@pytest.mark.parametrize("command", list(PARSERS), ids=lambda c: c or "silvia")
def test_every_flag_is_in_the_docs_and_the_docs_list_no_other(command: str) -> None:
    expected = {flag for flag in _flags(PARSERS[command]) if (command, flag) not in HIDDEN}
    documented = _documented()
    if not expected and command not in documented:
        return  # a command with no flags (`silvia session`) needs no list
    assert command in documented, f"docs/cli.md has no section `silvia {command}`"
    assert documented[command] == expected


def test_the_docs_describe_only_commands_that_exist() -> None:
    assert set(_documented()) <= set(PARSERS)


def test_every_hidden_flag_exists_and_says_why() -> None:
    for (command, flag), why in HIDDEN.items():
        assert flag in _flags(PARSERS[command])
        assert len(why.split()) >= 5
