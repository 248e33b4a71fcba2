"""Running the rule table over one observed turn, and `assert_conforms` for tests.

Every finding is built here, from a rule's `Problem`: its message and evidence
are redacted on the way (`_privacy`), so no rule can leak a provider, however
it was written. A rule whose check itself fails (on data odd enough to trip
it) gives a finding saying so instead of ending the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..chat import Timings, Turn
from ..citations import AccountsTarget, AccountTarget
from ..sessions import Session
from ._observation import Observation, observation_from_turn
from ._privacy import redact, redact_text
from ._rule import Facts, Finding, Problem, Rule, facts_of, format_finding
from .rules import EXPECTATIONS, RULES, TIMING
from .script import Expectations, parse_expectations

__all__ = [
    "CheckResult",
    "RuleOutcome",
    "Status",
    "assert_conforms",
    "check",
    "expectation_problems",
    "prompt_rules",
    "timing_problems",
]

Status: TypeAlias = Literal["pass", "warn", "fail", "skip", "not_run"]


@dataclass(frozen=True)
class RuleOutcome:
    """How one turn fared against one rule: `pass`, `warn`, `fail`, `skip` or `not_run`.

    `skip`: the rule does not apply; `not_run`: there was no turn to judge; both
    with the `reason`.
    """

    rule: Rule
    status: Status
    findings: tuple[Finding, ...] = ()
    reason: str | None = None


@dataclass(frozen=True)
class CheckResult:
    """Every rule's outcome for one turn, in the rule table's order (expectations last)."""

    outcomes: tuple[RuleOutcome, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(finding for outcome in self.outcomes for finding in outcome.findings)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.severity == "warning")

    @property
    def ok(self) -> bool:
        """No finding of error severity."""
        return not self.errors

    @property
    def not_run(self) -> bool:
        """Whether there was no turn to judge: its rules are `not_run` (one finding says why)."""
        return any(outcome.status == "not_run" for outcome in self.outcomes)

    @property
    def cause(self) -> Finding | None:
        """Why the turn could not run, when it could not: its one finding."""
        return next(iter(self.findings), None) if self.not_run else None

    @property
    def broken_rules(self) -> frozenset[str]:
        """The ids of the rules with findings."""
        return frozenset(finding.rule for finding in self.findings)

    def outcome(self, rule_id: str) -> RuleOutcome:
        """The outcome of the rule with this id; KeyError if it was not checked."""
        for outcome in self.outcomes:
            if outcome.rule.id == rule_id:
                return outcome
        raise KeyError(rule_id)


def _finding(rule: Rule, problem: Problem, observation: Observation) -> Finding:
    evidence = redact(dict(problem.evidence))
    assert isinstance(evidence, dict)
    severity = rule.severity if problem.severity is None else problem.severity
    return Finding(
        rule.id,
        severity,
        redact_text(problem.message),
        evidence,
        request_id=observation.request_id,
        session_id=observation.session_id,
    )


def _run(rule: Rule, facts: Facts, problems: Iterable[Problem] | None = None) -> RuleOutcome:
    reason = rule.skip(facts)
    if reason is not None:
        return RuleOutcome(rule, "skip", reason=reason)
    observation = facts.observation
    try:
        found = tuple(
            _finding(rule, p, observation)
            for p in (rule.check(facts) if problems is None else problems)
        )
    except Exception as error:  # a hostile body must not end the run
        problem = Problem(f"the check could not run on this turn ({type(error).__name__})")
        found = (_finding(rule, problem, observation),)
    if not found:
        return RuleOutcome(rule, "pass")
    # By the findings' own severities: a rule of errors may have found only warnings.
    failed = any(finding.severity == "error" for finding in found)
    return RuleOutcome(rule, "fail" if failed else "warn", found)


# A yes-or-no expectation: what a turn that misses it was expected to show, if yes and if no.
_YES_OR_NO = {
    "complete": ("the turn to complete", "the turn not to complete"),
    "cites_account": ("a citation of an account", "no citation of an account"),
    "no_citations": ("no citations", "at least one citation"),
}


def expectation_problems(facts: Facts, expect: Expectations) -> Iterator[Problem]:
    """The ways a turn misses its prompt's expectations."""
    targets = [row.target for row in [*facts.streamed, *(facts.summary or ())]]
    shown = {
        "complete": facts.observation.complete,
        "cites_account": any(isinstance(t, (AccountTarget, AccountsTarget)) for t in targets),
        "no_citations": not (facts.streamed or facts.summary),
    }
    for name, (yes, no) in _YES_OR_NO.items():
        wanted = getattr(expect, name)
        if wanted is not None and shown[name] != wanted:
            evidence: dict[str, object] = {"expected": {name: wanted}}
            if name == "no_citations":
                evidence["streamed"] = len(facts.streamed)
            yield Problem(f"expected {yes if wanted else no}", evidence)
    kinds = {getattr(target, "kind", None) for target in targets}
    missing = [kind for kind in expect.cites_kinds if kind not in kinds]
    if missing:
        yield Problem(
            f"expected citations of kind(s) {', '.join(missing)}; cited: "
            f"{', '.join(sorted(k for k in kinds if isinstance(k, str))) or 'none typed'}",
            {"expected": {"cites_kinds": list(expect.cites_kinds)}, "missing": missing},
        )


