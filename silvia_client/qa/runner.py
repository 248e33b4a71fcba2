"""Running a QA script: each prompt observed, its session reloaded, the turn checked.

Against a base URL, or, with none, an in-process reference server. `run_script`
runs the prompts one after another; `arun_script` up to N at once on the async
client (a prompt that continues another waits for it), with the same result
whatever N. A run stops early when the server refuses the credentials or cannot be
reached before any prompt completed (`access_failure`, exit status 3); prompts that
did not run keep their place, marked `ran=False`.

What a run found (`PromptResult`, `RunResult`) is here too, with the readings every
report (`report.py`, `_html.py`) says the same way: a cell of the rules-by-prompts
table (`rule_outcome`, `table_rules`), why a run stopped short (`stop_line`), timings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from ..chat import Timings, TurnBuilder
from ._observation import AccessFailure, Observation
from ._observing import AsyncObserver, Observer
from ._rule import Finding, Rule
from .checker import CheckResult, RuleOutcome, Status, check, prompt_rules
from .rules import EXPECTATIONS, RULES, TIMING
from .script import Prompt, Script, ScriptFormatError

__all__ = [
    "DEFAULT_TIMEOUT",
    "REFERENCE_TARGET",
    "Progress",
    "Started",
    "arun_script",
    "public_url",
    "run_script",
    "run_target",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds a prompt's stream may stay silent, and a request may take, before it counts as failed."""

REFERENCE_TARGET = "the in-process reference server"


@dataclass(frozen=True)
class PromptResult:
    """One prompt: what was observed and how it was judged.

    `ran` is False for a prompt the run never got to; `did_run` is False for those
    and for a prompt whose request failed before any event.
    """

    prompt: Prompt
    observation: Observation
    result: CheckResult
    ran: bool = True

    @property
    def did_run(self) -> bool:
        """Whether there was a turn to judge."""
        return self.ran and not self.result.not_run


@dataclass(frozen=True)
class RunResult:
    """A whole run: the script, where it ran, and every prompt's result, in the script's order.

    `access_failure` says why the run stopped before its end (the server
    refused the credentials or could not be reached, before any prompt
    completed); `interrupted` that it was cut short (Ctrl-C).
    """

    script: Script
    target: str  # the base URL (no user info, query or fragment), or REFERENCE_TARGET
    prompts: tuple[PromptResult, ...]
    rules: tuple[Rule, ...] = RULES
    access_failure: AccessFailure | None = field(default=None)
    interrupted: bool = False

    @classmethod
    def of(
        cls,
        script: Script,
        target: str,
        results: Iterable[PromptResult],
        *,
        access_failure: AccessFailure | None = None,
        interrupted: bool = False,
        rules: tuple[Rule, ...] = RULES,
    ) -> RunResult:
        """A run from the prompts that ran (in any order); every other prompt marked not run."""
        by_id = {result.prompt.id: result for result in results}
        reason = "the run stopped first" + (f": {access_failure.message}" if access_failure else "")
        if interrupted:
            reason = "the run was interrupted first"
        prompts = tuple(
            by_id.get(prompt.id) or not_run(prompt, reason, rules) for prompt in script.prompts
        )
        return cls(script, target, prompts, rules, access_failure, interrupted)

    @property
    def ran(self) -> tuple[PromptResult, ...]:
        """The prompts that ran."""
        return tuple(result for result in self.prompts if result.ran)

    @property
    def not_run(self) -> int:
        """How many prompts gave no turn to judge (never sent, or the request failed)."""
        return sum(not result.did_run for result in self.prompts)

    @property
    def failed(self) -> int:
        """How many prompts ran and have a finding of error severity."""
        return sum(result.did_run and not result.result.ok for result in self.prompts)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(finding for result in self.prompts for finding in result.result.findings)

    @property
    def errors(self) -> int:
        return sum(finding.severity == "error" for finding in self.findings)

    @property
    def warnings(self) -> int:
        return sum(finding.severity == "warning" for finding in self.findings)

    @property
    def ok(self) -> bool:
        """No finding of error severity, and nothing stopped the run."""
        return self.errors == 0 and self.access_failure is None and not self.interrupted

    @property
    def exit_status(self) -> int:
        """`silvia qa`'s exit status: 3 the server refused or was unreachable, 1 errors, else 0."""
        if self.access_failure is not None:
            return 3
        return 1 if self.errors else 0


