"""Every number of a recording is bounded: a recording, or a `RecordingFormatError` with its line.

A recording is untrusted input. Each number field (`version`, `status` of the
response and of the reload, each chunk's `at`, the body's end `at`, `lines`)
is fed any JSON number: integers of any size (400 digits included), floats
huge, subnormal, ±0, infinite (`1e400`, `Infinity`), NaN, negative, and
non-numbers. Loading either gives a recording whose times are finite, from 0 to
a day, or a `RecordingFormatError` naming that field's line; never an
`OverflowError` or any other exception. What loads replays and is checked by
`silvia qa check`, `--html` included, and `silvia serve --replay` refuses the
rest naming the line.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from silvia_client.cli import main
from silvia_client.qa import check_recordings
from silvia_client.qa._html import html_report
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_HEADER,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
    RecordingFormatError,
    ReferenceServer,
    record_turn,
)

from ..depth import examples
from ..display._dom import parse

BODY = [
    b'event: session\ndata: {"sessionId":"sess_n"}\n\n',
    b'event: text\ndata: {"text":"Hello"}\n\n',
    b"event: done\ndata: {}\n\n",
]
SAMPLE = Recording(
    RecordedRequest("POST", "/api/claude", {"message": "hi"}),
    RecordedResponse(
        200,
        (("content-type", "text/event-stream"),),
        tuple(RecordedChunk(0.001 * (i + 1), data) for i, data in enumerate(BODY)),
        "closed",
        0.01,
    ),
    RecordedReload("/api/chat/sessions/sess_n", 200, (), b'{"session":{"id":"sess_n"}}'),
)
# The file: 1 recording, 2 request, 3 response, 4-6 chunks, 7 response_end, 8 reload, 9 end.
FIELDS = {
    "version": (1, "version"),
    "status": (3, "status"),
    "at": (4, "at"),
    "last-at": (6, "at"),
    "end-at": (7, "at"),
    "reload-status": (8, "status"),
    "lines": (9, "lines"),
}
MARK = "\u0000number\u0000"


def with_number(field: str, number: str) -> tuple[str, int]:
    """SAMPLE's file with `field` holding the JSON text `number`, and that field's line."""
    line, key = FIELDS[field]
    lines = SAMPLE.dumps().splitlines()
    value = json.loads(lines[line - 1])
    assert key in value
    value[key] = MARK
    lines[line - 1] = json.dumps(value).replace(json.dumps(MARK), number)
    return "\n".join(lines) + "\n", line


def json_number(value: object) -> str:
    return json.dumps(value)  # NaN, Infinity and -Infinity as Python's json writes them


HUGE = 10**400
numbers = st.one_of(
    st.integers().map(json_number),
    st.integers(min_value=-HUGE, max_value=HUGE).map(json_number),
    st.sampled_from([HUGE, -HUGE, 2**53, 2**53 + 1, 2**64, 86_400, 86_401]).map(json_number),
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True).map(json_number),
    st.sampled_from(
        [
            "0", "-0", "0.0", "-0.0", "5e-324", "-5e-324", "1.7e308", "-1.7e308", "1e400",
            "-1e400", "1e-400", "NaN", "Infinity", "-Infinity", "86400", "86400.0",
            "86400.000001", "1" + "0" * 400, "-" + "9" * 400, "1" + "0" * 400 + ".5",
            "200.0", "2e2", "true", "false", "null", '"1"', "[1]", "{}",
        ]
    ),
)  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(field=st.sampled_from(sorted(FIELDS)), number=numbers)
@example(field="at", number="1" + "0" * 400)  # the OverflowError of the issue
@example(field="end-at", number="1" + "0" * 400)
def test_any_number_loads_in_bounds_or_is_an_error_naming_its_line(field: str, number: str) -> None:
    text, line = with_number(field, number)
    try:
        loaded = Recording.loads(text)
    except RecordingFormatError as error:
        failed: RecordingFormatError | None = error
    else:
        failed = None
    if failed is not None:
        assert failed.line == line, str(failed)
        assert str(failed).startswith(f"line {line}: ")
        return
    response = loaded.response
    times = [chunk.at for chunk in response.chunks]
    if response.ended_at is not None:
        times.append(response.ended_at)
    for at in times:
        assert type(at) is float
        assert math.isfinite(at)
        assert 0 <= at <= 86_400
        assert math.copysign(1, at) == 1  # -0 is read as 0
    assert 100 <= response.status <= 599
    assert Recording.loads(loaded.dumps()) == loaded  # what loads, writes back the same


def test_a_400_digit_integer_is_a_clear_error_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for field in ["at", "end-at", "version", "lines", "status"]:
        try:
            text, line = with_number(field, "1" + "0" * 400)
            path = tmp_path / "huge.jsonl"
            path.write_text(text, encoding="utf-8")
            with pytest.raises(RecordingFormatError) as caught:
                Recording.load(path)
            assert (caught.value.line, caught.value.path) == (line, str(path))
            assert len(str(caught.value)) < 200  # the number is not printed back
            for command in (["qa", "check", str(path)], ["serve", "--replay", str(path)]):
                status = main(command)
                out, err = capsys.readouterr()
                assert status == 2
                assert out == ""
                assert f"{path}: line {line}: " in err
                assert "Traceback" not in err
        except AssertionError as error:
            raise AssertionError(f"case {(field,)!r}") from error


def test_a_time_out_of_bounds_says_the_bounds() -> None:
    for number, says in [
        ("-1", "from 0 to 86400"),
        ("86400.5", "from 0 to 86400"),
        ("NaN", "from 0 to 86400"),
        ("Infinity", "from 0 to 86400"),
        ("1e400", "from 0 to 86400"),
        ("true", "from 0 to 86400"),
    ]:
        try:
            text, line = with_number("at", number)
            with pytest.raises(RecordingFormatError, match=f"^line {line}: `at` must be .*{says}"):
                Recording.loads(text)
        except AssertionError as error:
            raise AssertionError(f"case {(number, says)!r}") from error


def test_the_bounds_themselves_load() -> None:
    for number, expected in [("0", 0.0), ("-0.0", 0.0), ("5e-324", 5e-324), ("86400", 86400.0)]:
        loaded = Recording.loads(with_number("at", number)[0])
        assert loaded.response.chunks[0].at == expected


@cache
def turn() -> Recording:
    """A whole recorded turn that keeps every rule (the reference server's `accounts`)."""
    return record_turn(
        "How are my accounts?",
        transport=ReferenceServer().transport(),
        base_url=IN_PROCESS_URL,
        token="t",
        default_headers={SCENARIO_HEADER: "accounts"},
    )


def timed(at: float) -> Recording:
    """`turn()` with every chunk, and the end, at `at` seconds."""
    recorded = turn()
    response = recorded.response
    chunks = tuple(RecordedChunk(at, chunk.data) for chunk in response.chunks)
    timed = RecordedResponse(response.status, response.headers, chunks, response.end, at)
    return Recording(recorded.request, timed, recorded.reload)


@settings(max_examples=examples(40), deadline=None)
@given(
    at=st.one_of(
        st.sampled_from([0.0, 5e-324, 1e-310, 1e-7, 86_400.0]),
        st.floats(min_value=0, max_value=86_400, allow_subnormal=True),
    )
)
def test_any_time_that_loads_is_checked_and_charted(at: float) -> None:
    recording = Recording.loads(timed(at).dumps())
    run = check_recordings([("timed", recording)])
    assert run.prompts[0].result.ok
    root = parse(html_report(run).removeprefix("<!doctype html>\n"))
    bars = root.find("svg").find_all("rect")
    assert bars
    assert all(0 < float(bar.attrs["width"] or "") <= 520 for bar in bars)


def test_qa_check_html_charts_all_zero_and_tiny_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for at in ["0", "0.0", "5e-324", "86400"]:
        try:
            lines = timed(0.0).dumps().splitlines()
            for index, line in enumerate(lines):
                value = json.loads(line)
                if value["type"] in ("chunk", "response_end"):
                    value["at"] = MARK
                    lines[index] = json.dumps(value).replace(json.dumps(MARK), at)
            path, page = tmp_path / "zero.jsonl", tmp_path / "qa.html"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            status = main(["qa", "check", str(path), "--html", str(page)])
            out, err = capsys.readouterr()
            assert status == 0, out + err
            assert "Traceback" not in err
            root = parse(page.read_text(encoding="utf-8").removeprefix("<!doctype html>\n"))
            assert root.find("svg").find_all("rect")
        except AssertionError as error:
            raise AssertionError(f"case {(at,)!r}") from error
