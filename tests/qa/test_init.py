"""`silvia qa init [PATH]`: a starter script that `qa run` accepts, and the `comment` key.

The script is a file in the package (`qa/starter.json`); it covers every
expectation key, the timing budgets and a continued prompt, and passes against
the embedded reference server.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from silvia_client.qa import load_script, parse_script

from ._cli import run_cli, table

EXPECTATION_KEYS = {
    "complete",
    "cites_account",
    "cites_kinds",
    "no_citations",
    "no_old_checkpoint",
    "max_first_text_s",
    "max_turn_s",
}


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)


def test_init_writes_a_script_qa_run_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "qa.json"
    status, out, _ = run_cli(["qa", "init", str(path)], capsys)
    assert status == 0
    assert f"run it with: silvia qa run {path}" in out
    script = load_script(path)
    assert any(prompt.continue_session for prompt in script.prompts)
    status, out, _ = run_cli(["qa", "run", str(path)], capsys)
    assert status == 0, out
    cells = table(out)
    assert set(cells["expectations"]) == {"pass"}
    assert set(cells["timing"]) == {"pass"}


def test_the_starter_covers_every_expectation_and_carries_comments() -> None:
    starter = resources.files("silvia_client.qa").joinpath("starter.json")
    data: dict[str, Any] = json.loads(starter.read_text(encoding="utf-8"))
    used = {key for prompt in data["prompts"] for key in prompt.get("expect", {})}
    assert used == EXPECTATION_KEYS
    assert {"max_first_text_s", "max_turn_s", "severity"} <= set(data["timing"])
    assert "comment" in data
    assert "comment" in data["timing"]
    assert all("comment" in prompt for prompt in data["prompts"])


def test_init_does_not_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.json"
    path.write_text("{}", encoding="utf-8")
    status, _, err = run_cli(["qa", "init", str(path)], capsys)
    assert status == 2
    assert "exists; --force overwrites it" in err
    assert path.read_text(encoding="utf-8") == "{}"
    assert run_cli(["qa", "init", str(path), "--force"], capsys)[0] == 0
    assert json.loads(path.read_text(encoding="utf-8"))["prompts"]


def test_init_writes_qa_script_json_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_cli(["qa", "init"], capsys)[0] == 0
    assert (tmp_path / "qa_script.json").is_file()


def test_a_comment_is_ignored_on_every_object_and_other_keys_still_refused() -> None:
    script = parse_script(
        {
            "comment": ["any", "value"],
            "timing": {"comment": 1, "max_turn_s": 5},
            "prompts": [
                {"comment": None, "message": "Hi", "expect": {"comment": "x", "complete": True}}
            ],
        }
    )
    assert script.prompts[0].expect is not None
    assert script.prompts[0].expect.complete is True
    with pytest.raises(ValueError, match="unknown key"):
        parse_script({"prompts": [{"message": "Hi", "comments": "typo"}]})
