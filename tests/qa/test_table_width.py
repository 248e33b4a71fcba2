"""The CLI table for a hundred prompts: within the width, the wide layout with `--wide`.

On a non-terminal stdout (pytest's capture) the table keeps to 100 columns:
a table too wide for that is laid out with a row per prompt and a column per
rule, with a legend; `--wide` keeps a row per rule and a column per prompt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from silvia_client.qa import RULES

from ._cli import run_cli, write_script


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)


def _table(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("prompts:") if "prompts:" in lines else lines.index("rules:")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("("))
    return lines[start : end + 1]


def _script(tmp_path: Path, count: int) -> Path:
    prompts: list[dict[str, object]] = [
        {"id": f"prompt-{n:03}", "message": f"Question {n}: how are my accounts doing today?"}
        for n in range(count)
    ]
    prompts[3]["scenario"] = "broken-target-parses"
    return write_script(tmp_path / "s.json", prompts)


@pytest.mark.parametrize("count", [40, 100])
def test_the_table_keeps_to_100_columns(
    count: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run_cli(["qa", "run", str(_script(tmp_path, count))], capsys)
    assert status == 1
    table = _table(out)
    assert max(map(len, table)) <= 100
    rows = [line for line in table if line[:4].strip().isdigit() and "prompt-" in line]
    assert len(rows) == count
    assert rows[3].split()[2] == "F"  # prompt 4 fails target-parses, the first rule
    assert table[-1].startswith("(. pass, w warn, F FAIL")
    assert f"  {len(RULES):>2}  {RULES[-1].id}" in table


def test_wide_keeps_a_column_per_prompt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["qa", "run", str(_script(tmp_path, 40)), "--wide"], capsys)
    assert status == 1
    header = next(line for line in out.splitlines() if line.startswith("rule "))
    assert header.split()[1:] == [str(n) for n in range(1, 41)]
    assert len(header) > 200
