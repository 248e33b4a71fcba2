"""`silvia qa`: check that a server's citation targets follow the server team's rules.

`silvia qa run SCRIPT` runs every prompt of a QA script (see
`silvia_client.qa.script` for the format), reloads each session, checks each
turn against the rule table, prints one progress line per prompt on stderr,
then the table of rules against prompts and the findings on stdout. It exits 1
when any finding of error severity was made, 0 otherwise (warnings included),
and 2 for a usage error (a script that is not in the format, a bad option, no
token for a base URL). Without `--base-url` it runs against an in-process
reference server, so it works on a fresh machine. `silvia qa rules` lists the
rules.

The token comes from `SILVIA_TOKEN` only, never from the command line, and is
never printed; neither is any provider.
"""

from __future__ import annotations

import argparse
import os
import sys

from ._args import seconds
from .chat import add_base_url_argument

__all__ = ["register", "run_check", "run_rules"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "qa",
        help="check a server's citation targets against the server's own rules",
        description=(
            "Scripted QA: run a script of prompts against a server (or the embedded reference "
            "server), and check every turn against the rules of chat-citation-targets."
        ),
    )
    commands = parser.add_subparsers(dest="qa_command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run",
        help="run a QA script and check every turn",
        description=(
            "Run each prompt of SCRIPT (JSON), reload each session, check each turn. Exits 1 "
            "when any error-severity finding was made, else 0; 2 for usage errors. The bearer "
            "token is read from SILVIA_TOKEN."
        ),
    )
    run.add_argument("script", metavar="SCRIPT", help="the QA script (JSON)")
    add_base_url_argument(run)
    run.add_argument("--junit", metavar="PATH", help="write a JUnit XML report here")
    run.add_argument("--json", metavar="PATH", help="write a JSON report here")
    run.add_argument(
        "--timeout",
        type=seconds(positive=True),
        default=None,
        metavar="S",
        help="seconds a stream may stay silent, or a request take (default 60)",
    )
    run.set_defaults(run=run_check)

    rules = commands.add_parser("rules", help="list the rules", description="List the rules.")
    rules.set_defaults(run=run_rules)


def _usage(message: str) -> int:
    print(f"silvia qa: {message}", file=sys.stderr)
    return 2


def run_rules(args: argparse.Namespace) -> int:
    from ..qa import EXPECTATIONS, RULES

    width = max(len(rule.id) for rule in (*RULES, EXPECTATIONS))
    for rule in RULES:
        print(f"{rule.id:<{width}}  {rule.severity:<7}  {rule.description}")
    print(f"{EXPECTATIONS.id:<{width}}  {EXPECTATIONS.severity:<7}  {EXPECTATIONS.description}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from ..qa import Observer, ScriptFormatError, load_script, run_script
    from ..qa.report import format_report, write_json, write_junit
    from ..qa.runner import DEFAULT_TIMEOUT, PromptResult
    from ._server import choose_server

    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    try:
        script = load_script(args.script)
    except ScriptFormatError as error:
        return _usage(str(error))
    server = choose_server(args.base_url, "qa run")
    token = os.environ.get("SILVIA_TOKEN") or None
    if not server.embedded and token is None:
        return _usage(f"set SILVIA_TOKEN to the bearer token for {server.source}")

    def progress(number: int, total: int, result: PromptResult) -> None:
        checked = result.result
        verdict = "FAIL" if not checked.ok else ("warn" if checked.warnings else "ok")
        counts = f"{len(checked.errors)} error(s), {len(checked.warnings)} warning(s)"
        print(
            f"[{number}/{total}] {result.prompt.id}: {verdict} ({counts})",
            file=sys.stderr,
            flush=True,
        )

    if server.reference is not None:
        observer = Observer.reference(server=server.reference, timeout=timeout)
    else:
        observer = Observer.connect(server.base_url, token=token, timeout=timeout)
    try:
        with observer:
            run = run_script(script, observer=observer, progress=progress)
    except ScriptFormatError as error:
        return _usage(str(error))
    print(format_report(run))
    try:
        if args.junit:
            write_junit(run, args.junit)
        if args.json:
            write_json(run, args.json)
    except OSError as error:
        print(f"silvia qa: cannot write a report: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0 if run.ok else 1
