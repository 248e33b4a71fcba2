"""The built-in scenarios: coverage of the doc's table and rules, privacy, expected turns,
and `silvia serve --list` (serving them is `tests/cli/test_serve.py`'s)."""

from __future__ import annotations

import json
import re

import pytest

from silvia_client.cli import main
from silvia_client.testing import (
    BROKEN_SCENARIOS,
    DEFAULT_SCENARIO,
    SCENARIOS,
    Scenario,
    expected_turn,
    scenarios,
)
from silvia_client.testing._library import read_library

TABLE_SOURCES = [
    r"silvia://your-account/[a-z0-9-]+", r"silvia://your-portfolio", r"silvia://analysis",
    r"silvia://market-data/finnhub/[A-Z]+", r"silvia://market-data/finnhub",
    r"silvia://tax-authority/.+", r"silvia://credit-card-corpus/.+", r"silvia://mortgage-code/.+",
    r"silvia://search/search_web", r"https://.+",
]  # fmt: skip


def test_names_are_unique_descriptions_one_line_and_the_library_read_only() -> None:
    library = scenarios()
    assert len({s.name for s in library}) == len(library) == len(SCENARIOS)
    assert library[0].name == DEFAULT_SCENARIO == "demo"
    for scenario in library:
        assert scenario.description.strip()
        assert "\n" not in scenario.description
    with pytest.raises(TypeError):
        SCENARIOS["mine"] = SCENARIOS["demo"]  # type: ignore[index]


def test_serve_list_prints_every_scenario_with_its_description_and_refuses_an_unknown_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    playable = {**SCENARIOS, **BROKEN_SCENARIOS}
    assert len(lines) == len(playable)
    for line, (name, scenario) in zip(lines, playable.items(), strict=True):
        assert line.split(maxsplit=1) == [name, scenario.description]
    assert main(["serve", "--scenario", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_a_library_file_that_does_not_fit_names_the_file_and_the_scenario() -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"script": [{"say": "Hi", "colour": "red"}]}, "unexpected keyword argument 'colour'"),
        ({"script": [{"tool": "execute_sql"}]}, "missing 1 required positional argument: 'rows'"),
        ({"script": [{"text": "Hi"}]}, "an item with none of `say`, `cite`, `tool`"),
        ({"script": [{"tool": "read_everything", "path": "p", "text": "t"}]}, "not a library"),
        ({"script": [{"cite": "silvia://analysis"}]}, "ScriptError"),
        ({"script": "demo"}, "no scenario 'demo' above it"),
        ({"fault": {"kind": "flood"}}, "no fault of kind 'flood'"),
        ({"fault": {"kind": "stall", "minutes": 5}}, "unexpected keyword argument 'minutes'"),
        ({"checkpoint": {"tool_calls": [], "targets": True}}, "unexpected keyword argument"),
    ]
    for scenario, message in cases:
        text = json.dumps(
            [{"name": "ok", "description": "Fine."}, {"name": "a", "description": "d", **scenario}]
        )
        with pytest.raises(ValueError, match=r"^scenarios/mine\.json, scenario 'a': ") as raised:
            read_library([("mine.json", text)])
        assert message in str(raised.value), scenario


def test_every_source_pattern_and_target_kind_of_the_doc_is_covered() -> None:
    kinds: set[object] = set()
    patterns: set[str] = set()
    for scenario in SCENARIOS.values():
        for source, target in expected_turn(scenario).final_targets.items():
            kinds.add(None if target is None else target["kind"])
            patterns.update(p for p in TABLE_SOURCES if re.fullmatch(p, source))
    assert patterns == set(TABLE_SOURCES)
    assert kinds == {
        None, "web", "tax_reference", "card_document", "mortgage_reference", "market_data",
        "analysis", "account", "accounts", "portfolio",
    }  # fmt: skip
    # Each library reader's both rows: with a URL and with url null.
    library_targets = [
        target
        for scenario in SCENARIOS.values()
        for target in expected_turn(scenario).final_targets.values()
        if target and target["kind"] in {"tax_reference", "card_document", "mortgage_reference"}
    ]
    assert {(t["kind"], t["url"] is None) for t in library_targets} == {
        (kind, url_is_null)
        for kind in ("tax_reference", "card_document", "mortgage_reference")
        for url_is_null in (True, False)
    }


def without_providers(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_providers(v) for k, v in value.items() if k != "provider"}
    if isinstance(value, (list, tuple)):
        return [without_providers(item) for item in value]
    return value


