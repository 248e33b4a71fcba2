"""Running `silvia qa` in-process and reading its table back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silvia_client.cli import main
from silvia_client.testing import BROKEN_SCENARIOS


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


def table(out: str) -> dict[str, list[str]]:
    """The table's cells by rule id, one per prompt, as printed."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("rule "))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rule, *cells = line.split()
        rows[rule] = cells
    return rows


def write_script(path: Path, prompts: list[dict[str, object]], name: str = "test") -> Path:
    path.write_text(json.dumps({"name": name, "prompts": prompts}), encoding="utf-8")
    return path


def broken_script(path: Path) -> Path:
    """A script with a prompt per broken scenario (and a good one first)."""
    prompts: list[dict[str, object]] = [{"id": "demo", "message": "Hi", "scenario": "demo"}]
    prompts += [
        {"id": name, "message": "How are my accounts?", "scenario": name}
        for name in BROKEN_SCENARIOS
    ]
    return write_script(path, prompts, name="broken")
