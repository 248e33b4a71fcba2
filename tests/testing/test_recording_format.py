"""The recording file format: exact bytes, readable text, and clear errors for bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client import SilviaError
from silvia_client.testing import (
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    RecordingFormatError,
)

E_ACUTE = "é".encode()  # two bytes: a chunk boundary can fall between them


def recording(
    chunks: list[bytes],
    *,
    reload: bytes | None = b'{"session": {"id": "s"}}',
    end: str = "closed",
) -> Recording:
    times = [round(0.001 * (i + 1), 6) for i in range(len(chunks))]
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": "How much is in checking?"}),
        RecordedResponse(
            200,
            (("content-type", "text/event-stream"), ("x-request-id", "req_1")),
            tuple(RecordedChunk(at, data) for at, data in zip(times, chunks, strict=True)),
            end,  # type: ignore[arg-type]
            0.5,
        ),
        None if reload is None else RecordedReload("/api/chat/sessions/s", 200, (), reload),
    )


SAMPLE = recording([b'event: text\ndata: {"text":"caf', E_ACUTE[:1], E_ACUTE[1:] + b'"}\n\n'])


# -- bytes round-trip exactly ------------------------------------------------------------


@given(
    chunks=st.lists(st.binary(min_size=1, max_size=40), max_size=12),
    reload=st.one_of(st.none(), st.binary(max_size=60)),
    end=st.sampled_from(["ended", "closed", "disconnected", "timeout"]),
)
def test_any_chunks_and_reload_round_trip_exactly(
    chunks: list[bytes], reload: bytes | None, end: str
) -> None:
    original = recording(chunks, reload=reload, end=end)
    loaded = Recording.loads(original.dumps())
    assert loaded == original
    assert [c.data for c in loaded.response.chunks] == chunks
    assert loaded.reload == original.reload


@given(text=st.text(min_size=1, max_size=30), cut=st.integers(min_value=0, max_value=200))
def test_utf8_text_split_anywhere_round_trips(text: str, cut: int) -> None:
    data = text.encode("utf-8")
    cut %= len(data) + 1
    chunks = [part for part in (data[:cut], data[cut:]) if part]
    loaded = Recording.loads(recording(chunks).dumps())
    assert loaded.response.body == data
    assert [c.data for c in loaded.response.chunks] == chunks


def test_valid_utf8_is_kept_as_text_and_the_rest_as_flagged_base64() -> None:
    lines = [json.loads(line) for line in SAMPLE.dumps().splitlines()]
    chunks = [line for line in lines if line["type"] == "chunk"]
    assert chunks[0]["text"] == 'event: text\ndata: {"text":"caf'
    assert "base64" not in chunks[0]
    # Each half of a split character is not UTF-8 on its own: base64, flagged by its key.
    assert set(chunks[1]) == {"type", "at", "base64"}
    assert set(chunks[2]) == {"type", "at", "base64"}
    assert chunks[0]["at"] == 0.001


def test_the_file_is_json_lines_with_a_versioned_header_and_a_closing_line(tmp_path: Path) -> None:
    path = tmp_path / "turn.jsonl"
    SAMPLE.save(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    assert first["type"] == "recording"
    assert first["format"] == "silvia-recording"
    assert first["version"] == 1
    assert [json.loads(line)["type"] for line in lines[1:3]] == ["request", "response"]
    assert last == {"type": "end", "lines": len(lines)}
    assert Recording.load(path) == SAMPLE


def test_the_request_body_is_kept_as_json() -> None:
    request = json.loads(SAMPLE.dumps().splitlines()[1])
    assert request == {
        "type": "request",
        "method": "POST",
        "path": "/api/claude",
        "body": {"message": "How much is in checking?"},
    }


# -- never in a recording -------------------------------------------------------------------

FORBIDDEN = [
    ("Authorization", "Bearer x"),
    ("Proxy-Authorization", "Basic y"),
    ("Cookie", "a=b"),
    ("Set-Cookie", "sid=1"),
]


def test_a_recording_never_holds_a_credential_header() -> None:
    for name, value in FORBIDDEN:
        try:
            headers = (("content-type", "text/event-stream"), (name, value))
            made = Recording(
                RecordedRequest("POST", "/api/claude"),
                RecordedResponse(200, headers),
                RecordedReload("/api/chat/sessions/s", 200, headers),
            )
            assert made.response.headers == (("content-type", "text/event-stream"),)
            assert made.reload is not None
            assert made.reload.headers == (("content-type", "text/event-stream"),)
            assert value not in made.dumps()
        except AssertionError as error:
            raise AssertionError(f"case {(name, value)!r}") from error


def test_a_file_holding_a_credential_header_loads_without_it() -> None:
    for name, value in FORBIDDEN:
        try:
            lines = SAMPLE.dumps().splitlines()
            response = json.loads(lines[2])
            response["headers"].append([name, value])
            lines[2] = json.dumps(response)
            loaded = Recording.loads("\n".join(lines) + "\n")
            assert name.lower() not in dict(loaded.response.headers)
            assert value not in loaded.dumps()
        except AssertionError as error:
            raise AssertionError(f"case {(name, value)!r}") from error


def test_the_repr_shows_the_shape_never_the_data() -> None:
    secret = b'{"provider":"plaid","accountId":"qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5"}'
    made = recording([secret], reload=secret)
    for shown in (repr(made), repr(made.response), repr(made.response.chunks), repr(made.reload)):
        assert "plaid" not in shown
        assert "qwp76" not in shown
    assert repr(made) == ("<Recording POST /api/claude -> 200, 1 chunks, body closed, reload 200>")


# -- bad files ------------------------------------------------------------------------------


def test_every_truncation_is_an_error_naming_a_line_or_the_same_recording() -> None:
    data = SAMPLE.dumps().encode("utf-8")
    # Only the final newline may go: that is the same recording.
    assert Recording.loads(data[:-1]) == SAMPLE
    for cut in range(len(data) - 1):
        with pytest.raises(RecordingFormatError, match=r"line \d+|truncated"):
            Recording.loads(data[:cut])


def lines_of(value: Recording = SAMPLE) -> list[str]:
    return value.dumps().splitlines()


def replaced(number: int, line: str) -> str:
    lines = lines_of()
    lines[number - 1] = line
    return "\n".join(lines) + "\n"


def test_a_bad_file_is_a_clear_error_naming_its_line() -> None:
    cases: list[tuple[str | bytes, int | None, str]] = [
        (b"", None, "truncated"),
        (replaced(1, '{"type": "recording", "format": "other", "version": 1}'), 1, "not a"),
        (
            replaced(1, '{"type": "recording", "format": "silvia-recording", "version": 2}'),
            1,
            "newer",
        ),
        (
            replaced(1, '{"type": "recording", "format": "silvia-recording", "version": "1"}'),
            1,
            "version",
        ),
        (replaced(2, '{"type": "response", "status": 200, "headers": []}'), 2, "request"),
        (replaced(3, '{"type": "response", "status": 99, "headers": []}'), 3, "status"),
        (replaced(3, '{"type": "response", "status": 200, "headers": [["a"]]}'), 3, "headers"),
        (replaced(4, '{"type": "chunk", "at": 0.1, "base64": "not base64!"}'), 4, "base64"),
        (replaced(4, '{"type": "chunk", "at": 0.1, "text": "a", "base64": "YQ=="}'), 4, "one of"),
        (replaced(4, '{"type": "chunk", "at": -1, "text": "a"}'), 4, "seconds"),
        (replaced(4, '{"type": "chunk", "at": 0.1}'), 4, "one of"),
        (replaced(4, '{"type": "mystery"}'), 4, "mystery"),
        (replaced(4, "[1, 2]"), 4, "JSON object"),
        (replaced(4, '{"type": "chunk", "at": 0.1, "text": "a"'), 4, "not a JSON line"),
        (replaced(7, '{"type": "response_end", "at": 1, "how": "exploded"}'), 7, "how"),
        (replaced(9, '{"type": "end", "lines": 4}'), 9, "corrupted"),
        ("\n".join(lines_of()) + "\n" + lines_of()[-1] + "\n", 10, "follow"),
        (SAMPLE.dumps().encode().replace(b"checking", b"check\xffng"), 2, "UTF-8"),
    ]
    for data, line, says in cases:
        try:
            with pytest.raises(RecordingFormatError) as caught:
                Recording.loads(data)
            assert caught.value.line == line
            assert says in str(caught.value)
            if line is not None:
                assert str(caught.value).startswith(f"line {line}: ")
        except AssertionError as error:
            raise AssertionError(f"case {(data, line, says)!r}") from error


def test_a_missing_closing_line_says_the_file_is_truncated() -> None:
    data = "\n".join(lines_of()[:-1]) + "\n"
    with pytest.raises(
        RecordingFormatError, match=r"ends after line 8, without its `end` line: it is truncated"
    ):
        Recording.loads(data)


def test_the_error_is_a_silvia_error_and_a_value_error_and_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(SilviaError) as caught:
        Recording.load(path)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, RecordingFormatError)
    assert caught.value.path == str(path)


def test_loading_only_reads_data(tmp_path: Path) -> None:
    # Strings that would do something if anything evaluated them stay strings.
    marker = tmp_path / "ran"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    made = Recording(
        RecordedRequest("POST", "/api/claude", {"__class__": payload}),
        RecordedResponse(200, chunks=(RecordedChunk(0.0, payload.encode()),)),
    )
    loaded = Recording.loads(made.dumps())
    assert loaded.request.body == {"__class__": payload}
    assert loaded.response.body == payload.encode()
    assert not marker.exists()