def test_a_vendor_name_appears_only_in_target_providers() -> None:
    for name, scenario in SCENARIOS.items():
        expected = expected_turn(scenario, idle_timeout=1000.0)
        sent: list[object] = [
            expected.text,
            expected.citations,
            expected.inline_citations,
            expected.message,
        ]
        sent += [expected.error, expected.unknown_events]
        text = json.dumps(without_providers(sent)).lower()
        assert not any(vendor in text for vendor in ("plaid", "snaptrade", "manual")), name


def kinds(citations: tuple[dict[str, object], ...]) -> list[object]:
    return [c["target"]["kind"] if "target" in c else None for c in citations]  # type: ignore[index]


def test_rule_scenarios_stream_and_summarise_the_targets_the_doc_implies() -> None:
    for name, inline, summary in [
        ("pooling", ["account", "accounts"], ["accounts", "accounts"]),
        ("untyped-ids-then-none", ["account", None], [None, None]),
        ("untyped-none-then-ids", [None, None], [None, None]),
        ("untyped-web-vs-tax", ["web", None], [None, None]),
        ("checkpoint-legacy", [None, "market_data"], [None, "market_data"]),
        ("checkpoint-current", ["account", "market_data"], ["account", "market_data"]),
        # After an old checkpoint, a fresh write registers the label: untyped, then typed.
        ("checkpoint-fresh-write", [None, "account"], ["account", "account"]),
        ("legacy-prompt", [None, "account"], [None, "account"]),
        ("account-row-without-id", [None], [None]),
        ("account-crypto-source", ["account", None], ["account", None]),
    ]:
        expected = expected_turn(SCENARIOS[name])
        assert kinds(expected.inline_citations) == inline, name
        assert kinds(expected.citations) == summary, name


def test_the_id_scenarios_type_the_valid_ids_each_with_its_columns_provider() -> None:
    targets = expected_turn(SCENARIOS["account-id-rule"]).final_targets
    typed = {source for source, target in targets.items() if target is not None}
    assert typed == {"silvia://your-account/shortest-id", "silvia://your-account/longest-id"}
    targets = expected_turn(SCENARIOS["account-id-columns"]).final_targets
    providers = {source.rsplit("/", 1)[1]: t["provider"] for source, t in targets.items() if t}
    assert providers == {
        "checking": "plaid",
        "savings": None,
        "brokerage": "snaptrade",
        "house": "manual",
        "car": "manual",
        "money-market": None,
    }


# -- faults, as the expected turn describes them --------------------------------


def test_the_faults_and_statuses_expect_what_they_do_to_a_turn() -> None:
    demo = expected_turn(SCENARIOS["demo"])
    dropped = expected_turn(SCENARIOS["fault-drop"])
    assert (dropped.fault, dropped.complete) == ("drop", False)
    assert dropped.inline_citations
    assert not dropped.citations
    assert demo.text.startswith(dropped.text)
    assert dropped.text != demo.text
    # A stall ends the view only when longer than the idle timeout.
    stalled = expected_turn(SCENARIOS["fault-stall"], idle_timeout=1.0)
    assert (stalled.fault, stalled.complete) == ("stall", False)
    patient = expected_turn(SCENARIOS["fault-stall"], idle_timeout=1000.0)
    assert (patient.complete, patient.text) == (True, demo.text)
    error = expected_turn(SCENARIOS["fault-error-event"])
    assert error.error == {
        "type": "overloaded_error",
        "message": "The model is overloaded. Try again in a moment.",
    }
    assert not error.complete
    assert error.text
    no_done = expected_turn(SCENARIOS["fault-no-done"])
    assert not no_done.complete
    assert no_done.citations == demo.citations
    # Unknown and malformed events leave the turn whole.
    unknown = expected_turn(SCENARIOS["fault-unknown-event"])
    assert unknown.complete
    assert unknown.unknown_events == (
        ("tool_progress", {"tool": "execute_sql", "status": "running"}),
    )
    for name in ("fault-malformed-json", "fault-malformed-shape"):
        malformed = expected_turn(SCENARIOS[name])
        assert (malformed.fault, malformed.text) == ("malformed_event", demo.text)
    limited = expected_turn(SCENARIOS["status-429"])
    assert (limited.status, limited.retry_after, limited.complete) == (429, 2.0, False)
    assert limited.error == {"type": "rate_limit_error", "message": "Too many requests."}
    for status in (401, 403, 404, 500):
        assert expected_turn(SCENARIOS[f"status-{status}"]).status == status


# -- building scenarios ---------------------------------------------------------


def test_a_custom_scenario_is_checked_when_built() -> None:
    # A script citing what it never wrote fails as built too (test_derive_rules, `play`).
    with pytest.raises(ValueError, match="name"):
        Scenario("has space", "d", script=())
    with pytest.raises(ValueError, match="one-line"):
        Scenario("two-lines", "a\nb", script=())
