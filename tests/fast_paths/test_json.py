"""The JSON reader and the session reader give what `json.loads` and `parse_session` give.

Also the collector's pause the session reader runs under.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client import _json
from silvia_client._gc import gc_paused
from silvia_client._json import loads, reads_escapes_right
from silvia_client.sessions import parse_session, read_session

from ..depth import examples
from .references import (
    JSON_TEXTS,
    _outcome,
)


@settings(max_examples=examples(800), deadline=None)
@given(JSON_TEXTS)
def test_loads_is_json_loads(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


@settings(max_examples=examples(300), deadline=None)
@given(JSON_TEXTS, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32-le", "bad byte"]))
def test_loads_of_bytes_is_json_loads(text: str, encoding: str) -> None:
    # A session body arrives as bytes: `json.loads` detects its encoding, and lets
    # UTF-8 encoded surrogates through.
    if encoding == "bad byte":
        body = text.encode("utf-8", "surrogatepass")
        body = body[: len(body) // 2] + b"\xff" + body[len(body) // 2 :]
    else:
        body = text.encode(encoding, "surrogatepass")
    assert _outcome(loads, body) == _outcome(json.loads, body)


@pytest.mark.parametrize(
    "text",
    [
        '"\\ud800"',  # a lone surrogate, escaped
        '"\ud800"',  # and raw
        '"\\ud83d\\ude00 \\u00e9"',
        '{"a": 1, "b": 2, "a": 3}',
        "[NaN, Infinity, -Infinity, -0, -0.0, 1e400, 9007199254740993]",
        "[" * 201 + "]" * 201,
        "1" * 4301,
        "\ufeff{}",
    ],
)
def test_loads_reads_the_edge_cases_as_json_loads_does(text: str) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


def test_loads_falls_back_to_json_loads_for_a_parser_that_misreads_escapes() -> None:
    # pydantic-core before 2.18.4 gave "Ã©" for "\u00e9".
    def mojibake(data: Any) -> Any:
        return json.loads(data).encode().decode("latin-1")

    assert not reads_escapes_right(mojibake)
    assert reads_escapes_right(pydantic_core.from_json) == _json.FAST
    assert reads_escapes_right(json.loads)


def test_loads_uses_the_fast_parser_where_it_reads_escapes_right() -> None:
    if not _json.FAST:
        pytest.skip(f"pydantic-core {pydantic_core.__version__} misreads escapes")
    assert loads is not json.loads


# --- session bodies -----------------------------------------------------------------


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


_SESSION = {
    "session": {"id": "sess_1", "title": "T\u00e9st \ud83d\ude00"},
    "messages": [
        {
            "id": "m1",
            "role": "assistant",
            "content": "lone \ud800 surrogate, NaN below",
            "score": float("nan"),
            "inline_citations": [
                {
                    "source": "https://www.irs.gov/p590a",
                    "target": {"kind": "tax_reference", "url": "https://www.irs.gov/p590a"},
                    "offset": 3,
                    "depth": _nested(60),
                },
                {"source": "silvia://x", "target": {"kind": "web", "url": 1}},
                {"title": "no source"},
            ],
            "citations": [{"source": "silvia://your-portfolio", "target": {"kind": "portfolio"}}],
        },
        "not a message",
    ],
}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-32"])
@pytest.mark.parametrize("nesting", [0, 300])
def test_read_session_is_parse_session_of_json_loads(encoding: str, nesting: int) -> None:
    text = json.dumps(_SESSION)
    if nesting:  # past pydantic-core's limit of 200: json.loads reads it
        text = text.replace('"not a message"', "[" * nesting + "]" * nesting)
    body = text.encode(encoding, "surrogatepass")
    assert _session_outcome(read_session(body, "sess_1")) == _session_outcome(
        parse_session(json.loads(body), "sess_1")
    )
    assert gc.isenabled()


def _session_outcome(session: Any) -> object:
    return (
        session.id,
        session.title,
        repr(session.extra),
        [(error.index, error.reason, repr(error.raw)) for error in session.message_errors],
        [
            (
                repr(message),
                message.content,
                repr(message.extra),
                [row.model_dump() for row in (*message.citations, *message.inline_citations)],
                [
                    (error.index, error.reason)
                    for error in (*message.citation_errors, *message.inline_citation_errors)
                ],
            )
            for message in session.messages
        ],
    )


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"messages": 1}', b"\xff"])
def test_read_session_raises_as_parse_session_of_json_loads_and_resumes_the_collector(
    body: bytes,
) -> None:
    with pytest.raises((ValueError, RecursionError)) as info:
        read_session(body, "sess_1")
    with pytest.raises(info.type):
        parse_session(json.loads(body), "sess_1")
    assert gc.isenabled()


# --- gc_paused --------------------------------------------------------------------


def test_gc_paused_nests_and_restores() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
