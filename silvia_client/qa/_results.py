"""The results of a QA run (`PromptResult`, `RunResult`), and the readings every report
(`report.py`, `_html.py`) says the same way: a cell of the rules-by-prompts table
(`rule_outcome`, `table_rules`), why a run stopped short (`stop_line`), timings in words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..chat import Timings, TurnBuilder
from ._observation import AccessFailure, Observation
from ._rule import Finding, Rule
from .checker import CheckResult, RuleOutcome, Status, prompt_rules
from .rules import EXPECTATIONS, RULES, TIMING
from .script import Prompt, Script


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
        if interrupted:
            reason = "the run was interrupted first"
        elif access_failure is not None:
            reason = f"the run stopped first: {access_failure.message}"
        else:
            reason = "the run stopped first"
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
