"""A script's scenario names follow the reference server's own rule, checked at load.

A name no server could have is the script's error (exit 2, with its line and
column), never a request that fails: against a real `--base-url`, such a name
used to stop the run as "cannot reach the server" (exit 3) or fail it (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.qa import ScriptFormatError, load_script, parse_script
from silvia_client.testing import BROKEN_SCENARIOS, SCENARIOS, Scenario

from ._cli import run_cli
from ._helpers import with_examples

# Each class of name the server's rule refuses, by what it is.
HOSTILE = {
    "newline": "accounts\nx",
    "carriage-return-line-feed": "accounts\r\nx-injected: 1",
    "nul": "accounts\x00",
    "escape-sequence": "accounts\x1b[2J",
    "osc-title": "\x1b]0;owned\x07",
    "c1-control": "accounts\x9b",
    "delete": "accounts\x7f",
    "tab": "accounts\tx",
    "bidi-override": "accounts\u202e",
    "non-ascii-letter": "café",
    "non-ascii-digit": "accounts\u0661",  # ARABIC-INDIC DIGIT ONE: a digit to `str.isdigit`
    "emoji": "accounts\U0001f600",
    "empty": "",
    "blank": "   ",
    "space-inside": "two words",
    "leading-space": " accounts",
    "trailing-newline": "accounts\n",
    "leading-punctuation": "-accounts",
    "leading-dot": ".accounts",
    "slash": "../accounts",
}
GOOD = ["accounts", "demo", "a", "9", "broken-target-parses", "v1.2_rc-3", "x" * 1_000]
NOT_STRINGS = [3, True, ["demo"], {"name": "demo"}]


def server_takes(name: str) -> bool:
    """Whether the reference server would take `name` for a scenario of its own."""
    try:
        Scenario(name, "A scenario named to try the rule.")
    except ValueError:
        return False
    return True


def script(scenario: object) -> dict[str, object]:
    return {
        "name": "names",
        "prompts": [
            {"id": "first", "message": "Hi", "scenario": "demo"},
            {"id": "named", "message": "How are my accounts?", "scenario": scenario},
        ],
    }


def write(tmp_path: Path, scenario: object) -> tuple[Path, int, int]:
    """The script in a file, indented; the line and column of the second scenario's value."""
    path = tmp_path / "script.json"
    text = json.dumps(script(scenario), indent=2)
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    number = max(i for i, line in enumerate(lines) if '"scenario": ' in line)
    return path, number + 1, lines[number].index('"scenario": ') + len('"scenario": ') + 1


@with_examples([*HOSTILE.values(), *GOOD])
@given(st.text(max_size=12) | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True))
def test_the_script_takes_exactly_the_names_the_server_takes(name: str) -> None:
    # One rule: the script's verdict is the server's, for a long name too.
    if server_takes(name):
        assert parse_script(script(name)).prompts[1].scenario == name
        return
    with pytest.raises(ScriptFormatError) as caught:
        parse_script(script(name))
    error = caught.value
    assert error.where == "prompts[1].scenario"
    assert str(error).startswith("prompts[1].scenario: expected a scenario name (")
    assert (error.line, error.column) == (None, None)  # no file, so no line
    assert str(error).isprintable(), "the name is shown escaped"


def test_load_script_says_the_line_and_column_of_a_bad_name(tmp_path: Path) -> None:
    for what, name in [*HOSTILE.items(), *((repr(value), value) for value in NOT_STRINGS)]:
        path, line, column = write(tmp_path, name)
        with pytest.raises(ScriptFormatError) as caught:
            load_script(path)
        error = caught.value
        assert (error.line, error.column, error.where) == (line, column, "prompts[1].scenario"), (
            what
        )
        assert str(error).startswith(
            f"{path}: line {line} column {column}: prompts[1].scenario: expected a scenario name ("
        ), what
    for name in GOOD:
        path, _, _ = write(tmp_path, name)
        assert load_script(path).prompts[1].scenario == name


def test_qa_run_refuses_each_hostile_name_as_a_usage_error_before_sending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.setenv("SILVIA_TOKEN", "qa-token")
    for what, name in HOSTILE.items():
        path, line, column = write(tmp_path, name)
        for base_url in ([], ["--base-url", "http://127.0.0.1:9"]):
            args = ["qa", "run", str(path), "--timeout", "2", *base_url]
            status, out, err = run_cli(args, capsys)
            case = f"{what}, {base_url or 'embedded'}"
            # The script's fault: not 3 (unreachable), not 1 (a finding); no prompt ran.
            assert (status, out) == (2, ""), case
            (message,) = err.splitlines()
            assert message.startswith(f"silvia qa: {path}: line {line} column {column}: "), case
            assert "prompts[1].scenario: expected a scenario name" in message, case
            assert message.isprintable(), case


def test_every_scenario_the_server_plays_can_be_named_and_none_is_no_name() -> None:
    names = [*SCENARIOS, *BROKEN_SCENARIOS]
    loaded = parse_script({"prompts": [{"message": "Hi", "scenario": n} for n in names]})
    assert [prompt.scenario for prompt in loaded.prompts] == names
    loaded = parse_script({"prompts": [{"message": "Hi"}, {"message": "Hi", "scenario": None}]})
    assert [prompt.scenario for prompt in loaded.prompts] == [None, None]
