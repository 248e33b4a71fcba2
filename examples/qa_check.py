"""Checking turns against the server's citation rules, from Python and from pytest.

As a script, it observes one turn and prints every rule's outcome; on the
reference server, it then does the same for a deliberately broken turn::

    python examples/qa_check.py                 # the embedded reference server
    SILVIA_BASE_URL=https://staging.example SILVIA_TOKEN=... python examples/qa_check.py

As a pytest file, its `test_` functions are a tiny QA suite (the `silvia_qa`
fixture observes turns against `--silvia-base-url`, or the reference server)::

    pytest -p silvia_client.qa.pytest_plugin examples/qa_check.py
    pytest -p silvia_client.qa.pytest_plugin examples/qa_check.py --silvia-base-url https://staging.example

`scenario=` picks a reference-server scenario; a real server ignores it.
"""

from __future__ import annotations

import os

from silvia_client.qa import Observer, assert_conforms, check


def test_accounts_are_cited_by_id(silvia_qa: Observer) -> None:
    observation = silvia_qa.observe("What do I owe across my credit cards?", scenario="accounts")
    assert_conforms(observation, expect={"complete": True, "cites_kinds": ["accounts"]})


def test_a_quote_cites_its_ticker(silvia_qa: Observer) -> None:
    observation = silvia_qa.observe("How are Apple and Microsoft trading?", scenario="market-data")
    assert_conforms(observation, expect={"cites_kinds": ["market_data"]})


def main() -> None:
    base_url = os.environ.get("SILVIA_BASE_URL")
    qa = Observer.connect(base_url) if base_url else Observer.reference()
    # The broken scenario exists only on the reference server (a real server ignores `scenario`).
    scenarios = ("demo",) if base_url else ("demo", "broken-target-fits-source")
    with qa:
        for scenario in scenarios:
            observation = qa.observe("How are my accounts and Apple doing?", scenario=scenario)
            result = check(observation)
            print(f"{scenario}: {'conforms' if result.ok else 'does not conform'}")
            for outcome in result.outcomes:
                print(f"  {outcome.status:<4}  {outcome.rule.id}")
            for finding in result.findings:
                print(f"  {finding.severity}: {finding.rule}: {finding.message}")


if __name__ == "__main__":
    main()
