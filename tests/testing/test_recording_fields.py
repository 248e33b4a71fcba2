"""Every field of a recording is checked: a recording, or a `RecordingFormatError` with its line.

Beside the numbers (`test_recording_numbers.py`), each field of each line is
fed any JSON value (strings, lone surrogates, lists, objects, booleans, null):
loading gives a recording whose fields have their types, or a
`RecordingFormatError` naming that field's line, never another exception. The
recorded bodies are bounded by what a client reads at most (`MAX_BODY_BYTES`).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import silvia_client.testing._recording as recording_format
from silvia_client.testing import (
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    RecordingFormatError,
)

from ..depth import examples

SAMPLE = Recording(
    RecordedRequest("POST", "/api/claude", {"message": "hi"}),
    RecordedResponse(
        200,
        (("content-type", "text/event-stream"),),
        (RecordedChunk(0.001, b"event: done\n"), RecordedChunk(0.002, b"\xff\n\n")),
        "closed",
        0.01,
    ),
    RecordedReload("/api/chat/sessions/s", 200, (("content-type", "application/json"),), b"{}"),
)
LINES = SAMPLE.dumps().splitlines()
FIELDS = sorted(
    (number, key)
    for number, line in enumerate(LINES, start=1)
    for key in json.loads(line)
    if key != "type"
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(alphabet=st.characters(), max_size=8)
    | st.sampled_from(["\ud800", "", "GET / HTTP/1.1\r\n", "x" * 40, "YQ==", "/", "closed"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


def with_field(number: int, key: str, value: Any) -> str:
    lines = list(LINES)
    line = json.loads(lines[number - 1])
    line[key] = value
    lines[number - 1] = json.dumps(line)
    return "\n".join(lines) + "\n"


def loaded_or_line(text: str) -> Recording | int | None:
    """The recording, or the line its `RecordingFormatError` names."""
    try:
        return Recording.loads(text)
    except RecordingFormatError as error:
        return error.line


@settings(max_examples=examples(400), deadline=None)
@given(field=st.sampled_from(FIELDS), value=json_values)
@example(field=(4, "text"), value="\ud800")  # a lone surrogate is not UTF-8
@example(field=(2, "method"), value="GET / HTTP/1.1\r\n")
@example(field=(3, "headers"), value=[["a", 1]])
def test_any_value_in_any_field_loads_typed_or_is_an_error_naming_its_line(
    field: tuple[int, str], value: Any
) -> None:
    number, key = field
    loaded = loaded_or_line(with_field(number, key, value))
    if not isinstance(loaded, Recording):
        assert loaded == number
        return
    request, response, reload = loaded.request, loaded.response, loaded.reload
    assert isinstance(request.method, str)
    assert isinstance(request.path, str)
    assert request.path.startswith("/")
    for name, header in (*response.headers, *(reload.headers if reload else ())):
        assert isinstance(name, str)
        assert isinstance(header, str)
    assert all(type(chunk.data) is bytes for chunk in response.chunks)
    assert response.end in ("ended", "closed", "disconnected", "timeout")
    assert type(loaded.is_redacted) is bool
    assert Recording.loads(loaded.dumps()) == loaded


def test_a_lone_surrogate_in_a_chunk_is_an_error_naming_its_line() -> None:
    with pytest.raises(RecordingFormatError, match=r"^line 4: `text` holds a lone surrogate"):
        Recording.loads(with_field(4, "text", "\ud800"))


def test_a_method_must_be_an_http_token() -> None:
    with pytest.raises(RecordingFormatError, match=r"^line 2: `method` must be an HTTP method"):
        Recording.loads(with_field(2, "method", "GET / HTTP/1.1\r\nx: y"))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# SAMPLE's chunks hold 12 and 3 bytes (lines 4 and 5), its reload 2 (line 7).
def test_a_body_past_what_a_client_reads_is_an_error_naming_its_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for number, key, value, says in [
        (4, "text", "a" * 16, "the response's chunks would hold"),
        (4, "base64", b64(b"a" * 16), "the response's chunks would hold"),
        (5, "base64", b64(b"b" * 4), "the response's chunks would hold"),  # 12 + 4: one past
        (7, "text", "c" * 16, "the reload's body would hold"),
    ]:
        try:
            monkeypatch.setattr(recording_format, "MAX_BODY_BYTES", 15)
            assert Recording.loads(SAMPLE.dumps()) == SAMPLE  # 12 + 3 bytes: at the bound
            lines = SAMPLE.dumps().splitlines()
            line = json.loads(lines[number - 1])
            line.pop("text", None)
            line.pop("base64", None)
            line[key] = value
            lines[number - 1] = json.dumps(line)
            with pytest.raises(
                RecordingFormatError, match=f"^line {number}: {says} more than 15 bytes"
            ):
                Recording.loads("\n".join(lines) + "\n")
        except AssertionError as error:
            raise AssertionError(f"case {(number, key, value, says)!r}") from error
