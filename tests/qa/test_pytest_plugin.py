"""A QA suite as plain pytest tests: `silvia_qa`, `--silvia-base-url` and `assert_conforms`,
in a `pytester` subprocess with the plugin loaded by `-p`, as an integrator loads it (an
in-process run drops the modules it imported, and a second one would import them anew)."""

from __future__ import annotations

import pytest

from silvia_client.testing import ReferenceServer

pytest_plugins = ["pytester"]

TOKEN = "qa-plugin-t0ken"

SUITE = """
from silvia_client.qa import assert_conforms


def test_cards(silvia_qa, silvia_base_url):
    observation = silvia_qa.observe("What do I owe on my cards?", scenario="accounts")
    assert_conforms(observation, expect={"cites_kinds": ["accounts"]})
    print("TARGET", silvia_base_url, silvia_qa.server is not None)


def test_broken(silvia_qa):
    assert_conforms(silvia_qa.observe("How are my accounts?", scenario="broken-target-parses"))
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """`pytester` with the suite written, autoloading off and no `SILVIA_TOKEN`."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    pytester.makepyfile(test_qa_suite=SUITE)
    return pytester


PLUGIN = ("-p", "silvia_client.qa.pytest_plugin", "-p", "no:cacheprovider", "-s", "-q")


def test_the_suite_runs_on_the_reference_server_else_on_the_base_url_given(
    run: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "TARGET None True" in out
    # The failing test says which rule broke, with the providers redacted.
    assert "the turn does not conform (3 findings)" in out
    assert "FAIL  target-parses" in out
    assert "<redacted>" in out
    assert "plaid" not in out.lower()
    assert "snaptrade" not in out.lower()

    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    server = ReferenceServer(token=TOKEN)
    with server.serve_loopback() as url:
        result = run.runpytest_subprocess(*PLUGIN, "--silvia-base-url", url)
    result.assert_outcomes(passed=1, failed=1)
    assert f"TARGET {url} False" in result.stdout.str()
    assert len(server.sessions) == 2  # both tests' turns went to this server
    assert TOKEN not in result.stdout.str() + result.stderr.str()


def test_a_bad_base_url_or_no_token_is_a_usage_error_and_the_option_is_in_help(
    run: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for url, token, said in [
        ("staging.example", TOKEN, "--silvia-base-url must be an absolute http(s) URL"),
        ("http://127.0.0.1:9", None, "set SILVIA_TOKEN"),
    ]:
        if token is not None:
            monkeypatch.setenv("SILVIA_TOKEN", token)
        else:
            monkeypatch.delenv("SILVIA_TOKEN")
        result = run.runpytest(*PLUGIN, "--silvia-base-url", url)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, url
        assert said in result.stderr.str(), url
    result = run.runpytest(*PLUGIN, "--help")
    assert result.ret == 0
    assert "--silvia-base-url=URL" in result.stdout.str()
