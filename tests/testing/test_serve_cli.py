"""`silvia serve --list` and its default scenario, in-process.

Serving over a socket, the token, the log and stopping by SIGTERM or Ctrl-C are
`tests/cli/test_serve.py`'s; the pytest plugin is tested in `tests/e2e`.
"""

from __future__ import annotations

import pytest

from silvia_client.cli import main
from silvia_client.testing import BROKEN_SCENARIOS, SCENARIOS


def test_list_prints_every_scenario_with_its_description_and_an_unknown_one_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    playable = {**SCENARIOS, **BROKEN_SCENARIOS}
    assert len(lines) == len(playable)
    for line, (name, scenario) in zip(lines, playable.items(), strict=True):
        assert line.split(maxsplit=1) == [name, scenario.description]
    assert main(["serve", "--scenario", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