def timing_problems(timings: Timings, expect: Expectations) -> Iterator[Problem]:
    """The budgets a turn's timings went over, at the script's severity."""
    measured = (
        ("first text", "first_text", timings.first_text, expect.max_first_text_s),
        ("whole turn", "done", timings.done, expect.max_turn_s),
    )
    for what, name, seconds, budget in measured:
        if seconds is not None and budget is not None and seconds > budget:
            yield Problem(
                f"the {what} took {seconds:.2f} s; the budget is {budget:g} s",
                {f"{name}_s": round(seconds, 3), "budget_s": budget},
                expect.timing_severity,
            )


def _not_run(
    observation: Observation, rules: tuple[Rule, ...], extra: tuple[Rule, ...]
) -> CheckResult:
    """One cause, one finding: on `stream-complete`; every other rule is `not_run`."""
    failure = observation.failure or "the request failed"
    reason = f"not run: {failure}"
    outcomes: list[RuleOutcome] = []
    every = (*rules, *extra)
    carrier = CAUSE_RULE if any(rule.id == CAUSE_RULE for rule in every) else every[0].id
    for rule in every:
        if rule.id == carrier:
            problem = Problem(failure, {"events": 0, "request_id": observation.request_id})
            finding = _finding(rule, problem, observation)
            outcomes.append(RuleOutcome(rule, "fail", (finding,), reason=reason))
        else:
            outcomes.append(RuleOutcome(rule, "not_run", reason=reason))
    return CheckResult(tuple(outcomes))


CAUSE_RULE = "stream-complete"
"""The rule that carries the one finding of a turn that could not run."""


def check(
    subject: Observation | Turn,
    *,
    expect: Expectations | Mapping[str, object] | None = None,
    session: Session | None = None,
    rules: Iterable[Rule] = RULES,
) -> CheckResult:
    """Check one turn against the rule table (and `expect`, when given).

    `subject` is an `Observation` or a `Turn` (the rules that need the raw events
    skip it; `session` is its reloaded session). A turn that could not run has one
    finding, its cause, on `stream-complete`, and every other rule `not_run`.
    """
    if isinstance(subject, Turn):
        subject = observation_from_turn(subject, session=session)
    if expect is not None and not isinstance(expect, Expectations):
        expect = parse_expectations(dict(expect))
    # No event came, and the request failed (an HTTP error, no connection, no session).
    if subject.raw and not subject.events and subject.failure is not None:
        return _not_run(subject, tuple(rules), prompt_rules(expect))
    facts = facts_of(subject, no_old_checkpoint=expect is not None and expect.no_old_checkpoint)
    outcomes = [_run(rule, facts) for rule in rules]
    if expect is not None:
        extra = prompt_rules(expect)
        if EXPECTATIONS in extra:
            problems = list(expectation_problems(facts, expect))
            outcomes.append(_run(EXPECTATIONS, facts, problems))
        if TIMING in extra:  # (skipped, with the reason, when there are no timings)
            problems = list(timing_problems(subject.timings or Timings(), expect))
            outcomes.append(_run(TIMING, facts, problems))
    return CheckResult(tuple(outcomes))


def prompt_rules(expect: Expectations | None) -> tuple[Rule, ...]:
    """The rows a prompt's own expectations add to the table: `expectations`, `timing`."""
    if expect is None:
        return ()
    return (*(() if expect.only_timing else (EXPECTATIONS,)), *((TIMING,) if expect.timed else ()))


def assert_conforms(
    subject: Observation | Turn,
    *,
    expect: Expectations | Mapping[str, object] | None = None,
    session: Session | None = None,
    strict: bool = False,
) -> CheckResult:
    """Assert that a turn follows the server's rules (and `expect`); return the result.

    Raises `AssertionError` listing the findings when any is an error (or, with
    `strict`, a warning).
    """
    __tracebackhide__ = True
    result = check(subject, expect=expect, session=session)
    failing = result.findings if strict else result.errors
    if failing:
        noun = "finding" if len(failing) == 1 else "findings"
        raise AssertionError(
            f"the turn does not conform ({len(failing)} {noun}):\n"
            + "\n".join(map(format_finding, result.findings))
        )
    return result
