"""`silvia qa`: check that a server's citation targets follow the server team's rules.

- `silvia qa run SCRIPT` runs every prompt of a QA script (see
  `silvia_client.qa.script` for the format) against the server `--base-url`,
  else `SILVIA_BASE_URL`, else the embedded reference server (said on stderr),
  reloads each session, checks each turn against the rule table, shows its
  progress on stderr (on a terminal one live line, `LiveProgress`: prompts
  done, errors so far, the prompt running and for how long; else one line per
  finished prompt; `--quiet` neither), then the table and the findings on
  stdout. `--concurrency N` runs up to N prompts at once
  on the async client (same reports, same status); `--record DIR` saves each
  prompt's turn as a recording.
- Both `run` and `check` write `--junit`, `--json` and `--html` reports (the
  HTML one self-contained, to look at; `--web-url` makes its account links
  absolute).
- `silvia qa check FILE...` runs every rule over recorded turns (`silvia
  record`, `--record DIR`), with no server at all, and reports the same way.
- `silvia qa rules` lists the rules.
- `silvia qa init [PATH]` writes a starter script (`qa/starter.json`), which
  passes against the embedded reference server.

Every `silvia qa` command exits 0 when the findings are warnings at most, 1
when any finding is of error severity, 2 for a usage error (a script or a
recording that cannot be read, a bad option, no token for a real server), and
3 when the server could not be reached or refused the credentials before any
prompt completed: then no more prompts start, and one line on stderr names the
cause and the request id. Ctrl-C stops a run with status 130, after writing
the reports asked for, the prompts not run marked as such. An internal error
(an exception nothing above maps, a bug of ours) is status 4, never 1: the
reports asked for are written first, in the same way (the run marked as
interrupted, the prompts not run marked as such), then `main` prints its one
line. A report that fails does not keep the others from being written.

The token comes from `SILVIA_TOKEN` only, never from the command line, and is
never printed; neither is any provider.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from ._args import count, seconds
from ._common import add_base_url_argument, add_web_url_argument

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ..qa import AsyncObserver, Prompt, PromptResult, RunResult, Script
    from ..qa.runner import Progress, Started

__all__ = [
    "MAX_CONCURRENCY",
    "LiveProgress",
    "register",
    "run_check",
    "run_init",
    "run_recorded",
    "run_rules",
]

MAX_CONCURRENCY = 64
STARTER_PATH = "qa_script.json"


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--junit", metavar="PATH", help="write a JUnit XML report here")
    parser.add_argument("--json", metavar="PATH", help="write a JSON report here")
    parser.add_argument(
        "--html", metavar="PATH", help="write a self-contained HTML report here, to look at"
    )
    add_web_url_argument(parser)
    parser.add_argument(
        "--wide",
        action="store_true",
        help="always print the table with a row per rule and a column per prompt (by default "
        "a table wider than the terminal, or 100 columns, has a row per prompt instead)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia qa` (`run`, `check`, `rules`) to the parser."""
    parser = subparsers.add_parser(
        "qa",
        help="check a server's citation targets against the server's own rules",
        description=(
            "Scripted QA: run a script of prompts against a server (or the embedded reference "
            "server), and check every turn against the rules of chat-citation-targets. "
            "Exit status: 0 ok (warnings at most), 1 error findings, 2 usage error, 3 server "
            "unreachable or credentials refused, 4 internal error, 130 interrupted."
        ),
    )
    parser.set_defaults(command_name="qa")
    commands = parser.add_subparsers(dest="qa_command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run",
        help="run a QA script and check every turn",
        description=(
            "Run each prompt of SCRIPT (JSON), reload each session, check each turn. Exit "
            "status: 0 ok (warnings at most), 1 error findings, 2 usage error, 3 server "
            "unreachable or credentials refused, 4 internal error (the reports are still "
            "written), 130 interrupted. The bearer token is read from SILVIA_TOKEN."
        ),
    )
    run.add_argument("script", metavar="SCRIPT", help="the QA script (JSON)")
    add_base_url_argument(run)
    _add_report_arguments(run)
    run.add_argument(
        "--timeout",
        type=seconds(positive=True),
        default=None,
        metavar="S",
        help="seconds a stream may stay silent, or a request take (default 60)",
    )
    run.add_argument(
        "--concurrency",
        type=count(at_most=MAX_CONCURRENCY),
        default=1,
        metavar="N",
        help=f"run up to N prompts at once, 1 to {MAX_CONCURRENCY} (default 1); a prompt that "
        "continues another waits for it; the reports and the exit status are the same for any N",
    )
    run.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on stderr (by default a live line on a terminal, else a line per "
        "finished prompt)",
    )
    run.add_argument(
        "--record",
        metavar="DIR",
        help="save every prompt's turn in DIR as a recording, PROMPT-ID.jsonl (made if missing), "
        "to replay it or `silvia qa check` it later",
    )
    run.set_defaults(run=run_check)

    check = commands.add_parser(
        "check",
        help="check recorded turns, with no server",
        description=(
            "Run every rule over the turns recorded in FILE... (`silvia record`, or `silvia qa "
            "run --record DIR`), with no server at all. Same reports and exit statuses as run."
        ),
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="recordings to check")
    _add_report_arguments(check)
    check.set_defaults(run=run_recorded)

    rules = commands.add_parser("rules", help="list the rules", description="List the rules.")
    rules.set_defaults(run=run_rules)

    init = commands.add_parser(
        "init",
        help="write a starter QA script",
        description=(
            "Write a starter QA script to PATH (default qa_script.json): every expectation "
            "kind, the timing budgets and a continued prompt, each with a comment. It passes "
            "against the embedded reference server: `silvia qa run PATH`."
        ),
    )
    init.add_argument(
        "path", nargs="?", default=STARTER_PATH, metavar="PATH", help="where to write it"
    )
    init.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    init.set_defaults(run=run_init)


