"""The QA script format: what it accepts, what it refuses (saying the line, the column and
the field), its scenario names (the reference server's own rule, checked at load: a name no
server could have is the script's error, exit 2, never a failed request), and `qa init`'s
starter script (`qa/starter.json`: every expectation key, comments, a continued prompt)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.qa import (
    Expectations,
    Prompt,
    ScriptFormatError,
    load_script,
    parse_script,
    run_script,
)
from silvia_client.qa.script import TimingBudget
from silvia_client.testing import BROKEN_SCENARIOS, SCENARIOS, Scenario

from ._helpers import EXAMPLE, run_cli, table


def test_a_full_script_its_timing_and_comments() -> None:
    expect = {"complete": True, "cites_account": True, "cites_kinds": ["accounts"]}
    expect |= {"no_citations": False, "no_old_checkpoint": True}
    cards = {"id": "cards", "message": "Cards?", "scenario": "accounts", "continue": True}
    script = parse_script(
        {"name": "smoke", "prompts": [{"message": "Hi"}, {**cards, "expect": expect}]}
    )
    assert script.name == "smoke"
    assert script.prompts == (
        Prompt("p1", "Hi"),
        Prompt(
            "cards",
            "Cards?",
            scenario="accounts",
            continue_session=True,
            expect=Expectations(True, True, ("accounts",), False, no_old_checkpoint=True),
        ),
    )
    assert script.prompts[1].expect.to_dict()["no_old_checkpoint"] is True  # type: ignore[union-attr]
    assert "no_old_checkpoint" not in Expectations().to_dict()
    script = parse_script(
        {
            "timing": {"max_first_text_s": 2, "max_turn_s": 10, "severity": "error"},
            "prompts": [
                {"message": "a"},
                {"message": "b", "expect": {"max_turn_s": 30, "complete": True}},
            ],
        }
    )
    assert script.timing == TimingBudget(2.0, 10.0, "error")
    first, second = (prompt.expect for prompt in script.prompts)
    assert first == Expectations(max_first_text_s=2.0, max_turn_s=10.0, timing_severity="error")
    assert first.only_timing
    assert second == Expectations(
        complete=True, max_first_text_s=2.0, max_turn_s=30.0, timing_severity="error"
    )
    assert not second.only_timing
    assert second.to_dict() == {
        "complete": True,
        "max_first_text_s": 2.0,
        "max_turn_s": 30.0,
        "timing_severity": "error",
    }
    script = parse_script(
        {"prompts": [{"message": "a", "scenario": None}, {"message": "b", "expect": {}}]}
    )
    assert [prompt.expect for prompt in script.prompts] == [None, Expectations()]
    assert script.prompts[0].scenario is None  # null: no scenario
    assert not Expectations().timed
    assert Expectations(max_turn_s=1.0).timed
    # A `comment` anywhere (the starter script has them at the top, in timing and prompts).
    commented = parse_script({"prompts": [{"message": "Hi", "expect": {"comment": 1}}]})
    assert commented.prompts[0].expect == Expectations()
    with pytest.raises(ValueError, match="unknown key"):
        parse_script({"prompts": [{"message": "Hi", "comments": "typo"}]})


def one(**prompt: object) -> dict[str, object]:
    """A script of one prompt, "hi" with `prompt`'s keys."""
    return {"prompts": [{"message": "hi", **prompt}]}


def timed(timing: object) -> dict[str, object]:
    return {**one(), "timing": timing}


OUT_OF_FORMAT = [
    ([], "expected a JSON object"),
    ({"prompts": []}, "prompts: expected a non-empty list"),
    ({"prompt": [{"message": "hi"}]}, "unknown key(s) 'prompt'"),
    ({"prompts": ["hi"]}, "prompts[0]: expected an object"),
    (one(message=" "), "prompts[0].message"),
    (one(expects={}), "prompts[0]: unknown key(s) 'expects'"),
    (one(id="a b"), "prompts[0].id"),
    ({"prompts": [{"message": "a", "id": "x"}, {"message": "b", "id": "x"}]}, "'x' is used twice"),
    (one(**{"continue": True}), "the first prompt has no session"),
    (one(scenario=3), "prompts[0].scenario"),
    (one(expect={"cites_kinds": ["wallet"]}), "expect.cites_kinds: unknown kind(s) 'wallet'"),
    (one(expect={"complete": "yes"}), "prompts[0].expect.complete: expected true or false"),
    (one(expect={"cites": []}), "unknown key(s) 'cites'"),
    (one(expect={"no_old_checkpoint": 1}), "expect.no_old_checkpoint: expected true or false"),
    (one(expect={"max_turn_s": 0}), "expect.max_turn_s: expected a positive number of seconds"),
    (one(expect={"max_first_text_s": True}), "expect.max_first_text_s: expected a number of"),
    (one(expect={"max_turn_s": float("inf")}), "expect.max_turn_s: expected a positive number"),
    (timed([]), "timing: expected an object"),
    (timed({"severity": "fatal"}), 'timing.severity: expected "warning" or "error"'),
    (timed({"max_turn": 3}), "timing: unknown key(s) 'max_turn'"),
    (timed({"max_turn_s": "3"}), "timing.max_turn_s: expected a number of seconds"),
]


