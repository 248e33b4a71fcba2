"""The QA script format: what it accepts, and what it refuses (saying where)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silvia_client.qa import (
    Expectations,
    Prompt,
    ScriptFormatError,
    load_script,
    parse_script,
    run_script,
)
from silvia_client.qa.script import TimingBudget

EXAMPLE = Path(__file__).parents[2] / "examples" / "qa_script.json"


def test_a_full_script() -> None:
    script = parse_script(
        {
            "name": "smoke",
            "prompts": [
                {"message": "How much is in checking?"},
                {
                    "id": "cards",
                    "message": "And my cards?",
                    "scenario": "accounts",
                    "continue": True,
                    "expect": {
                        "complete": True,
                        "cites_account": True,
                        "cites_kinds": ["accounts"],
                        "no_citations": False,
                        "no_old_checkpoint": True,
                    },
                },
            ],
        }
    )
    assert script.name == "smoke"
    assert script.prompts == (
        Prompt("p1", "How much is in checking?"),
        Prompt(
            "cards",
            "And my cards?",
            scenario="accounts",
            continue_session=True,
            expect=Expectations(True, True, ("accounts",), False, no_old_checkpoint=True),
        ),
    )
    expect = script.prompts[1].expect
    assert expect is not None
    assert expect.to_dict()["no_old_checkpoint"] is True
    assert "no_old_checkpoint" not in Expectations().to_dict()


OUT_OF_FORMAT = [
    ([], "expected a JSON object"),
    ({"prompts": []}, "prompts: expected a non-empty list"),
    ({"prompt": [{"message": "hi"}]}, "unknown key(s) 'prompt'"),
    ({"prompts": ["hi"]}, "prompts[0]: expected an object"),
    ({"prompts": [{"message": " "}]}, "prompts[0].message"),
    ({"prompts": [{"message": "hi", "expects": {}}]}, "prompts[0]: unknown key(s) 'expects'"),
    ({"prompts": [{"message": "hi", "id": "a b"}]}, "prompts[0].id"),
    (
        {"prompts": [{"message": "a", "id": "x"}, {"message": "b", "id": "x"}]},
        "prompts[1].id: 'x' is used twice",
    ),
    ({"prompts": [{"message": "hi", "continue": True}]}, "the first prompt has no session"),
    ({"prompts": [{"message": "hi", "scenario": 3}]}, "prompts[0].scenario"),
    (
        {"prompts": [{"message": "hi", "expect": {"cites_kinds": ["wallet"]}}]},
        "prompts[0].expect.cites_kinds: unknown kind(s) 'wallet'",
    ),
    (
        {"prompts": [{"message": "hi", "expect": {"complete": "yes"}}]},
        "prompts[0].expect.complete: expected true or false",
    ),
    ({"prompts": [{"message": "hi", "expect": {"cites": []}}]}, "unknown key(s) 'cites'"),
    (
        {"prompts": [{"message": "hi", "expect": {"no_old_checkpoint": 1}}]},
        "prompts[0].expect.no_old_checkpoint: expected true or false",
    ),
    (
        {"prompts": [{"message": "hi", "expect": {"max_turn_s": 0}}]},
        "prompts[0].expect.max_turn_s: expected a positive number of seconds",
    ),
    (
        {"prompts": [{"message": "hi", "expect": {"max_first_text_s": True}}]},
        "prompts[0].expect.max_first_text_s: expected a number of seconds",
    ),
    (
        {"prompts": [{"message": "hi", "expect": {"max_turn_s": float("inf")}}]},
        "prompts[0].expect.max_turn_s: expected a positive number",
    ),
    ({"timing": [], "prompts": [{"message": "hi"}]}, "timing: expected an object"),
    (
        {"timing": {"severity": "fatal"}, "prompts": [{"message": "hi"}]},
        'timing.severity: expected "warning" or "error"',
    ),
    (
        {"timing": {"max_turn": 3}, "prompts": [{"message": "hi"}]},
        "timing: unknown key(s) 'max_turn'",
    ),
    (
        {"timing": {"max_turn_s": "3"}, "prompts": [{"message": "hi"}]},
        "timing.max_turn_s: expected a number of seconds",
    ),
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
    with pytest.raises(ScriptFormatError, match="cannot read"):
        load_script(tmp_path / "missing.json")


def test_the_example_script_is_in_the_format() -> None:
    script = load_script(EXAMPLE)
    assert len(script.prompts) >= 10
    assert all(prompt.scenario for prompt in script.prompts)


def test_the_readme_script_is_in_the_format_and_passes() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("<!-- section: qa -->") : readme.index("<!-- /section: qa -->")]
    block = section[section.index("```json\n") + 8 :]
    script = parse_script(json.loads(block[: block.index("```")]))
    assert run_script(script).ok


def test_the_scripts_timing_gives_every_prompt_its_budgets_which_a_prompt_may_change() -> None:
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


def test_without_timing_a_prompt_without_expect_has_none() -> None:
    script = parse_script({"prompts": [{"message": "a"}, {"message": "b", "expect": {}}]})
    assert [prompt.expect for prompt in script.prompts] == [None, Expectations()]
    assert not Expectations().timed
    assert Expectations(max_turn_s=1.0).timed


PLACES = [
    ('{\n  "prompts": []\n}', 2, 14, "prompts"),
    ('{"prompts": [\n  {"message": "a"},\n  {"message": " "}\n]}', 3, 15, "prompts[1].message"),
    ('{"prompts": [\n  {"message": "a",\n   "expects": {}}\n]}', 2, 3, "prompts[0]"),
    ('{"prompts": [{"message": "a"}],\n "nmae": "x"}', 1, 1, ""),
    (
        '{"prompts": [{"message": "a",\n  "expect": {"cites_kinds":\n ["wallet"]}}]}',
        3,
        2,
        "prompts[0].expect.cites_kinds",
    ),
    (
        '{"timing": {\n  "severity": "fatal"}, "prompts": [{"message": "a"}]}',
        2,
        15,
        "timing.severity",
    ),
    # A repeated key: `json.loads` keeps the last, and so does the place found.
    ('{"prompts": [{"message": "a",\n "id": "ok",\n "id": "a b"}]}', 3, 8, "prompts[0].id"),
    # An escaped key is the key it spells; columns count characters, as `json`'s do.
    ('{"pr\\u006fmpts": [{"message": "é", "id": "é"}]}', 1, 42, "prompts[0].id"),
    # No such key: the nearest place above it.
    ('{"prompts": [\n  {"id": "x"}]}', 2, 3, "prompts[0].message"),
]


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
