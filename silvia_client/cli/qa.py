"""`silvia qa`: check that a server's citation targets follow the server team's rules.

`run SCRIPT` runs a QA script against the chosen server (`_server`), on the async
client with `--concurrency N`, with progress on stderr (`LiveProgress` on a terminal);
`check FILE...` runs the rules over recordings; both print the table and write the
reports asked for (`_report`). `rules` lists the rules; `init` writes the starter script.
On Ctrl-C (130) and on an internal error (4) the reports are written first, the prompts
not run marked, and a report that fails keeps no other from being written. The token
comes from `SILVIA_TOKEN` only, and is never printed; neither is any provider.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any, TextIO

from .._text import terminal_text as clean
from ._common import UsageError, add_options, check_web_url, is_terminal, seconds, whole
from ._server import choose_server

if TYPE_CHECKING:
    from ..qa import AsyncObserver, Prompt, PromptResult, RunResult, Script

__all__ = ["MAX_CONCURRENCY", "LiveProgress", "register"]

MAX_CONCURRENCY = 64
STARTER_PATH = "qa_script.json"
NOT_A_TERMINAL_WIDTH = 100
STATUSES = (
    "Exit status: 0 ok (warnings at most), 1 error findings, 2 usage error, 3 server "
    "unreachable or credentials refused, 4 internal error, 130 interrupted"
)


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--junit", metavar="PATH", help="write a JUnit XML report here")
    parser.add_argument("--json", metavar="PATH", help="write a JSON report here")
    parser.add_argument(
        "--html", metavar="PATH", help="write a self-contained HTML report here, to look at"
    )
    add_options(parser, "--web-url")
    parser.add_argument(
        "--wide",
        action="store_true",
        help="always print the table with a row per rule and a column per prompt (by default "
        "a table wider than the terminal, or 100 columns, has a row per prompt instead)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `silvia qa` and its subcommands to the command's subparsers."""
    parser = subparsers.add_parser(
        "qa",
        help="check a server's citation targets against the server's own rules",
        description="Scripted QA: run a script of prompts against a server (or the embedded "
        "reference server), and check every turn against the rules of chat-citation-targets. "
        f"{STATUSES}.",
    )
    parser.set_defaults(command_name="qa")
    commands = parser.add_subparsers(dest="qa_command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run",
        help="run a QA script and check every turn",
        description="Run each prompt of SCRIPT (JSON), reload each session, check each turn. "
        f"{STATUSES} (after either, the reports are still written). The bearer token is read "
        "from SILVIA_TOKEN.",
    )
    run.add_argument("script", metavar="SCRIPT", help="the QA script (JSON)")
    add_options(run, "--base-url")
    _add_report_arguments(run)
    run.add_argument(
        "--timeout",
        type=seconds(positive=True),
        metavar="S",
        help="seconds a stream may stay silent, or a request take (default 60)",
    )
    run.add_argument(
        "--concurrency",
        type=whole(1, MAX_CONCURRENCY),
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
        description="Run every rule over the turns recorded in FILE... (`silvia record`, or "
        "`silvia qa run --record DIR`), with no server at all. Same reports and exit statuses "
        "as run.",
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="recordings to check")
    _add_report_arguments(check)
    check.set_defaults(run=run_recorded)

    rules = commands.add_parser("rules", help="list the rules", description="List the rules.")
    rules.set_defaults(run=run_rules)

    init = commands.add_parser(
        "init",
        help="write a starter QA script",
        description="Write a starter QA script to PATH (default qa_script.json): every "
        "expectation kind, the timing budgets and a continued prompt, each with a comment. It "
        "passes against the embedded reference server: `silvia qa run PATH`.",
    )
    init.add_argument(
        "path", nargs="?", default=STARTER_PATH, metavar="PATH", help="where to write it"
    )
    init.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    init.set_defaults(run=run_init)


def run_rules(args: argparse.Namespace) -> int:
    """Run `silvia qa rules`; the exit status."""
    from ..qa import EXPECTATIONS, RULES, TIMING

    rules = (*RULES, EXPECTATIONS, TIMING)
    width = max(len(rule.id) for rule in rules)
    for rule in rules:
        print(f"{rule.id:<{width}}  {rule.severity:<7}  {rule.description}")
    return 0


