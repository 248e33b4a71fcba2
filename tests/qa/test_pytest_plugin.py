"""A QA suite as plain pytest tests: `silvia_qa`, `--silvia-base-url` and `assert_conforms`.

A small pytest session runs in a subprocess, with plugin autoloading off and the
plugin loaded by `-p`, as an integrator would; the option's refusals in-process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from silvia_client.qa.pytest_plugin import pytest_configure
from silvia_client.testing import ReferenceServer

TOKEN = "qa-plugin-t0ken"

SUITE = textwrap.dedent(
    """
    from silvia_client.qa import assert_conforms


    def test_cards(silvia_qa, silvia_base_url):
        observation = silvia_qa.observe("What do I owe on my cards?", scenario="accounts")
        assert_conforms(observation, expect={"cites_kinds": ["accounts"]})
        print("TARGET", silvia_base_url, silvia_qa.server is not None)


    def test_broken(silvia_qa):
        assert_conforms(silvia_qa.observe("How are my accounts?", scenario="broken-target-parses"))
    """
)


def run_pytest(
    tmp_path: Path, *args: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_qa_suite.py").write_text(SUITE, encoding="utf-8")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("SILVIA_TOKEN", None)
    if token is not None:
        env["SILVIA_TOKEN"] = token
    plugin = ["-p", "silvia_client.qa.pytest_plugin", "-p", "no:cacheprovider", "-s", "-q"]
    command = [sys.executable, "-m", "pytest", *plugin, *args]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_without_a_base_url_the_suite_runs_on_the_reference_server(tmp_path: Path) -> None:
    result = run_pytest(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 1 passed" in result.stdout
    assert "TARGET None True" in result.stdout
    # The failing test says which rule broke, with the providers redacted.
    assert "the turn does not conform (3 findings)" in result.stdout
    assert "FAIL  target-parses" in result.stdout
    assert "<redacted>" in result.stdout
    assert "plaid" not in result.stdout.lower()
    assert "snaptrade" not in result.stdout.lower()


def test_with_a_base_url_the_suite_runs_against_that_server(tmp_path: Path) -> None:
    server = ReferenceServer(token=TOKEN)
    with server.serve_loopback() as url:
        result = run_pytest(tmp_path, "--silvia-base-url", url, token=TOKEN)
    assert "1 failed, 1 passed" in result.stdout, result.stdout + result.stderr
    assert f"TARGET {url} False" in result.stdout
    assert len(server.sessions) == 2  # both tests' turns went to this server
    assert TOKEN not in result.stdout + result.stderr


class _Config:
    """A pytest config with `--silvia-base-url` set to `value`."""

    def __init__(self, value: str) -> None:
        self.value = value

    def getoption(self, name: str) -> str:
        return self.value


def test_a_bad_base_url_or_no_token_is_a_usage_error_and_the_option_is_in_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In-process: pytest turns the hook's UsageError into its exit status 4.
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    with pytest.raises(pytest.UsageError, match="--silvia-base-url must be an absolute http"):
        pytest_configure(_Config("staging.example"))  # type: ignore[arg-type]
    pytest_configure(_Config("http://127.0.0.1:9"))  # type: ignore[arg-type]
    monkeypatch.delenv("SILVIA_TOKEN")
    with pytest.raises(pytest.UsageError, match="set SILVIA_TOKEN"):
        pytest_configure(_Config("http://127.0.0.1:9"))  # type: ignore[arg-type]
    result = run_pytest(tmp_path, "--help")
    assert result.returncode == 0
    assert "--silvia-base-url=URL" in result.stdout
