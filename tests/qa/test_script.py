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


@pytest.mark.parametrize(
    ("data", "message"),
    [
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
    ],
)
def test_a_script_out_of_format_is_refused_saying_where(data: object, message: str) -> None:
    with pytest.raises(ScriptFormatError) as caught:
        parse_script(data)
    assert message in str(caught.value)


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
