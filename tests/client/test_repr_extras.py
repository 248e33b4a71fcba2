"""Reprs show no provider at any depth (issue 20, finding 12): a row's extras are whatever the
server added, so a repr names their keys and never their values."""

from __future__ import annotations

from typing import Any

import pytest

from silvia_client.chat import CitationEvent, TurnBuilder
from silvia_client.citations import Citation, InlineCitation
from silvia_client.sessions import parse_session

VENDOR = "plaid-vendor-name"
TARGET = {"kind": "account", "accountRef": {"accountId": "acc_1", "provider": VENDOR}}
EXTRAS: list[dict[str, Any]] = [
    {"provider": VENDOR},
    {"account": {"provider": VENDOR}},
    {"rows": [{"meta": {"provider": VENDOR}}]},
    {"note": f"provider={VENDOR}"},
]


@pytest.mark.parametrize("extra", EXTRAS)
def test_no_repr_or_str_of_a_row_shows_an_extras_value(extra: dict[str, Any]) -> None:
    row = {"source": "s", "title": "t", "target": TARGET, **extra}
    inline = InlineCitation.model_validate({**row, "offset": 0})
    summary = Citation.model_validate(row)
    builder = TurnBuilder("s1")
    builder.apply(CitationEvent(inline))
    turn = builder.build()
    session = parse_session(
        {"messages": [{"id": "m", "role": "assistant", "content": "x", "citations": [row]}]}, "s1"
    )
    shown = [
        repr(inline),
        str(inline),
        repr(summary),
        str(summary),
        repr(CitationEvent(inline)),
        repr(turn.inline_citations),
        repr(turn),
        repr(session),
        repr(session.messages),
    ]
    for text in shown:
        assert VENDOR not in text, text
    assert f"extra_keys=({next(iter(extra))!r},)" in repr(inline)


def test_the_repr_still_says_what_the_row_is() -> None:
    row = InlineCitation.model_validate({"source": "s", "title": "T", "offset": 4})
    assert repr(row) == (
        "InlineCitation(source='s', title='T', cited_text=None, target=None, offset=4)"
    )
