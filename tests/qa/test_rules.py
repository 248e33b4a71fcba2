"""Each rule on hand-built turns (what it catches, lets through, skips), then on the reference
server: good turns pass, each broken one trips only its rule."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from silvia_client.qa import RULES, Observer, Reload, Rule, check
from silvia_client.qa.rules import Problem
from silvia_client.testing import (
    BROKEN_RULES,
    BROKEN_SCENARIOS,
    SCENARIOS,
    ReferenceServer,
    expected_turn,
)

from ._helpers import (
    AAPL,
    CARD_ONE,
    CARD_TWO,
    CARDS,
    CHECKING,
    IRS,
    SECRET,
    Raw,
    account,
    assert_private,
    cite,
    observe_events,
    stored,
    turn_events,
)

CHECKING_SRC = "silvia://your-account/checking"
ECFR = "https://www.ecfr.gov/current/title-12/part-1026"


def broken(events: list[tuple[str, object]], **kwargs: object) -> set[str]:
    return set(check(observe_events(events, **kwargs)).broken_rules)  # type: ignore[arg-type]


def test_every_rule_has_a_unique_id_a_severity_a_description_and_its_broken_scenario() -> None:
    assert len({rule.id for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.severity in ("error", "warning")
        assert rule.description
        assert "\n" not in rule.description
    assert [rule.id for rule in RULES if rule.severity == "warning"] == ["no-vendor-names"]
    assert sorted(BROKEN_RULES.values()) == sorted(rule.id for rule in RULES)
    for name, rule_id in BROKEN_RULES.items():
        assert name == f"broken-{rule_id}"
    assert set(FAULTS) | set(GOOD) | {"fault-stall"} | HOSTILE == set(SCENARIOS)
    assert not set(BROKEN_SCENARIOS) & set(SCENARIOS)  # kept apart
    assert all(scenario.rewrite is None for scenario in SCENARIOS.values())
    # What a broken scenario streams is what `expected_turn` reads off its steps.
    expected = expected_turn(BROKEN_SCENARIOS["broken-summary-agrees"])
    assert "silvia://market-data/finnhub/AAPL" not in {c["source"] for c in expected.citations}
    assert "silvia://market-data/finnhub/AAPL" in {c["source"] for c in expected.inline_citations}


TABLE: list[tuple[str, dict[str, object], bool]] = [
    (CHECKING_SRC, account(CHECKING), True),
    (CHECKING_SRC, account(CARD_ONE, CARD_TWO), True),
    (CHECKING_SRC, {"kind": "portfolio"}, False),
    ("silvia://your-account/", account(CHECKING), False),
    ("silvia://your-portfolio", {"kind": "portfolio"}, True),
    ("silvia://your-portfolio", {"kind": "analysis"}, False),
    (AAPL, {"kind": "market_data", "ticker": "AAPL"}, True),
    (AAPL, {"kind": "market_data", "ticker": "aapl"}, False),
    (AAPL, {"kind": "analysis"}, False),
    ("silvia://market-data/finnhub", {"kind": "analysis"}, True),
    ("silvia://market-data/finnhub", {"kind": "market_data", "ticker": "AAPL"}, False),
    ("silvia://analysis", {"kind": "analysis"}, True),
    ("silvia://analysis", {"kind": "portfolio"}, False),
    (IRS, {"kind": "web", "url": IRS}, True),
    (IRS, {"kind": "tax_reference", "url": IRS}, True),
    (IRS, {"kind": "card_document", "url": IRS}, True),
    (ECFR, {"kind": "mortgage_reference", "url": ECFR}, True),
    (IRS, {"kind": "web", "url": IRS + "?page=2"}, False),
    (IRS, {"kind": "tax_reference", "url": None}, False),
    (IRS, {"kind": "market_data", "ticker": "IRS"}, False),
    ("silvia://tax-authority/state/ca/ftb-1001.md", {"kind": "tax_reference", "url": None}, True),
    ("silvia://tax-authority/state/ca/ftb-1001.md", {"kind": "tax_reference", "url": IRS}, False),
    ("silvia://tax-authority/state/ca/ftb-1001.md", {"kind": "card_document", "url": None}, False),
    ("silvia://credit-card-corpus/amex/gold.md", {"kind": "card_document", "url": None}, True),
    ("silvia://credit-card-corpus/amex/gold.md", {"kind": "mortgage_reference"}, False),
    ("silvia://mortgage-code/fannie-mae/b3.md", {"kind": "mortgage_reference", "url": None}, True),
    ("silvia://search/search_web", {"kind": "web", "url": IRS}, False),
    ("silvia://somewhere-else", {"kind": "analysis"}, False),
    ("ftp://files.example/a.pdf", {"kind": "web", "url": IRS}, False),
]


def test_target_fits_source_as_the_docs_table_says() -> None:
    for source, target, fits in TABLE:
        found = broken(turn_events([cite(source, target)]))
        assert found == (set() if fits else {"target-fits-source"}), (source, target)


ONE = account(CARD_ONE)
TWO = account(CARD_TWO)
BOTH = account(CARD_ONE, CARD_TWO)
WEB = {"kind": "web", "url": IRS}
APPLE = {"kind": "market_data", "ticker": "AAPL"}
ROW = cite(CARDS, ONE)
EVENTS = turn_events([ROW])
NO_SUMMARY = [e for e in EVENTS if e[0] != "citations_summary"]


def rows(*targets: object) -> list[dict[str, object]]:
    """A row of `CARDS` per target, each quoting its own text."""
    return [cite(CARDS, target, cited_text=f"row {i}") for i, target in enumerate(targets)]


def one(source: str, *target: object) -> list[tuple[str, object]]:
    return turn_events([cite(source, *target)])


# (why, the turn's events, the reload's body or None, the rules it breaks)
BROKEN: list[tuple[str, list[tuple[str, object]], object, set[str]]] = [
    *((f"{source} {none}", one(source, *none), None, set())
      for source in [CHECKING_SRC, "silvia://your-portfolio", AAPL, IRS, "x:y"]
      for none in [(), (None,)]),  # no target: resumed from an old checkpoint, or untyped
    *((f"provider {provider}", one(CHECKING_SRC, account(CHECKING, provider=provider)), None, set())
      for provider in (None, "manual", "snaptrade")),
    ("no provider", one(CHECKING_SRC, {"kind": "account", "accountId": CHECKING}), None, set()),
    ("provider outside the doc", one(CHECKING_SRC, account(CHECKING, provider="coinbase")), None,
     {"target-parses"}),
    ("url typed, untyped, typed", turn_events([cite(IRS, WEB), cite(IRS, None), cite(IRS, WEB)],
     [cite(IRS, None)]), None, {"one-meaning-per-source"}),
    ("url web then tax", turn_events([cite(IRS, WEB), cite(IRS, {**WEB, "kind": "tax_reference"})],
     [cite(IRS)]), None, {"one-meaning-per-source"}),
    ("unparseable: no meaning", turn_events([ROW, cite(CARDS, {"kind": "hologram"}), ROW],
     [ROW]), None, {"target-parses"}),
    ("summary lacks a source", turn_events([ROW, cite(AAPL, APPLE)],
     [ROW]), None, {"summary-agrees"}),
    ("summary has one more", turn_events([ROW], [ROW, cite(AAPL)]), None, {"summary-agrees"}),
    ("summary need not repeat every row", turn_events(rows(ONE, ONE), rows(ONE)), None, set()),
    ("summary gives a source two targets", turn_events([ROW], rows(ONE, BOTH)), None,
     {"summary-agrees"}),
    ("summary's last row shrinks", turn_events([ROW], rows(BOTH, TWO)), None,
     {"summary-agrees", "one-meaning-per-source"}),
    ("no summary after done", NO_SUMMARY, None, {"summary-agrees"}),
    ("no summary of no citations", [e for e in turn_events([]) if e[0] != "citations_summary"],
     None, set()),
    ("reload lacks the summary's target", EVENTS, stored([cite(CARDS)], [ROW]), {"reload-agrees"}),
    ("reload without inline rows", EVENTS, stored([ROW], []), {"reload-agrees"}),
    ("reload inline untyped", EVENTS, stored([ROW], [cite(CARDS)]), {"reload-agrees"}),
    ("reload inline retyped", EVENTS, stored([ROW], [cite(CARDS, TWO)]), {"reload-agrees"}),
    ("reload inline row more", EVENTS, stored([ROW], [ROW, cite(CARDS, ONE, cited_text="new")]),
     {"reload-agrees"}),
    ("reload retitled", EVENTS, stored([cite(CARDS, ONE, title="x")], [ROW]), {"reload-agrees"}),
    ("reload without the turn", EVENTS,
     {"session": {"id": "sess_1"}, "messages": [{"role": "user", "content": "q"}]},
     {"reload-agrees"}),
    ("reload without messages", EVENTS, {"session": {"id": "sess_1"}}, {"reload-agrees"}),
    ("text before session", [EVENTS[1], EVENTS[0], *EVENTS[2:]], None, {"event-order"}),
    ("a second summary", [*EVENTS[:-1], EVENTS[-3], EVENTS[-1]], None, {"event-order"}),
    ("a second session", [*EVENTS[:2], EVENTS[0], *EVENTS[2:]], None, {"event-order"}),
    ("text not a string", [*EVENTS[:2], ("text", {"text": 42}), *EVENTS[2:]], None,
     {"events-well-formed"}),
    ("not JSON", [*EVENTS[:2], ("citation", Raw('{"citation": ')), *EVENTS[2:]], None,
     {"events-well-formed"}),
    ("an unknown event", [*EVENTS[:2], ("tool_progress", {"tool": "x"}), *EVENTS[2:]], None, set()),
]  # fmt: skip


def test_each_turn_breaks_exactly_its_rules() -> None:
    for why, events, body, rules in BROKEN:
        reload = {} if body is None else {"reload": body}
        assert broken(events, **reload) == rules, why


def test_a_finding_says_what_broke_and_where_and_a_rule_that_cannot_apply_skips() -> None:
    # What the parser rejects, and the account-id rule: tests/citations; here, the findings.
    raw = {"content": [{"type": "text", "citations": [{"source": CARDS, "target": ONE}]}]}
    where = ["event 3 (citation)", "citations_summary[0]"]
    failed = Reload(error="the reload failed: HTTP 500")
    # (the turn, the one rule it breaks, the finding's evidence key or its message, what)
    cases: list[tuple[list[tuple[str, object]], str, str, object]] = [
        *((one(CHECKING_SRC, target), "target-parses", "where", where)
          for target in [{"kind": "hologram"}, {"kind": "account", "accountId": 4210}, "account"]),
        *((one(CARDS, account(CARD_ONE, bad)), "account-id-rule", "bad_ids", [bad])
          for bad in ("acct-1234", "1234567890123456")),
        (turn_events([ROW], message=raw), "message-has-no-targets", "path",
         "content[0].citations[0].target"),
        (turn_events([ROW], [ROW, {"title": "no source"}]), "events-well-formed", "message",
         "row 1"),
        (turn_events([ROW, cite(AAPL, APPLE)], [ROW]), "summary-agrees", "message",
         "missing from the summary"),
    ]  # fmt: skip
    for events, rule, key, said in cases:
        result = check(observe_events(events))
        assert result.broken_rules == {rule}, (rule, said)
        (finding,) = result.findings
        if key == "message":
            assert str(said) in finding.message, (rule, said)
        else:
            assert finding.evidence[key] == said, (rule, said)
    (finding,) = check(observe_events(EVENTS, reload=failed)).findings
    assert (finding.rule, finding.message) == ("reload-agrees", "the reload failed: HTTP 500")
    skipped = check(observe_events(EVENTS)).outcome("reload-agrees")
    assert (skipped.status, skipped.reason) == ("skip", "the session was not reloaded")
    cut = [e for e in NO_SUMMARY if e[0] != "done"]
    assert check(observe_events(cut)).outcome("summary-agrees").status == "skip"


def test_one_meaning_per_source() -> None:
    cases: list[tuple[list[object], object, list[str]]] = [
        ([ONE, BOTH], BOTH, []),  # pooled: accounts grow
        ([ONE, ONE], ONE, []),
        ([ONE, None], None, []),  # typed, then untyped: the server untyped it
        ([ONE, None, None], None, []),
        ([ONE], BOTH, []),  # written again after its last citation: pooled in the summary
        ([None, None], None, []),
        ([BOTH, ONE], ONE, ["error"]),  # shrank
        ([ONE, TWO], BOTH, ["error"]),  # replaced, not pooled
        ([ONE], TWO, ["error"]),
        ([ONE, None], ONE, ["error"]),  # untyped after being typed, then typed again
        ([ONE, None, ONE], ONE, ["error"]),
        # Untyped from the start, then typed: an old checkpoint, then a fresh write.
        ([None, ONE], ONE, ["warning"]),
        ([None, ONE], BOTH, ["warning"]),
        ([None, None], ONE, ["warning"]),
        ([None, ONE, None, ONE], ONE, ["warning", "error"]),
        ([None, ONE, TWO], TWO, ["warning", "error"]),
    ]
    for case in cases:
        streamed, summary, severities = case
        result = check(observe_events(turn_events(rows(*streamed), rows(summary))))
        assert result.broken_rules == ({"one-meaning-per-source"} if severities else set()), case
        assert [finding.severity for finding in result.findings] == severities, case
        status = "fail" if "error" in severities else "warn" if severities else "pass"
        assert result.outcome("one-meaning-per-source").status == status, case
        assert result.ok is ("error" not in severities), case


def test_an_old_checkpoint_is_explained_and_an_error_when_the_prompt_rules_it_out() -> None:
    events = turn_events(
        [cite(CARDS, None, cited_text="a"), cite(CARDS, ONE, cited_text="b")],
        [cite(CARDS, ONE, cited_text="a"), cite(CARDS, ONE, cited_text="b")],
    )
    (warning,) = check(observe_events(events)).findings
    assert warning.severity == "warning"
    assert "checkpoint written before targets existed" in warning.message
    assert warning.evidence["before"] == {"where": "event 3 (citation)", "target": None}
    assert warning.evidence["after"]["where"] == "event 4 (citation)"  # type: ignore[index]
    ruled_out = check(observe_events(events), expect={"no_old_checkpoint": True})
    (error,) = ruled_out.findings
    assert (error.rule, error.severity) == ("one-meaning-per-source", "error")
    assert "no_old_checkpoint" in error.message
    assert not ruled_out.ok
    assert ruled_out.outcome("expectations").status == "pass"  # the key only sets the severity
    assert check(observe_events(events), expect={"no_old_checkpoint": False}).ok


def test_the_reload_agrees_when_it_holds_the_rows_as_sent_with_their_targets() -> None:
    rows = [cite(CARDS, ONE, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    summary = [cite(CARDS, BOTH, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    events = turn_events(rows, summary)
    assert broken(events, reload=stored(summary, rows)) == set()
    # In any order: the rule asks for the same rows, not the same sequence.
    assert broken(events, reload=stored(summary[::-1], rows[::-1])) == set()
    # A stored inline row must keep the target it streamed with.
    result = check(observe_events(events, reload=stored(summary, summary)))
    assert result.broken_rules == {"reload-agrees"}
    (finding,) = result.findings
    assert "inline citations differ from the stream" in finding.message
    assert "1 row(s) with another target than the one sent live" in finding.message
    kinds = {
        name: [target["kind"] for target in finding.evidence[name]]  # type: ignore[attr-defined]
        for name in ("live", "reloaded")
    }
    assert kinds == {"live": ["account", "accounts"], "reloaded": ["accounts", "accounts"]}


def test_vendor_names_in_user_facing_text_are_a_warning() -> None:
    for case in [
        ("Linked through PLAID.", "Checking", "balance: 1", {"text"}),
        ("ok", "SnapTrade brokerage", "balance: 1", {"title"}),
        ("ok", "Brokerage", "institution: snap trade", {"cited_text"}),
        ("A manual account.", "Manual account", "source: manual", set()),
    ]:
        text, title, cited_text, fields = case
        row = cite(CHECKING_SRC, account(CHECKING), title=title, cited_text=cited_text)
        result = check(observe_events(turn_events([row], text=text)))
        assert result.ok, case  # a warning only
        assert {f.evidence["field"] for f in result.warnings} == fields, case
        assert result.broken_rules == ({"no-vendor-names"} if fields else set()), case
    events = turn_events([], text="Plaid links your bank.")
    (finding,) = check(observe_events(events, prompt="What is Plaid?")).findings
    assert finding.message.endswith("the prompt names a vendor too")


def test_no_events_or_a_failing_check_is_one_finding_and_every_other_rule_not_run() -> None:
    result = check(observe_events([]))
    assert {o.rule.id for o in result.outcomes if o.status != "not_run"} == {"stream-complete"}
    assert result.broken_rules == {"stream-complete"}
    assert result.not_run
    assert result.cause is result.findings[0]

    def boom(facts: object) -> Iterator[Problem]:
        raise RecursionError
        yield Problem("never")

    rule = Rule("boom", "error", "always fails", boom)
    (finding,) = check(observe_events(turn_events([])), rules=[rule]).findings
    assert finding.rule == "boom"
    assert "RecursionError" in finding.message


def test_expectations() -> None:
    cases: list[tuple[dict[str, object], bool]] = [
        ({"complete": True, "cites_account": True, "cites_kinds": ["accounts"]}, True),
        ({"complete": False}, False),
        ({"cites_account": False}, False),
        ({"cites_kinds": ["accounts", "web"]}, False),
        ({"no_citations": True}, False),
        ({"no_citations": False}, True),
    ]
    for case in cases:
        expect, ok = case
        result = check(observe_events(turn_events([cite(CARDS, BOTH)])), expect=expect)
        assert result.outcome("expectations").status == ("pass" if ok else "fail"), case
        assert result.ok is ok, case
    observation = observe_events(turn_events([]))
    assert check(observation, expect={"no_citations": True}).ok
    assert not check(observation, expect={"cites_account": True}).ok
    with pytest.raises(KeyError):  # no expectations: no row for them
        check(observation).outcome("expectations")


GOOD = sorted(name for name, scenario in SCENARIOS.items() if scenario.fault is None)

# What each fault scenario is, in the rules' terms (the stall is in test_observe).
INCOMPLETE = ["fault-drop", "fault-error-event", "fault-no-done"]
INCOMPLETE += [f"status-{code}" for code in (401, 403, 404, 429, 500)]
FAULTS = {name: {"stream-complete"} for name in INCOMPLETE}
FAULTS |= {f"fault-malformed-{x}": {"events-well-formed"} for x in ("json", "shape")}
FAULTS["fault-unknown-event"] = set()

# What a client's limits, deadline and scrubber are for, not a server's rules:
# tests/e2e/test_scenarios.py runs them end to end.
HOSTILE = {"fault-endless-line", "fault-oversized-event", "fault-gzip-bomb", "fault-trickle"}
HOSTILE |= {"fault-keep-alive-forever", "fault-echo-token", "fault-echo-token-401"}


@pytest.fixture(scope="module")
def qa() -> Iterator[Observer]:
    server = ReferenceServer(token=SECRET)
    # No retries: a 429's Retry-After (4 s) is not what these tests are about.
    client = server.client(max_retries=0, timeout=5.0, idle_timeout=5.0)
    with Observer(client, server=server) as observer:
        yield observer


# Good turns whose findings are expected warnings: rule id -> how many.
EXPECTED_WARNINGS = {
    # Untyped, then typed: legitimate after a checkpoint written before targets existed.
    "checkpoint-fresh-write": {"one-meaning-per-source": 1}
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


def test_each_broken_or_fault_scenario_breaks_its_rules_and_no_other(qa: Observer) -> None:
    expected = {**{name: {rule} for name, rule in BROKEN_RULES.items()}, **FAULTS}
    for name, rules in expected.items():
        observation = qa.observe("How are my accounts doing?", scenario=name)
        result = check(observation)
        assert result.broken_rules == rules, name
        # No provider, vendor or token in what a check hands back (the reports': test_reports).
        for shown in (observation, result, *result.findings):
            assert_private(repr(shown))
        assert_private(str([finding.to_dict() for finding in result.findings]))
    # The library turns the broken ones start from are untouched.
    assert check(qa.observe("hi", scenario="demo")).findings == ()
    assert check(qa.observe("hi", scenario="pooling")).findings == ()
