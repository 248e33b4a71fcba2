"""The sources list reads each row once (issue 20, finding 6: no cost that grows faster than the
input): each source's item is given its own rows, not every row of the turn to filter, which
made 4,000 sources at one offset take seconds (`benchmarks/bench_doubling.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from silvia_client.display import _html as _html_sources
from silvia_client.display import turn_html

from ._build import build_turn, row


def test_each_source_item_is_given_only_its_own_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[list[Any]] = []
    item = _html_sources.source_item_html

    def recording(source: Any, rows: Any = ()) -> str:
        given.append(list(rows))
        return item(source, rows)

    monkeypatch.setattr(_html_sources, "source_item_html", recording)
    rows = [row(f"https://example.com/{n % 50}", cited_text=f"quote {n}") for n in range(500)]
    html = turn_html(build_turn(*rows, "x", summary=[]))
    assert len(given) == 50
    assert all(len(own) == 10 for own in given)  # ten rows a source, not all 500
    assert all({r.source for r in own} == {own[0].source} for own in given)
    assert "9 more quotes of this source" in html