MARKS: dict[Status, tuple[str, str, str]] = {
    "pass": ("pass", ".", "✓"),
    "warn": ("warn", "w", "!"),
    "fail": ("FAIL", "F", "✗"),
    "skip": ("-", "-", "–"),
    "not_run": ("n/r", "~", "○"),
}
"""Each status's mark: in the wide table, in the compact one, in the HTML page."""


def empty_observation(prompt: Prompt, failure: str) -> Observation:
    """The observation of a prompt that was never sent: no event, and why."""
    return Observation(prompt.message, (), TurnBuilder().build(), failure=failure)


def not_run(prompt: Prompt, reason: str, rules: Sequence[Rule] = RULES) -> PromptResult:
    """A prompt the run never got to: an empty observation, every rule skipped with `reason`."""
    reason = f"not run: {reason}"
    observation = empty_observation(prompt, reason)
    checked = [*rules, *prompt_rules(prompt.expect)]
    outcomes = tuple(RuleOutcome(rule, "not_run", reason=reason) for rule in checked)
    return PromptResult(prompt, observation, CheckResult(outcomes), ran=False)


def prompt_status(result: PromptResult) -> str:
    """`ok`, `warn`, `fail` or `not_run`: a prompt's verdict."""
    if not result.did_run:
        return "not_run"
    if not result.result.ok:
        return "fail"
    return "warn" if result.result.warnings else "ok"


def seconds_text(value: float | None, never: str = "-") -> str:
    """`70 ms` under a second, `1.25 s` from one on; `never` for a moment not reached."""
    if value is None:
        return never
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def format_timings(timings: Timings | None) -> str:
    """`first text 120 ms, done 1.30 s` (`-` for a moment the turn never reached)."""
    if timings is None:
        return "no timings"
    return f"first text {seconds_text(timings.first_text)}, done {seconds_text(timings.done)}"


def stop_line(run: RunResult) -> str | None:
    """Why the run stopped short, in one line; None when every prompt ran."""
    if run.access_failure is not None:
        return f"stopped: {run.access_failure.message}; {run.not_run} did not run"
    if run.interrupted:
        return f"interrupted: {run.not_run} did not run"
    return None


def table_rules(run: RunResult) -> list[Rule]:
    """The table's rows: the run's rules, then those the prompts' expectations add."""
    extra = {rule.id: rule for result in run.prompts for rule in prompt_rules(result.prompt.expect)}
    return [*run.rules, *(rule for rule in (EXPECTATIONS, TIMING) if rule.id in extra)]


def rule_outcome(result: PromptResult, rule: Rule) -> RuleOutcome | None:
    """One cell of the table: what `rule` found on this prompt (None: it did not run there)."""
    for outcome in result.result.outcomes:
        if outcome.rule.id == rule.id:
            return outcome
    return None