def _usage(message: str) -> int:
    from ._render import clean

    print(clean(f"silvia qa: {message}"), file=sys.stderr)
    return 2


def run_rules(args: argparse.Namespace) -> int:
    """Run `silvia qa rules`: list the rules; the exit status."""
    from ..qa import EXPECTATIONS, RULES, TIMING

    rules = (*RULES, EXPECTATIONS, TIMING)
    width = max(len(rule.id) for rule in rules)
    for rule in rules:
        print(f"{rule.id:<{width}}  {rule.severity:<7}  {rule.description}")
    return 0


def run_init(args: argparse.Namespace) -> int:
    """Run `silvia qa init`: write a starter QA script; the exit status."""
    from importlib import resources

    from ._render import clean

    starter = resources.files("silvia_client.qa").joinpath("starter.json")

    mode = "w" if args.force else "x"
    try:
        with open(args.path, mode, encoding="utf-8") as file:
            file.write(starter.read_text(encoding="utf-8"))
    except FileExistsError:
        return _usage(f"{args.path} exists; --force overwrites it")
    except OSError as error:
        return _usage(f"cannot write {args.path}: {error.strerror or error}")
    print(clean(f"silvia qa: wrote {args.path}; run it with: silvia qa run {args.path}"))
    return 0


NOT_A_TERMINAL_WIDTH = 100


def _table_width(args: argparse.Namespace) -> int | None:
    """The width the table must keep to: the terminal's, else 100; None with `--wide`."""
    if getattr(args, "wide", False):
        return None
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return NOT_A_TERMINAL_WIDTH
    import shutil

    return max(40, shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns)


def _report(run: RunResult, args: argparse.Namespace, *, stop_line: bool = True) -> int:
    """Print the report, say why the run stopped, write the reports asked for; the status.

    Each step is tried whatever became of the one before: an internal error in
    one (raised again at the end, for `main`'s exit status 4) does not keep the
    reports after it from being written. `stop_line=False` leaves the run's stop
    line to the caller.
    """
    from functools import partial

    from ..qa import report
    from ._render import clean

    failure: Exception | None = None
    try:
        print(report.format_report(run, _table_width(args)), flush=True)
    except Exception as error:  # an internal error: write the reports all the same
        failure = error
    stopped = report.stop_line(run) if stop_line else None
    if stopped is not None:
        print(clean(f"silvia qa: {stopped}"), file=sys.stderr, flush=True)
    unwritten = False
    writers = (
        (args.junit, report.write_junit),
        (args.json, report.write_json),
        (args.html, partial(report.write_html, web_url=args.web_url)),
    )
    for path, write in writers:
        if not path:
            continue
        try:
            write(run, path)
        except OSError as error:
            unwritten = True
            print(f"silvia qa: cannot write a report: {error.strerror or error}", file=sys.stderr)
        except Exception as error:  # an internal error: the other reports are still written
            failure = failure or error
    if failure is not None:
        raise failure
    if unwritten:
        return 2
    return 130 if run.interrupted else run.exit_status