def run_init(args: argparse.Namespace) -> int:
    """Run `silvia qa init`; the exit status."""
    starter = resources.files("silvia_client.qa").joinpath("starter.json")
    try:
        with open(args.path, "w" if args.force else "x", encoding="utf-8") as file:
            file.write(starter.read_text(encoding="utf-8"))
    except FileExistsError:
        raise UsageError(f"{args.path} exists; --force overwrites it") from None
    except OSError as error:
        raise UsageError(f"cannot write {args.path}: {error.strerror or error}") from None
    print(clean(f"silvia qa: wrote {args.path}; run it with: silvia qa run {args.path}"))
    return 0


def _report(run: RunResult, args: argparse.Namespace, *, stop_line: bool = True) -> int:
    """Print the table, say why the run stopped, write the reports asked for; the status.

    The table keeps to the terminal's width, else 100 columns; with `--wide`, to none.
    An internal error in one step is raised again after the others (`main`: status 4).
    """
    from ..qa import report

    width: int | None = NOT_A_TERMINAL_WIDTH
    if args.wide:
        width = None
    elif is_terminal(sys.stdout):
        width = max(40, shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns)
    failure: Exception | None = None
    try:
        print(report.format_report(run, width), flush=True)
    except Exception as error:  # an internal error: write the reports all the same
        failure = error
    stopped = report.stop_line(run) if stop_line else None
    if stopped is not None:
        print(clean(f"silvia qa: {stopped}"), file=sys.stderr, flush=True)
    unwritten = False
    for path, write in (
        (args.junit, report.write_junit),
        (args.json, report.write_json),
        (args.html, lambda run, path: report.write_html(run, path, web_url=args.web_url)),
    ):
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
    return 2 if unwritten else 130 if run.interrupted else run.exit_status


def _progress_line(number: int, total: int, result: PromptResult) -> str:
    from ..qa.report import turn_ids

    checked, line = result.result, f"[{number}/{total}] {result.prompt.id}: "
    ids = turn_ids(result.observation.request_id, result.observation.session_id)
    if checked.cause is not None:  # one cause, said once; in parentheses after its own stop
        line += f"not run: {checked.cause.message}" + (f" ({ids})" if ids else "")
        return clean(line)
    verdict = "FAIL" if not checked.ok else ("warn" if checked.warnings else "ok")
    line += f"{verdict} ({len(checked.errors)} error(s), {len(checked.warnings)} warning(s))"
    return clean(line + (f"; {ids}" if not checked.ok and ids else ""))