def public_url(url: str) -> str:
    """`url` without user info, query or fragment (`https://u:k@host/?key=k` -> `https://host/`)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def run_target(observer: Observer | AsyncObserver) -> str:
    """What a run against `observer` is against, as the reports say it."""
    return REFERENCE_TARGET if observer.server is not None else public_url(observer.base_url)


def check_scenarios(script: Script, observer: Observer | AsyncObserver) -> None:
    """On a reference server, raise `ScriptFormatError` for a scenario it does not have."""
    server = observer.server
    if server is None:
        return
    unknown = [
        f"{prompt.id}: {prompt.scenario!r}"
        for prompt in script.prompts
        if prompt.scenario is not None and prompt.scenario not in server.scenarios
    ]
    if unknown:
        raise ScriptFormatError(
            f"no such reference-server scenario ({'; '.join(unknown)}); "
            "`silvia serve --list` lists them"
        )


Progress = Callable[[int, int, PromptResult], None]
"""`progress(number, total, result)`: called as each prompt is done (number: how many are)."""

Started = Callable[[Prompt], None]
"""`started(prompt)`: called as a prompt is sent (for a live progress line)."""


class _Tally:
    """What a run has found so far, and whether it must stop: shared by both runners."""

    def __init__(self, script: Script, progress: Progress | None) -> None:
        self.script = script
        self.progress = progress
        self.results: list[PromptResult] = []
        self.access_failure: AccessFailure | None = None
        self._completed = False  # some prompt completed: the server works, so never stop early

    @property
    def stopped(self) -> bool:
        return self.access_failure is not None

    def add(self, prompt: Prompt, observation: Observation) -> PromptResult:
        result = PromptResult(prompt, observation, check(observation, expect=prompt.expect))
        self.results.append(result)
        self._completed = self._completed or observation.complete
        failure = observation.access_failure
        if failure is not None and not self._completed and not self.stopped:
            self.access_failure = failure
        if self.progress is not None:
            self.progress(len(self.results), len(self.script.prompts), result)
        return result

    def result(self, target: str) -> RunResult:
        return RunResult.of(self.script, target, self.results, access_failure=self.access_failure)


def _next(
    prompt: Prompt, previous: Observation | None, started: Started | None
) -> tuple[str | None, Observation | None]:
    """The session `prompt` continues (the previous prompt's, when it says `continue`),
    and its observation when it cannot be sent; else it is about to be (`started`)."""
    if not prompt.continue_session:
        session_id = None
    elif previous is None or previous.session_id is None:
        return None, empty_observation(prompt, "the previous prompt gave no session to continue")
    else:
        session_id = previous.session_id
    if started is not None:
        started(prompt)
    return session_id, None


_O = TypeVar("_O", Observer, AsyncObserver)


def _opened(kind: type[_O], base_url: str | None, token: str | None, timeout: float) -> _O:
    """An observer of `base_url`, else of a fresh reference server."""
    if base_url is None:
        return kind.reference(token=token, timeout=timeout)
    return kind.connect(base_url, token=token, timeout=timeout)


def run_script(
    script: Script,
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    observer: Observer | None = None,
    progress: Progress | None = None,
    started: Started | None = None,
) -> RunResult:
    """Run every prompt of `script`, one after another, and check it.

    The server is `observer`'s, else the one at `base_url`, else a fresh reference
    server. Raises `ScriptFormatError` before sending anything when, on a reference
    server, a prompt names a scenario it does not have.
    """
    own = observer is None
    observer = observer or _opened(Observer, base_url, token, timeout)
    try:
        check_scenarios(script, observer)
        tally = _Tally(script, progress)
        previous: Observation | None = None
        for prompt in script.prompts:
            if tally.stopped:
                break
            session_id, observation = _next(prompt, previous, started)
            if observation is None:
                observation = observer.observe(
                    prompt.message, scenario=prompt.scenario, session_id=session_id
                )
            tally.add(prompt, observation)
            previous = observation
        return tally.result(run_target(observer))
    finally:
        if own:
            observer.close()


def _chains(script: Script) -> list[list[Prompt]]:
    """The prompts in runs that must go in order: each prompt, and the ones that continue it."""
    chains: list[list[Prompt]] = []
    for prompt in script.prompts:
        if prompt.continue_session and chains:
            chains[-1].append(prompt)
        else:
            chains.append([prompt])
    return chains


async def arun_script(
    script: Script,
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    observer: AsyncObserver | None = None,
    concurrency: int = 1,
    progress: Progress | None = None,
    started: Started | None = None,
) -> RunResult:
    """The async twin of `run_script`: up to `concurrency` prompts at once.

    A prompt and those that continue it run in order; when the run stops early,
    no more prompts start and those in flight are cancelled (they count as not run).
    """
    if concurrency < 1:
        raise ValueError("concurrency must be 1 or more")
    own = observer is None
    observer = observer or _opened(AsyncObserver, base_url, token, timeout)
    try:
        check_scenarios(script, observer)
        tally = _Tally(script, progress)
        slots = asyncio.Semaphore(concurrency)
        tasks: list[asyncio.Task[None]] = []

        async def run_chain(chain: Sequence[Prompt], observer: AsyncObserver) -> None:
            previous: Observation | None = None
            for prompt in chain:
                async with slots:
                    if tally.stopped:
                        return
                    session_id, observation = _next(prompt, previous, started)
                    if observation is None:
                        observation = await observer.observe(
                            prompt.message, scenario=prompt.scenario, session_id=session_id
                        )
                tally.add(prompt, observation)
                if tally.stopped:  # stop the others: none of them can succeed either
                    for task in tasks:
                        if task is not asyncio.current_task():
                            task.cancel()
                    return
                previous = observation

        tasks += [asyncio.ensure_future(run_chain(chain, observer)) for chain in _chains(script)]
        try:
            await asyncio.wait(tasks)
        finally:  # also when this run is cancelled (Ctrl-C): nothing is left running
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
        return tally.result(run_target(observer))
    finally:
        if own:
            await observer.aclose()