def _progress_line(number: int, total: int, result: PromptResult) -> str:
    from ..qa.report import turn_ids
    from ._render import clean

    checked = result.result
    if checked.cause is not None:  # one cause, said once
        line = f"[{number}/{total}] {result.prompt.id}: not run: {checked.cause.message}"
        ids = turn_ids(result.observation.request_id, result.observation.session_id)
        # In parentheses: the cause is the server's sentence, which ends in its own stop.
        return clean(f"{line} ({ids})" if ids else line)
    verdict = "FAIL" if not checked.ok else ("warn" if checked.warnings else "ok")
    line = (
        f"[{number}/{total}] {result.prompt.id}: {verdict} "
        f"({len(checked.errors)} error(s), {len(checked.warnings)} warning(s))"
    )
    ids = turn_ids(result.observation.request_id, result.observation.session_id)
    if not checked.ok and ids:
        line += f"; {ids}"
    return clean(line)


class LiveProgress:
    """The live progress line on a terminal's stderr: done/total, errors, the prompt running.

    `started` and `finished` redraw it; `tick` redraws it with the elapsed time
    (a thread calls it every `TICK` seconds while the run goes on); `close`
    clears it. `clock` gives seconds (injectable, for tests).
    """

    TICK = 0.5

    def __init__(
        self, stream: TextIO, total: int, clock: Callable[[], float] | None = None
    ) -> None:
        import time

        self.stream = stream
        self.total = total
        self.clock: Callable[[], float] = clock or time.monotonic
        self.done: int = 0
        self.errors: int = 0
        self.running: dict[str, float] = {}  # prompt id -> when it was sent
        self._lock = threading.Lock()

    def line(self) -> str:
        """The progress line: prompts done, errors, the oldest prompt still running."""
        from ._render import clean

        text = f"[{self.done}/{self.total}] {self.errors} error(s)"
        if self.running:
            prompt_id, since = min(self.running.items(), key=lambda item: item[1])
            more = f" (+{len(self.running) - 1})" if len(self.running) > 1 else ""
            text += f"; running {prompt_id}{more}, {max(0.0, self.clock() - since):.1f} s"
        return clean(text)

    def _draw(self) -> None:
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns - 1
        line = self.line()
        line = line if len(line) <= width else line[: max(0, width - 1)] + "…"
        self.stream.write(f"\r\x1b[2K{line}")
        self.stream.flush()

    def started(self, prompt: Prompt) -> None:
        """A prompt was sent: redraw with it running."""
        with self._lock:
            self.running[prompt.id] = self.clock()
            self._draw()

    def finished(self, number: int, total: int, result: PromptResult) -> None:
        """A prompt's turn was checked: count it and its errors, and redraw."""
        with self._lock:
            self.done = number
            self.errors += len(result.result.errors)
            self.running.pop(result.prompt.id, None)
            self._draw()

    def tick(self) -> None:
        """Redraw, so the running prompt's seconds go on."""
        with self._lock:
            self._draw()

    def close(self) -> None:
        """Clear the progress line."""
        with self._lock:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