class LiveProgress:
    """The live progress line on a terminal's stderr: done/total, errors, the prompt running.

    While a `ticking()` block runs, a thread redraws it every `TICK` seconds; then the
    line ends, leaving the terminal as it was. `clock` gives seconds (for tests).
    """

    TICK = 0.5

    def __init__(
        self, stream: TextIO, total: int, clock: Callable[[], float] | None = None
    ) -> None:
        self.stream = stream
        self.total = total
        self.clock: Callable[[], float] = clock or time.monotonic
        self.done: int = 0
        self.errors: int = 0
        self.running: dict[str, float] = {}  # prompt id -> when it was sent
        self._lock = threading.Lock()

    def line(self) -> str:
        """The progress line as it stands."""
        text = f"[{self.done}/{self.total}] {self.errors} error(s)"
        if self.running:
            prompt_id, since = min(self.running.items(), key=lambda item: item[1])
            more = f" (+{len(self.running) - 1})" if len(self.running) > 1 else ""
            text += f"; running {prompt_id}{more}, {max(0.0, self.clock() - since):.1f} s"
        return clean(text)

    def _draw(self) -> None:
        width = shutil.get_terminal_size((80, 24)).columns - 1
        line = self.line()
        line = line if len(line) <= width else line[: max(0, width - 1)] + "…"
        self.stream.write(f"\r\x1b[2K{line}")
        self.stream.flush()

    def started(self, prompt: Prompt) -> None:
        """Note that `prompt` has started."""
        with self._lock:
            self.running[prompt.id] = self.clock()
            self._draw()

    def finished(self, number: int, total: int, result: PromptResult) -> None:
        """Note that prompt `number` of `total` has finished with `result`."""
        with self._lock:
            self.done = number
            self.errors += len(result.result.errors)
            self.running.pop(result.prompt.id, None)
            self._draw()

    def tick(self) -> None:
        """Redraw the line (a spinner's step)."""
        with self._lock:
            self._draw()

    def close(self) -> None:
        """End the line, leaving the terminal as it was."""
        with self._lock:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    @contextlib.contextmanager
    def ticking(self) -> Iterator[None]:
        """Redraw the line every `TICK` seconds until the block ends, then `close` it."""
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(self.TICK):
                self.tick()

        thread = threading.Thread(target=tick, name="silvia-qa-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.close()


def run_check(args: argparse.Namespace) -> int:
    """Run `silvia qa run`: a QA script, every turn checked; the exit status."""
    import asyncio

    from ..qa import AsyncObserver, Observer, RunResult, ScriptFormatError, load_script, run_script
    from ..qa.runner import DEFAULT_TIMEOUT, run_target

    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    check_web_url(args.web_url)
    try:
        script = load_script(args.script)
    except ScriptFormatError as error:
        raise UsageError(str(error)) from None
    if args.record:
        try:
            os.makedirs(args.record, exist_ok=True)
        except OSError as error:
            raise UsageError(f"cannot make {args.record}: {error.strerror or error}") from None
    server = choose_server(args.base_url, "qa run")
    token = os.environ.get("SILVIA_TOKEN") or None
    if not server.embedded and token is None:
        raise UsageError(f"set SILVIA_TOKEN to the bearer token for {server.source}")

    done: list[PromptResult] = []  # what a Ctrl-C leaves: every prompt finished so far
    unsaved: list[str] = []  # the recordings that could not be written
    terminal = not args.quiet and is_terminal(sys.stderr)
    live = LiveProgress(sys.stderr, len(script.prompts)) if terminal else None

    def progress(number: int, total: int, result: PromptResult) -> None:
        done.append(result)
        if live is not None:
            live.finished(number, total, result)
        elif not args.quiet:
            print(_progress_line(number, total, result), file=sys.stderr, flush=True)
        if args.record:
            path = os.path.join(args.record, f"{result.prompt.id}.jsonl")
            try:
                result.observation.to_recording().save(path)
            except ValueError:  # no response came: nothing to replay
                print(f"silvia qa: {result.prompt.id}: no response, no recording", file=sys.stderr)
            except OSError as error:
                unsaved.append(clean(f"cannot write {path}: {error.strerror or error}"))

    hooks: dict[str, Any] = {"progress": progress, "started": live and live.started}
    # One prompt at a time on the sync client; more at once on the async one.
    kind = Observer if args.concurrency == 1 else AsyncObserver
    options: dict[str, Any] = {"timeout": timeout, "record": bool(args.record)}
    observer: Observer | AsyncObserver
    if server.reference is not None:
        observer = kind.reference(server=server.reference, **options)
    else:
        observer = kind.connect(server.base_url, token=token, **options)
    try:
        with live.ticking() if live is not None else contextlib.nullcontext():
            if isinstance(observer, Observer):
                with observer:
                    run = run_script(script, observer=observer, **hooks)
            else:
                run = asyncio.run(_arun(script, observer, args.concurrency, **hooks))
    except ScriptFormatError as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        print("\nsilvia qa: interrupted; writing the reports", file=sys.stderr, flush=True)
        run = RunResult.of(script, run_target(observer), done, interrupted=True)
    except Exception:  # an internal error (status 4, `main`'s): the reports first, as on Ctrl-C
        run = RunResult.of(script, run_target(observer), done, interrupted=True)
        with contextlib.suppress(Exception):  # the run's own error is the one to tell
            _report(run, args, stop_line=False)
        raise
    status = _report(run, args)
    for line in unsaved:
        print(f"silvia qa: {line}", file=sys.stderr)
    return 2 if unsaved and status in (0, 1) else status


async def _arun(script: Script, observer: AsyncObserver, n: int, **hooks: Any) -> RunResult:
    from ..qa import arun_script

    async with observer:
        return await arun_script(script, observer=observer, concurrency=n, **hooks)


def run_recorded(args: argparse.Namespace) -> int:
    """Run `silvia qa check`: saved recordings checked; the exit status."""
    from ..qa.recorded import check_recordings
    from ..testing import Recording, RecordingFormatError

    check_web_url(args.web_url)
    recordings: list[tuple[str, Recording]] = []
    for path in args.files:
        try:
            name = os.path.splitext(os.path.basename(path))[0]
            recordings.append((name, Recording.load(path)))
        except RecordingFormatError as error:
            raise UsageError(f"{path}: {error}") from None
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    return _report(check_recordings(recordings), args)
