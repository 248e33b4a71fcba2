"""Each rule on hand-built turns: what it catches, what it lets through, and when it skips."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from silvia_client.citations import parse_citation_target
from silvia_client.qa import RULES, Reload, Rule, check
from silvia_client.qa.rules import Problem, expected_target

from ._helpers import (
    AAPL,
    CARD_ONE,
    CARD_TWO,
    CARDS,
    CHECKING,
    IRS,
    Raw,
    account,
    cite,
    observe_events,
    stored,
    turn_events,
)

CHECKING_SRC = "silvia://your-account/checking"
ECFR = "https://www.ecfr.gov/current/title-12/part-1026"


def broken(events: list[tuple[str, object]], **kwargs: object) -> set[str]:
    return set(check(observe_events(events, **kwargs)).broken_rules)  # type: ignore[arg-type]


def test_every_rule_has_a_unique_id_a_severity_and_a_one_line_description() -> None:
    assert len({rule.id for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.severity in ("error", "warning")
        assert rule.description
        assert "\n" not in rule.description
    assert [rule.id for rule in RULES if rule.severity == "warning"] == ["no-vendor-names"]


# -- the doc's table -------------------------------------------------------------------

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


def test_the_table() -> None:
    for case in TABLE:
        source, target, fits = case
        parsed = parse_citation_target(target)
        assert parsed is not None, case
        assert (expected_target(source, parsed) is None) is fits, case
        found = broken(turn_events([cite(source, target)]))
        assert found == (set() if fits else {"target-fits-source"}), case


def test_a_source_may_always_come_without_a_target() -> None:
    for source in [CHECKING_SRC, "silvia://your-portfolio", AAPL, IRS, "x:y"]:
        # Resumed from a checkpoint written before targets, or untyped by a disagreement.
        assert broken(turn_events([cite(source)])) == set(), source
        assert broken(turn_events([cite(source, None)])) == set(), source


# -- target-parses, account-id-rule ----------------------------------------------------


def test_a_target_the_parser_rejects_is_reported_with_where_it_was() -> None:
    for target in [
        {"kind": "hologram"},
        {"kind": "account", "accountId": 4210, "provider": "plaid"},
        {"kind": "accounts", "accounts": [{"accountId": CARD_ONE}, {"accountId": ""}]},
        {"kind": "web", "url": "javascript:alert(1)"},
        "account",
    ]:
        result = check(observe_events(turn_events([cite(CHECKING_SRC, target)])))
        assert result.broken_rules == {"target-parses"}, target
        (finding,) = result.findings
        assert finding.evidence["where"] == ["event 3 (citation)", "citations_summary[0]"], target


def test_a_provider_outside_the_doc_is_reported_but_null_or_missing_is_not() -> None:
    odd = {"kind": "account", "accountId": CHECKING, "provider": "coinbase"}
    assert broken(turn_events([cite(CHECKING_SRC, odd)])) == {"target-parses"}
    for provider in (None, "manual", "snaptrade"):
        assert (
            broken(turn_events([cite(CHECKING_SRC, account(CHECKING, provider=provider))])) == set()
        )
    missing = {"kind": "account", "accountId": CHECKING}
    assert broken(turn_events([cite(CHECKING_SRC, missing)])) == set()


def test_account_ids_follow_the_doc_rule() -> None:
    for account_id, ok in [
        (CHECKING, True),
        ("a1b2c3d4e5f6g7h8", True),
        ("b" * 127 + "9", True),
        ("acct-1234", False),
        ("12345678901234567890", False),
        ("a" * 129, False),
        ("acct 1234 5678 9012", False),
    ]:
        result = check(observe_events(turn_events([cite(CARDS, account(CARD_ONE, account_id))])))
        assert result.broken_rules == (set() if ok else {"account-id-rule"}), (account_id, ok)
        if not ok:
            assert result.findings[0].evidence["bad_ids"] == [account_id], (account_id, ok)


# -- one-meaning-per-source ------------------------------------------------------------

ONE = account(CARD_ONE)
TWO = account(CARD_TWO)
BOTH = account(CARD_ONE, CARD_TWO)
WEB = {"kind": "web", "url": IRS}


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
        rows = [cite(CARDS, target, cited_text=f"row {i}") for i, target in enumerate(streamed)]
        result = check(
            observe_events(turn_events(rows, [cite(CARDS, summary, cited_text="row 0")]))
        )
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


def test_the_summary_s_last_row_for_a_source_is_its_final_word() -> None:
    streamed = [cite(CARDS, ONE)]
    later_pooled = [cite(CARDS, ONE, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    assert check(observe_events(turn_events(streamed, later_pooled))).broken_rules == {
        "summary-agrees"  # two targets in the summary is its finding, not this rule's
    }
    later_shrunk = [cite(CARDS, BOTH, cited_text="a"), cite(CARDS, TWO, cited_text="b")]
    found = check(observe_events(turn_events(streamed, later_shrunk))).broken_rules
    assert found == {"summary-agrees", "one-meaning-per-source"}


def test_a_url_source_keeps_one_meaning() -> None:
    rows = [cite(IRS, WEB), cite(IRS, None), cite(IRS, WEB)]
    assert broken(turn_events(rows, [cite(IRS, None)])) == {"one-meaning-per-source"}
    tax = {"kind": "tax_reference", "url": IRS}
    assert broken(turn_events([cite(IRS, WEB), cite(IRS, tax)], [cite(IRS)])) == {
        "one-meaning-per-source"
    }


def test_an_unparseable_target_says_nothing_about_the_meaning() -> None:
    rows = [cite(CARDS, ONE), cite(CARDS, {"kind": "hologram"}), cite(CARDS, ONE)]
    assert broken(turn_events(rows, [cite(CARDS, ONE)])) == {"target-parses"}


# -- summary-agrees --------------------------------------------------------------------


def test_the_summary_cites_the_streamed_sources() -> None:
    streamed = [cite(CARDS, ONE), cite(AAPL, {"kind": "market_data", "ticker": "AAPL"})]
    result = check(observe_events(turn_events(streamed, [cite(CARDS, ONE)])))
    assert result.broken_rules == {"summary-agrees"}
    assert "missing from the summary" in result.findings[0].message
    extra = turn_events([cite(CARDS, ONE)], [cite(CARDS, ONE), cite(AAPL)])
    assert broken(extra) == {"summary-agrees"}


def test_the_summary_need_not_repeat_every_streamed_row() -> None:
    streamed = [cite(CARDS, ONE, cited_text="a"), cite(CARDS, ONE, cited_text="b")]
    assert broken(turn_events(streamed, [cite(CARDS, ONE, cited_text="a")])) == set()


def test_the_summary_gives_each_source_one_target() -> None:
    summary = [cite(CARDS, ONE, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    assert broken(turn_events([cite(CARDS, ONE)], summary)) == {"summary-agrees"}


def test_no_summary_is_a_finding_after_done_and_a_skip_before() -> None:
    events = [e for e in turn_events([cite(CARDS, ONE)]) if e[0] != "citations_summary"]
    assert broken(events) == {"summary-agrees"}
    cut = [e for e in events if e[0] != "done"]
    result = check(observe_events(cut))
    assert result.outcome("summary-agrees").status == "skip"
    no_citations = [e for e in turn_events([]) if e[0] != "citations_summary"]
    assert broken(no_citations) == set()


# -- reload-agrees ---------------------------------------------------------------------


def test_the_reload_agrees_when_it_holds_the_rows_as_sent() -> None:
    rows = [cite(CARDS, ONE, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    summary = [cite(CARDS, BOTH, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    events = turn_events(rows, summary)
    assert broken(events, reload=stored(summary, rows)) == set()
    # In any order: the rule asks for the same rows, not the same sequence.
    assert broken(events, reload=stored(summary[::-1], rows[::-1])) == set()


def test_a_stored_inline_row_must_keep_the_target_it_streamed_with() -> None:
    rows = [cite(CARDS, ONE, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    summary = [cite(CARDS, BOTH, cited_text="a"), cite(CARDS, BOTH, cited_text="b")]
    result = check(observe_events(turn_events(rows, summary), reload=stored(summary, summary)))
    assert result.broken_rules == {"reload-agrees"}
    (finding,) = result.findings
    assert "inline citations differ from the stream" in finding.message
    assert "1 row(s) with another target than the one sent live" in finding.message
    kinds = {
        name: [target["kind"] for target in finding.evidence[name]]  # type: ignore[attr-defined]
        for name in ("live", "reloaded")
    }
    assert kinds == {"live": ["account", "accounts"], "reloaded": ["accounts", "accounts"]}


def test_the_reload_disagrees() -> None:
    for body in [
        stored([cite(CARDS)], [cite(CARDS, ONE)]),  # the summary's target not stored
        stored([cite(CARDS, ONE)], []),  # inline rows not stored
        stored([cite(CARDS, ONE)], [cite(CARDS)]),
        stored([cite(CARDS, ONE)], [cite(CARDS, TWO)]),
        stored([cite(CARDS, ONE)], [cite(CARDS, ONE), cite(CARDS, ONE, cited_text="new")]),
        stored([cite(CARDS, ONE, title="Other")], [cite(CARDS, ONE)]),
        {"session": {"id": "sess_1"}, "messages": [{"role": "user", "content": "q"}]},
        {"session": {"id": "sess_1"}},
    ]:
        assert broken(turn_events([cite(CARDS, ONE)]), reload=body) == {"reload-agrees"}, body


def test_a_failed_reload_is_a_finding_and_no_reload_a_skip() -> None:
    events = turn_events([cite(CARDS, ONE)])
    failed = check(observe_events(events, reload=Reload(error="the reload failed: HTTP 500")))
    assert failed.broken_rules == {"reload-agrees"}
    assert failed.findings[0].message == "the reload failed: HTTP 500"
    skipped = check(observe_events(events)).outcome("reload-agrees")
    assert (skipped.status, skipped.reason) == ("skip", "the session was not reloaded")
    cut = check(observe_events(events[:-1])).outcome("reload-agrees")
    assert cut.status == "skip"
    assert "did not complete" in (cut.reason or "")


# -- message-has-no-targets ------------------------------------------------------------


def test_a_target_anywhere_in_the_raw_message_is_found() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "citations": [{"source": CARDS, "target": ONE}]}],
    }
    result = check(observe_events(turn_events([cite(CARDS, ONE)], message=message)))
    assert result.broken_rules == {"message-has-no-targets"}
    assert result.findings[0].evidence["path"] == "content[0].citations[0].target"


# -- no-vendor-names -------------------------------------------------------------------


def test_vendor_names_in_user_facing_text_are_a_warning() -> None:
    for text, title, cited_text, fields in [
        ("Linked through PLAID.", "Checking", "balance: 1", {"text"}),
        ("ok", "SnapTrade brokerage", "balance: 1", {"title"}),
        ("ok", "Brokerage", "institution: snap trade", {"cited_text"}),
        ("A manual account.", "Manual account", "source: manual", set()),
    ]:
        row = cite(CHECKING_SRC, account(CHECKING), title=title, cited_text=cited_text)
        result = check(observe_events(turn_events([row], text=text)))
        assert result.ok, (text, title, cited_text, fields)  # a warning only
        assert {f.evidence["field"] for f in result.warnings} == fields, (
            text,
            title,
            cited_text,
            fields,
        )
        assert result.broken_rules == ({"no-vendor-names"} if fields else set()), (
            text,
            title,
            cited_text,
            fields,
        )


def test_a_vendor_named_in_the_prompt_is_said_so() -> None:
    events = turn_events([], text="Plaid links your bank.")
    (finding,) = check(observe_events(events, prompt="What is Plaid?")).findings
    assert finding.message.endswith("the prompt names a vendor too")


# -- stream-complete, event-order, events-well-formed ----------------------------------


def test_a_stream_without_done_is_incomplete() -> None:
    result = check(observe_events(turn_events([cite(CARDS, ONE)], done=False)))
    assert result.broken_rules == {"stream-complete"}
    assert result.findings[0].message == "the stream ended without `done`"


def test_session_comes_first_and_each_once() -> None:
    events = turn_events([cite(CARDS, ONE)])
    assert broken([events[1], events[0], *events[2:]]) == {"event-order"}
    twice = [*events[:-1], events[-3], events[-1]]  # a second summary
    assert broken(twice) == {"event-order"}
    assert broken([*events[:2], events[0], *events[2:]]) == {"event-order"}


def test_malformed_events_and_summary_rows_are_reported() -> None:
    events = turn_events([cite(CARDS, ONE)])
    bad_text = [*events[:2], ("text", {"text": 42}), *events[2:]]
    assert broken(bad_text) == {"events-well-formed"}
    not_json = [*events[:2], ("citation", Raw('{"citation": ')), *events[2:]]
    assert broken(not_json) == {"events-well-formed"}
    bad_row = turn_events([cite(CARDS, ONE)], [cite(CARDS, ONE), {"title": "no source"}])
    result = check(observe_events(bad_row))
    assert result.broken_rules == {"events-well-formed"}
    assert "row 1" in result.findings[0].message


def test_unknown_events_are_not_findings() -> None:
    events = turn_events([cite(CARDS, ONE)])
    assert broken([*events[:2], ("tool_progress", {"tool": "x"}), *events[2:]]) == set()


# -- the checker itself ----------------------------------------------------------------


def test_no_events_is_one_finding_and_every_other_rule_not_run() -> None:
    result = check(observe_events([]))
    assert {o.rule.id for o in result.outcomes if o.status != "not_run"} == {"stream-complete"}
    assert result.broken_rules == {"stream-complete"}
    assert result.not_run
    assert result.cause is result.findings[0]


def test_a_check_that_fails_gives_a_finding_not_an_exception() -> None:
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


def test_expectations_of_an_uncited_turn() -> None:
    observation = observe_events(turn_events([]))
    assert check(observation, expect={"no_citations": True}).ok
    assert not check(observation, expect={"cites_account": True}).ok
    with pytest.raises(KeyError):  # no expectations: no row for them
        check(observation).outcome("expectations")
