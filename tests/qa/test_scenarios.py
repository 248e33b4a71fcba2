"""The checker on the reference server: good turns pass, each broken one trips only its rule."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from silvia_client.cli import main
from silvia_client.qa import RULES, Observer, check
from silvia_client.testing import (
    BROKEN_RULES,
    BROKEN_SCENARIOS,
    SCENARIOS,
    ReferenceServer,
    expected_turn,
)

GOOD = sorted(name for name, scenario in SCENARIOS.items() if scenario.fault is None)

# What each fault scenario is, in the rules' terms (the stall is in test_observe).
FAULTS = {
    "fault-drop": {"stream-complete"},
    "fault-malformed-json": {"events-well-formed"},
    "fault-malformed-shape": {"events-well-formed"},
    "fault-unknown-event": set(),
    "fault-error-event": {"stream-complete"},
    "fault-no-done": {"stream-complete"},
    "status-401": {"stream-complete"},
    "status-403": {"stream-complete"},
    "status-404": {"stream-complete"},
    "status-429": {"stream-complete"},
    "status-500": {"stream-complete"},
}

# What a client's limits, deadline and scrubber are for, not a server's rules:
# tests/e2e/test_hostile_faults.py runs them.
HOSTILE = {
    "fault-endless-line",
    "fault-oversized-event",
    "fault-gzip-bomb",
    "fault-trickle",
    "fault-keep-alive-forever",
    "fault-echo-token",
    "fault-echo-token-401",
}


@pytest.fixture(scope="module")
def qa() -> Iterator[Observer]:
    server = ReferenceServer()
    # No retries: a 429's Retry-After (4 s) is not what these tests are about.
    client = server.client(max_retries=0, timeout=5.0, idle_timeout=5.0)
    with Observer(client, server=server) as observer:
        yield observer


# Good turns whose findings are expected warnings: rule id -> how many.
EXPECTED_WARNINGS = {
    # Untyped, then typed: legitimate after a checkpoint written before targets existed.
    "checkpoint-fresh-write": {"one-meaning-per-source": 1},
}


def test_every_good_scenario_passes_every_rule(qa: Observer) -> None:
    for name in GOOD:
        result = check(qa.observe("How are my accounts doing?", scenario=name))
        expected = EXPECTED_WARNINGS.get(name, {})
        assert result.errors == (), name
        assert Counter(finding.rule for finding in result.warnings) == Counter(expected), name
        # Every rule ran: the turn completed and its session was reloaded.
        statuses = {o.rule.id: o.status for o in result.outcomes}
        expected_statuses = {r.id: "warn" if r.id in expected else "pass" for r in RULES}
        assert statuses == expected_statuses, name


def test_the_resumed_turn_is_a_warning_unless_the_prompt_rules_out_an_old_checkpoint(
    qa: Observer,
) -> None:
    observation = qa.observe("How much is in checking now?", scenario="checkpoint-fresh-write")
    # What the server sent, and the SDK's reading of it, live and reloaded.
    turn = observation.turn
    assert [c.target is None for c in turn.inline_citations] == [True, False]
    assert all(c.target is not None for c in turn.citations)
    assert observation.reload is not None
    assert observation.reload.session is not None
    stored = observation.reload.session.messages[-1]
    assert [c.target for c in stored.inline_citations] == [c.target for c in turn.inline_citations]
    (warning,) = check(observation).findings
    assert (warning.rule, warning.severity) == ("one-meaning-per-source", "warning")
    assert "checkpoint written before targets existed" in warning.message
    strict = check(observation, expect={"no_old_checkpoint": True})
    assert [(f.rule, f.severity) for f in strict.findings] == [("one-meaning-per-source", "error")]
    assert strict.outcome("one-meaning-per-source").status == "fail"
    assert not strict.ok


def test_each_broken_or_fault_scenario_breaks_its_rules_and_no_other(qa: Observer) -> None:
    expected = {**{name: {rule} for name, rule in BROKEN_RULES.items()}, **FAULTS}
    for name, rules in expected.items():
        observation = qa.observe("How are my accounts doing?", scenario=name)
        assert check(observation).broken_rules == rules, name


def test_every_rule_has_its_broken_scenario_named_after_it() -> None:
    assert sorted(BROKEN_RULES.values()) == sorted(rule.id for rule in RULES)
    for name, rule in BROKEN_RULES.items():
        assert name == f"broken-{rule}"
    assert set(FAULTS) | set(GOOD) | {"fault-stall"} | HOSTILE == set(SCENARIOS)


def test_broken_scenarios_are_kept_apart_from_the_library_but_served_and_listed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert not set(BROKEN_SCENARIOS) & set(SCENARIOS)
    assert set(BROKEN_SCENARIOS) <= set(ReferenceServer().scenarios)
    assert main(["serve", "--list"]) == 0
    listed = dict(line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines())
    for name, scenario in BROKEN_SCENARIOS.items():
        assert listed[name] == scenario.description


def test_the_rewrite_hook_leaves_good_scenarios_alone() -> None:
    assert all(scenario.rewrite is None for scenario in SCENARIOS.values())
    # What a broken scenario streams is what `expected_turn` reads off its steps.
    expected = expected_turn(BROKEN_SCENARIOS["broken-summary-agrees"])
    assert "silvia://market-data/finnhub/AAPL" not in {c["source"] for c in expected.citations}
    assert "silvia://market-data/finnhub/AAPL" in {c["source"] for c in expected.inline_citations}


def test_broken_scenarios_do_not_touch_the_library_turns_they_start_from(qa: Observer) -> None:
    for name in BROKEN_SCENARIOS:
        qa.observe("hi", scenario=name)
    assert check(qa.observe("hi", scenario="demo")).findings == ()
    assert check(qa.observe("hi", scenario="pooling")).findings == ()