@contextlib.contextmanager
def _ticking(live: LiveProgress | None) -> Iterator[None]:
    """Redraw `live` every `TICK` seconds inside the block (nothing for None)."""
    if live is None:
        yield
        return
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(live.TICK):
            live.tick()

    thread = threading.Thread(target=tick, name="silvia-qa-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        live.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _recorder(directory: str) -> tuple[Callable[[PromptResult], None], list[str]]:
    """Save each prompt's recording in `directory`; the list collects what could not be."""
    from ._render import clean

    problems: list[str] = []

    def save(result: PromptResult) -> None:
        path = os.path.join(directory, f"{result.prompt.id}.jsonl")
        try:
            result.observation.to_recording().save(path)
        except ValueError:  # no response came: nothing to replay
            print(f"silvia qa: {result.prompt.id}: no response, no recording", file=sys.stderr)
        except OSError as error:
            problems.append(clean(f"cannot write {path}: {error.strerror or error}"))

    return save, problems


def run_check(args: argparse.Namespace) -> int:
    """Run `silvia qa run`: a QA script against a server, with its reports; the exit status."""
    import asyncio

    from ..qa import (
        AsyncObserver,
        Observer,
        RunResult,
        ScriptFormatError,
        load_script,
        run_script,
    )
    from ..qa.runner import DEFAULT_TIMEOUT, run_target
    from ._common import check_web_url
    from ._server import choose_server

    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    problem = check_web_url(args.web_url)
    if problem:
        return _usage(problem)
    try:
        script = load_script(args.script)
    except ScriptFormatError as error:
        return _usage(str(error))
    if args.record:
        try:
            os.makedirs(args.record, exist_ok=True)
        except OSError as error:
            return _usage(f"cannot make {args.record}: {error.strerror or error}")
    server = choose_server(args.base_url, "qa run")
    token = os.environ.get("SILVIA_TOKEN") or None
    if not server.embedded and token is None:
        return _usage(f"set SILVIA_TOKEN to the bearer token for {server.source}")

    done: list[PromptResult] = []  # what a Ctrl-C leaves: every prompt finished so far
    save, unsaved = _recorder(args.record) if args.record else (None, [])

    live = (
        LiveProgress(sys.stderr, len(script.prompts))
        if not args.quiet and _is_terminal(sys.stderr)
        else None
    )

    def progress(number: int, total: int, result: PromptResult) -> None:
        done.append(result)
        if live is not None:
            live.finished(number, total, result)
        elif not args.quiet:
            print(_progress_line(number, total, result), file=sys.stderr, flush=True)
        if save is not None:
            save(result)

    started = live.started if live is not None else None

    # One prompt at a time on the sync client; more at once on the async one.
    kind = Observer if args.concurrency == 1 else AsyncObserver
    record = bool(args.record)
    observer: Observer | AsyncObserver
    if server.reference is not None:
        observer = kind.reference(server=server.reference, timeout=timeout, record=record)
    else:
        observer = kind.connect(server.base_url, token=token, timeout=timeout, record=record)
    try:
        with _ticking(live):
            if isinstance(observer, Observer):
                with observer:
                    run = run_script(script, observer=observer, progress=progress, started=started)
            else:
                run = asyncio.run(_arun(script, observer, args.concurrency, progress, started))
    except ScriptFormatError as error:
        return _usage(str(error))
    except KeyboardInterrupt:
        print("\nsilvia qa: interrupted; writing the reports", file=sys.stderr, flush=True)
        run = RunResult.of(script, run_target(observer), done, interrupted=True)
    except Exception:
        # An internal error (exit status 4, said by `main`): as on Ctrl-C, the reports
        # keep every prompt finished so far, the run marked as cut short.
        run = RunResult.of(script, run_target(observer), done, interrupted=True)
        with contextlib.suppress(Exception):  # the run's own error is the one to tell
            _report(run, args, stop_line=False)
        raise
    status = _report(run, args)
    for line in unsaved:
        print(f"silvia qa: {line}", file=sys.stderr)
    return 2 if unsaved and status in (0, 1) else status


async def _arun(
    script: Script,
    observer: AsyncObserver,
    concurrency: int,
    progress: Progress,
    started: Started | None,
) -> RunResult:
    from ..qa import arun_script

    async with observer:
        return await arun_script(
            script,
            observer=observer,
            concurrency=concurrency,
            progress=progress,
            started=started,
        )


def run_recorded(args: argparse.Namespace) -> int:
    """Run `silvia qa check`: the rules over recordings; the exit status."""
    from ..qa.recorded import check_recordings
    from ..testing import Recording, RecordingFormatError
    from ._common import check_web_url

    problem = check_web_url(args.web_url)
    if problem:
        return _usage(problem)
    recordings: list[tuple[str, Recording]] = []
    for path in args.files:
        try:
            name = os.path.splitext(os.path.basename(path))[0]
            recordings.append((name, Recording.load(path)))
        except RecordingFormatError as error:
            return _usage(f"{path}: {error}")
        except OSError as error:
            return _usage(f"cannot read {path}: {error.strerror or error}")
    return _report(check_recordings(recordings), args)