def test_a_script_out_of_format_is_refused_saying_where() -> None:
    for data, message in OUT_OF_FORMAT:
        with pytest.raises(ScriptFormatError) as caught:
            parse_script(data)
        assert message in str(caught.value), message


def test_load_script_reads_a_file_and_explains_a_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"prompts": [{"message": "hi"}]}), encoding="utf-8")
    assert load_script(path).prompts == (Prompt("p1", "hi"),)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ScriptFormatError, match="is not JSON"):
        load_script(path)
    assert len(load_script(EXAMPLE).prompts) >= 10
    assert all(prompt.scenario for prompt in load_script(EXAMPLE).prompts)
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("<!-- section: qa -->") : readme.index("<!-- /section: qa -->")]
    block = section[section.index("```json\n") + 8 :]
    assert run_script(parse_script(json.loads(block[: block.index("```")]))).ok


PLACES = [
    ('{\n  "prompts": []\n}', 2, 14, "prompts"),
    ('{"prompts": [\n  {"message": "a"},\n  {"message": " "}\n]}', 3, 15, "prompts[1].message"),
    ('{"prompts": [\n  {"message": "a",\n   "expects": {}}\n]}', 2, 3, "prompts[0]"),
    ('{"prompts": [{"message": "a"}],\n "nmae": "x"}', 1, 1, ""),
    ('{"prompts": [{"message": "a",\n  "expect": {"cites_kinds":\n ["wallet"]}}]}', 3, 2,
     "prompts[0].expect.cites_kinds"),
    ('{"timing": {\n  "severity": "fatal"}, "prompts": [{"message": "a"}]}', 2, 15,
     "timing.severity"),
    # A repeated key: `json.loads` keeps the last, and so does the place found.
    ('{"prompts": [{"message": "a",\n "id": "ok",\n "id": "a b"}]}', 3, 8, "prompts[0].id"),
    # An escaped key is the key it spells; columns count characters, as `json`'s do.
    ('{"pr\\u006fmpts": [{"message": "é", "id": "é"}]}', 1, 42, "prompts[0].id"),
    # No such key: the nearest place above it.
    ('{"prompts": [\n  {"id": "x"}]}', 2, 3, "prompts[0].message"),
]  # fmt: skip


def test_load_script_says_the_line_and_column_of_every_error(tmp_path: Path) -> None:
    for text, line, column, where in PLACES:
        path = tmp_path / "script.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ScriptFormatError) as caught:
            load_script(path)
        error = caught.value
        assert (error.line, error.column, error.where) == (line, column, where), text
        assert str(error).startswith(f"{path}: line {line} column {column}: ")
        with pytest.raises(ScriptFormatError) as parsed:
            parse_script(json.loads(text))
        assert str(error) == f"{path}: line {line} column {column}: {parsed.value}"
        assert (parsed.value.line, parsed.value.column, parsed.value.where) == (None, None, where)


# Scenario names -------------------------------------------------------------------------

# Each class of name the server's rule refuses, by what it is.
HOSTILE = {
    "newline": "accounts\nx", "carriage-return-line-feed": "accounts\r\nx-injected: 1",
    "nul": "accounts\x00", "escape-sequence": "accounts\x1b[2J", "osc-title": "\x1b]0;owned\x07",
    "c1-control": "accounts\x9b", "delete": "accounts\x7f", "tab": "accounts\tx",
    "bidi-override": "accounts\u202e", "non-ascii-letter": "café", "emoji": "accounts\U0001f600",
    "non-ascii-digit": "accounts\u0661",  # ARABIC-INDIC DIGIT ONE: a digit to `str.isdigit`
    "empty": "", "blank": "   ", "space-inside": "two words", "leading-space": " accounts",
    "trailing-newline": "accounts\n", "leading-punctuation": "-accounts",
    "leading-dot": ".accounts", "slash": "../accounts",
}  # fmt: skip
GOOD = ["a", "9", "v1.2_rc-3", "x" * 1_000, *SCENARIOS, *BROKEN_SCENARIOS]  # all it plays
NOT_STRINGS = [3, True, ["demo"], {"name": "demo"}]


