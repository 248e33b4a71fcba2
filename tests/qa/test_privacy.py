"""No provider, no vendor name and no token in any QA output, even from a server that leaks them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from silvia_client.qa import Observer, assert_conforms, check
from silvia_client.qa._privacy import REDACTED, redact, redact_text
from silvia_client.testing import BROKEN_SCENARIOS, ReferenceServer

from ._cli import broken_script, run_cli

TOKEN = "qa-s3cret-t0ken-7f2b"
VENDORS = re.compile(r"plaid|snap\s?trade", re.IGNORECASE)
# A provider value shown as one: a JSON string, or a Python repr.
PROVIDER_VALUE = re.compile(r"""["'](plaid|manual|snaptrade)["']""", re.IGNORECASE)


def assert_private(text: str) -> None:
    assert TOKEN not in text
    assert not VENDORS.search(text), VENDORS.search(text)
    assert not PROVIDER_VALUE.search(text), PROVIDER_VALUE.search(text)


def test_no_output_of_a_run_holds_a_provider_or_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    script = broken_script(tmp_path / "broken.json")
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        status, out, err = run_cli(
            [
                "qa",
                "run",
                str(script),
                "--base-url",
                url,
                "--junit",
                str(junit),
                "--json",
                str(report),
            ],
            capsys,
        )
    assert status == 1
    assert "<redacted>" in out  # providers were there, and were hidden
    for text in (out, err, junit.read_text(encoding="utf-8"), report.read_text(encoding="utf-8")):
        assert_private(text)


def test_findings_and_their_reprs_hold_no_provider() -> None:
    with Observer.reference(token=TOKEN) as qa:
        for name in BROKEN_SCENARIOS:
            observation = qa.observe("How are my accounts?", scenario=name)
            result = check(observation)
            assert result.findings
            for finding in result.findings:
                assert_private(repr(finding))
                assert_private(str(finding.to_dict()))
            assert_private(repr(observation))
            assert_private(repr(result))


def test_assert_conforms_says_what_broke_without_a_provider() -> None:
    with Observer.reference() as qa:
        observation = qa.observe("How are my accounts?", scenario="broken-target-parses")
        vendor = qa.observe("How are my accounts?", scenario="broken-no-vendor-names")
    with pytest.raises(AssertionError) as caught:
        assert_conforms(observation)
    message = str(caught.value)
    assert message.startswith("the turn does not conform (3 findings):")
    assert "FAIL  target-parses" in message
    assert_private(message)
    assert_conforms(vendor)  # a warning does not fail...
    with pytest.raises(AssertionError) as strict:
        assert_conforms(vendor, strict=True)  # ...unless asked
    assert "warn  no-vendor-names" in str(strict.value)
    assert_private(str(strict.value))


def test_redaction() -> None:
    value = {
        "kind": "SnapTrade",
        "provider": "manual",
        "accounts": [{"accountId": "a", "provider": "plaid"}, {"accountId": "b", "provider": None}],
        "PLAID": ["via Plaid", "manual", "Manual account", 3],
    }
    assert redact(value) == {
        "kind": REDACTED,  # a provider value, wherever it is
        "provider": REDACTED,
        "accounts": [
            {"accountId": "a", "provider": REDACTED},
            {"accountId": "b", "provider": None},
        ],
        REDACTED: ["via <vendor>", REDACTED, "Manual account", 3],
    }
    assert redact_text("silvia://your-account/snap-trade-brokerage") == (
        "silvia://your-account/<vendor>-brokerage"
    )
