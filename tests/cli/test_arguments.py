"""The command line's arguments: every flag in `--help` and in docs/cli.md, and no other
(argparse's `_actions`: no public way lists them; a docs section is the heading
`` `silvia COMMAND` `` with its `` - `--flag ARG`: `` bullets; `HIDDEN` says why a flag
is not in `--help`); `--version`; bad numbers refused by argparse; the `--timeout` and
`--deadline` defaults the help and the docs state, as a turn without them gets."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client import SilviaClient, __version__
from silvia_client.cli import build_parser, main

from ._cli import run

DOCS = Path(__file__).parents[2] / "docs" / "cli.md"
HIDDEN = {
    ("demo", "--base-url"): (
        "the demo always plays on the embedded server and never asks an API server: "
        "the flag exists only to refuse itself and point to --web-url"
    )
}
_HEADING = re.compile(r"^#{2,3} `silvia(?: (?P<command>[a-z][a-z ]*))?`\s*$")
_FLAG_ITEM = re.compile(r"^- ((?:`-[^`]+`(?:, )?)+):")
_CODE = re.compile(r"`(-[^` ]+)[^`]*`")


def _parsers(
    path: str, parser: argparse.ArgumentParser
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command as typed (`""` for `silvia` itself, `qa run`), with its parser."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(f"{path} {name}".strip(), sub)


def _flags(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Each option string but `-h`/`--help`, and whether `--help` shows it."""
    return {
        option: action.help != argparse.SUPPRESS
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
    }


def _documented() -> dict[str, set[str]]:
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


def test_every_flag_is_in_the_help_and_the_docs_and_the_docs_list_no_other(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parsers = dict(_parsers("", build_parser()))
    assert {"chat", "session show", "qa run", "qa check", "demo", "serve", "record"} <= set(parsers)
    documented = _documented()
    assert set(documented) <= set(parsers)
    for command, parser in parsers.items():
        status, out, _ = run([*command.split(), "--help"], capsys)
        assert status == 0, command
        assert out.startswith("usage: silvia"), command
        expected = set()
        for flag, visible in _flags(parser).items():
            if (command, flag) in HIDDEN:
                assert not visible, f"{flag} is listed as hidden, but --help shows it"
                assert flag not in out
                continue
            expected.add(flag)
            assert visible, f"`silvia {command} {flag}` is hidden: list it in HIDDEN with why"
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", out), (command, flag)
        if expected or command in documented:
            assert documented.get(command) == expected, f"docs/cli.md on `silvia {command}`"
    for (command, flag), why in HIDDEN.items():
        assert flag in _flags(parsers[command])
        assert len(why.split()) >= 5
    assert run(["--version"], capsys) == (0, f"silvia {__version__}\n", "")
    help_text = " ".join(run(["--help"], capsys)[1].split())
    for said in (
        "--debug",
        "0 ok",
        "1 an error",
        "2 usage error",
        "3 server unreachable or credentials refused",
        "4 internal error",
        "130 interrupted",
    ):
        assert said in help_text
    assert "4 internal error" in " ".join(run(["qa", "run", "--help"], capsys)[1].split())


def test_bad_numbers_and_names_are_argparse_errors(capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        ("serve --port 99999", "argument --port: use 0 to 65535 (0: any free port)"),
        ("serve --port -1", "argument --port: use 0 to 65535 (0: any free port)"),
        ("serve --port 80.5", "argument --port: not a whole number: '80.5'"),
        ("serve --pace -1", "argument --pace: use 0 or more and at most 60 seconds"),
        ("serve --pace nan", "argument --pace: not a finite number: 'nan'"),
        ("serve --pace inf", "argument --pace: not a finite number: 'inf'"),
        ("demo --pace -0.5", "argument --pace: use 0 or more and at most 10 seconds"),
        ("demo --pace 11", "argument --pace: use 0 or more and at most 10 seconds"),
        ("qa run s.json --timeout 0", "argument --timeout: use more than 0 seconds"),
        ("qa run s.json --concurrency 0", "argument --concurrency: use 1 to 64"),
        ("qa run s.json --concurrency 65", "argument --concurrency: use 1 to 64"),
        ("qa run s.json --concurrency x", "argument --concurrency: not a whole number: 'x'"),
        ("qa run s.json --timeout nan", "argument --timeout: not a finite number: 'nan'"),
        ("serve --allow-host silvia:8000", "argument --allow-host: not a host name: 'silvia:8000'"),
        ("chat hi --timeout", "argument --timeout: expected one argument"),
        *(
            (f"chat hi {option} {value}", f"argument {option}: {message}")
            for option in ("--timeout", "--deadline")
            for value, message in [("0", "use more than 0 seconds"), ("-1", "use more than 0"),
                ("nan", "not a finite number: 'nan'"), ("soon", "not a number: 'soon'")]
        ),
    ]  # fmt: skip
    for command, message in cases:
        argv = command.split()
        status, out, err = run(argv, capsys)
        assert (status, out) == (2, ""), argv
        assert err.startswith("usage: silvia "), argv
        assert message in err.splitlines()[-1], (argv, err)
        assert "Traceback" not in err


def test_chat_takes_a_timeout_and_a_deadline_whose_defaults_help_and_docs_state(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for option, message in [
        ("--timeout", "StreamTimeoutError: no data within the idle timeout (0.2 s)"),
        ("--deadline", "StreamTimeoutError: the turn's deadline of 0.2 s passed"),
    ]:
        status, out, err = run(["chat", "/scenario fault-stall hi", option, "0.2"], capsys)
        assert status == 1  # it stalls for good
        assert out.startswith("You have $4,210.55")  # what arrived is kept
        assert err.splitlines()[-1].startswith(f"silvia chat: {message} (request id req_")
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    assert said(capsys.readouterr().out) == applied()
    section = DOCS.read_text(encoding="utf-8").split("## `silvia chat`")[1].split("\n## ")[0]
    assert said(section) == applied()


TIMEOUT = re.compile(
    r"default: (\S+) to connect, (\S+) to send, (\S+) for the answer to start, "
    r"(\S+) between events\)"
)
DEADLINE = re.compile(r"deadline`?; default: (\S+?)\)")


def applied() -> tuple[list[float | None], float]:
    """What a turn without `--timeout` and `--deadline` waits: `silvia chat`'s own client."""
    with SilviaClient(base_url="http://127.0.0.1:9") as client:  # as `client_for` makes it
        call = client._call("chat", timeout=None, idle_timeout=None)
        waits = call.timeouts()
        return [
            waits["connect"],
            waits["write"],
            waits["read"],
            call.options.idle_timeout,
        ], call.options.deadline


def said(text: str) -> tuple[list[float | None], float]:
    flat = " ".join(text.split())
    timeout, deadline = TIMEOUT.search(flat), DEADLINE.search(flat)
    assert timeout is not None, flat
    assert deadline is not None, flat
    return [float(n) for n in timeout.groups()], float(deadline.group(1))