def server_takes(name: str) -> bool:
    """Whether the reference server would take `name` for a scenario of its own."""
    try:
        Scenario(name, "A scenario named to try the rule.")
    except ValueError:
        return False
    return True


def named(scenario: object) -> dict[str, object]:
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
    text = json.dumps(named(scenario), indent=2)
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    number = max(i for i, line in enumerate(lines) if '"scenario": ' in line)
    return path, number + 1, lines[number].index('"scenario": ') + len('"scenario": ') + 1


@given(st.text(max_size=12) | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True))
def test_the_script_takes_exactly_the_names_the_server_takes(name: str) -> None:
    # One rule: the script's verdict is the server's, for a long name too.
    if server_takes(name):
        assert parse_script(named(name)).prompts[1].scenario == name
        return
    with pytest.raises(ScriptFormatError) as caught:
        parse_script(named(name))
    error = caught.value
    assert error.where == "prompts[1].scenario"
    assert str(error).startswith("prompts[1].scenario: expected a scenario name (")
    assert (error.line, error.column) == (None, None)  # no file, so no line
    assert str(error).isprintable(), "the name is shown escaped"


def test_a_bad_name_is_refused_at_load_saying_where_and_qa_run_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not any(map(server_takes, HOSTILE.values()))
    assert all(map(server_takes, GOOD))
    said = "prompts[1].scenario: expected a scenario name ("
    for what, name in [*HOSTILE.items(), *((repr(value), value) for value in NOT_STRINGS)]:
        path, line, column = write(tmp_path, name)
        with pytest.raises(ScriptFormatError) as caught:
            load_script(path)
        assert str(caught.value).startswith(f"{path}: line {line} column {column}: {said}"), what
        assert str(caught.value).isprintable(), what
    for name in GOOD:
        assert load_script(write(tmp_path, name)[0]).prompts[1].scenario == name
    monkeypatch.setenv("SILVIA_TOKEN", "qa-token")
    path, line, column = write(tmp_path, HOSTILE["osc-title"])
    for base_url in ([], ["--base-url", "http://127.0.0.1:9"]):
        status, out, err = run_cli(["qa", "run", str(path), *base_url], capsys)
        # The script's fault: not 3 (unreachable), not 1 (a finding); no prompt ran.
        assert (status, out) == (2, ""), base_url
        (message,) = err.splitlines()
        assert message.startswith(f"silvia qa: {path}: line {line} column {column}: {said}")
        assert message.isprintable()


# qa init ---------------------------------------------------------------------------


def test_init_writes_a_starter_script_qa_run_passes_never_over_a_file_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_cli(["qa", "init"], capsys)[0] == 0
    assert (tmp_path / "qa_script.json").is_file()
    path = tmp_path / "qa.json"
    status, out, _ = run_cli(["qa", "init", str(path)], capsys)
    assert status == 0
    assert f"run it with: silvia qa run {path}" in out
    # Every expectation key, with comments at the top, in timing and in each prompt.
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    used = {key for prompt in data["prompts"] for key in prompt.get("expect", {})}
    assert used == {field.name for field in fields(Expectations)} - {"timing_severity"}
    assert {"max_first_text_s", "max_turn_s", "severity", "comment"} <= set(data["timing"])
    assert "comment" in data
    assert all("comment" in prompt for prompt in data["prompts"])
    assert any(prompt.continue_session for prompt in load_script(path).prompts)
    status, out, _ = run_cli(["qa", "run", str(path)], capsys)
    assert status == 0, out
    cells = table(out)
    assert set(cells["expectations"]) == {"pass"}
    assert set(cells["timing"]) == {"pass"}
    path = tmp_path / "mine.json"
    path.write_text("{}", encoding="utf-8")
    status, _, err = run_cli(["qa", "init", str(path)], capsys)
    assert status == 2
    assert "exists; --force overwrites it" in err
    assert path.read_text(encoding="utf-8") == "{}"
    assert run_cli(["qa", "init", str(path), "--force"], capsys)[0] == 0
    assert json.loads(path.read_text(encoding="utf-8"))["prompts"]
