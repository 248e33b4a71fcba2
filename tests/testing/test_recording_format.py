"""The recording file: exact bytes; any untrusted file loads typed or is a
`RecordingFormatError` naming its line (so too in `silvia qa check` and `serve --replay`).
A header HTTP cannot carry is kept by `Recording.load`, refused by every replay that
writes it, and a finding of `qa check`.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import silvia_client.testing._recording as recording_format
from silvia_client import SilviaError
from silvia_client.cli import main
from silvia_client.qa import check_recordings
from silvia_client.qa.recorded import RECORDED_HEADERS
from silvia_client.testing import (
    IN_PROCESS_URL,
    Recording,
    RecordingFormatError,
    ReplayServer,
)

from ..client.sse import done, session
from ..depth import examples
from ..display._dom import parse
from ..qa._helpers import table
from ._helpers import SSE, made, recorded

E_ACUTE = "é".encode()  # two bytes: a chunk boundary can fall between them
SAMPLE = made(
    [b'event: text\ndata: {"text":"caf', E_ACUTE[:1], E_ACUTE[1:] + b'"}\n\n'],
    reload=b'{"session": {"id": "s"}}',
    headers=(*SSE, ("x-request-id", "req_1")),
    gap=0.001,
    message="How much is in checking?",
)
# 1 recording, 2 request, 3 response, 4-6 chunks, 7 response_end, 8 reload, 9 end.
LINES = SAMPLE.dumps().splitlines()
FIELDS = sorted((n, key) for n, line in enumerate(LINES, 1) for key in json.loads(line))
MARK = "\u0000value\u0000"


def with_field(number: int, key: str, text: str) -> str:
    """SAMPLE's file with `key` of line `number` holding the JSON text `text`."""
    lines = list(LINES)
    line = json.loads(lines[number - 1])
    line[key] = MARK
    lines[number - 1] = json.dumps(line).replace(json.dumps(MARK), text)
    return "\n".join(lines) + "\n"


HUGE = 10**400
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-HUGE, max_value=HUGE)
    | st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
    | st.text(alphabet=st.characters(), max_size=8)
    | st.sampled_from(["\ud800", "", "GET / HTTP/1.1\r\n", "x" * 40, "YQ==", "/", "closed"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
).map(json.dumps)
numbers = st.sampled_from(
    [
        "-0", "-0.0", "5e-324", "1.7e308", "1e400", "-1e400", "1e-400", "NaN", "Infinity",
        "86400", "86400.000001", "1" + "0" * 400, "-" + "9" * 400, "1" + "0" * 400 + ".5",
        "200.0", "2e2", str(2**64), '"1"',
    ]
)  # fmt: skip


@settings(max_examples=examples(600), deadline=None)
@given(field=st.sampled_from(FIELDS), text=json_values | numbers)
@example(field=(4, "text"), text='"\\ud800"')  # a lone surrogate is not UTF-8
@example(field=(2, "method"), text='"GET / HTTP/1.1\\r\\n"')
@example(field=(3, "headers"), text='[["a", 1]]')
@example(field=(4, "at"), text="1" + "0" * 400)  # once an OverflowError
@example(field=(7, "at"), text="1" + "0" * 400)
def test_any_value_in_any_field_loads_typed_or_is_an_error_naming_its_line(
    field: tuple[int, str], text: str
) -> None:
    number, key = field
    try:
        loaded = Recording.loads(with_field(number, key, text))
    except RecordingFormatError as error:
        assert str(error).startswith(f"line {number}: "), str(error)  # noqa: PT017
        assert error.line == number  # noqa: PT017
        return
    request, response, reload = loaded.request, loaded.response, loaded.reload
    assert isinstance(request.method, str)
    assert request.path.startswith("/")
    for name, header in (*response.headers, *(reload.headers if reload else ())):
        assert isinstance(name, str)
        assert isinstance(header, str)
    assert all(type(chunk.data) is bytes for chunk in response.chunks)
    assert response.end in ("ended", "closed", "disconnected", "timeout")
    assert 100 <= response.status <= 599
    for at in [chunk.at for chunk in response.chunks] + [response.ended_at or 0.0]:
        assert type(at) is float
        assert 0 <= at <= 86_400
        assert math.copysign(1, at) == 1  # -0 is read as 0
    assert type(loaded.is_redacted) is bool
    # What loads, writes back the same (compared as text: a NaN is not equal to itself).
    assert Recording.loads(loaded.dumps()).dumps() == loaded.dumps()


@given(
    chunks=st.lists(st.binary(min_size=1, max_size=40), max_size=12),
    reload=st.one_of(st.none(), st.binary(max_size=60)),
    end=st.sampled_from(["ended", "closed", "disconnected", "timeout"]),
    text=st.text(min_size=1, max_size=30),
    cut=st.integers(min_value=0, max_value=200),
)
def test_any_chunks_and_reload_round_trip_exactly(
    chunks: list[bytes], reload: bytes | None, end: str, text: str, cut: int
) -> None:
    data = text.encode()
    cut %= len(data) + 1  # UTF-8 text split anywhere
    chunks += [part for part in (data[:cut], data[cut:]) if part]
    original = made(chunks, reload=reload, end=end, gap=0.001)
    assert Recording.loads(original.dumps()) == original  # (dataclasses: every field, the bytes)


def test_the_file_is_json_lines_text_where_utf8_flagged_base64_elsewhere_the_repr_no_data(
    tmp_path: Path,
) -> None:
    path = tmp_path / "turn.jsonl"
    SAMPLE.save(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    head = lines[0]
    assert (head["type"], head["format"], head["version"]) == ("recording", "silvia-recording", 1)
    assert lines[1] == {
        "type": "request",
        "method": "POST",
        "path": "/api/claude",
        "body": {"message": "How much is in checking?"},
    }
    assert lines[2]["type"] == "response"
    assert lines[3] == {"type": "chunk", "at": 0.001, "text": 'event: text\ndata: {"text":"caf'}
    # Each half of a split character is not UTF-8 on its own: base64, flagged by its key.
    assert set(lines[4]) == set(lines[5]) == {"type", "at", "base64"}
    assert lines[-1] == {"type": "end", "lines": len(lines)}
    assert Recording.load(path) == SAMPLE
    # The repr shows the shape, never the data.
    secret = b'{"provider":"plaid","accountId":"qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5"}'
    built = made([secret], reload=secret)
    for shown in map(repr, (built, built.response, built.response.chunks, built.reload)):
        assert "plaid" not in shown
        assert "qwp76" not in shown
    assert repr(built) == "<Recording POST /api/claude -> 200, 1 chunks, body closed, reload 200>"


def replaced(number: int, line: str) -> str:
    lines = list(LINES)
    lines[number - 1] = line
    return "\n".join(lines) + "\n"


def test_a_bad_truncated_or_too_large_file_is_a_clear_error_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    head = '{"type": "recording", "format": "silvia-recording", "version": %s}'
    cases: list[tuple[str | bytes, int | None, str]] = [
        (b"", None, "truncated"),
        (replaced(1, '{"type": "recording", "format": "other", "version": 1}'), 1, "not a"),
        (replaced(1, head % "2"), 1, "newer"),
        (replaced(1, head % '"1"'), 1, "version"),
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
        (SAMPLE.dumps() + LINES[-1] + "\n", 10, "follow"),
        (SAMPLE.dumps().encode().replace(b"checking", b"check\xffng"), 2, "UTF-8"),
        (with_field(4, "text", '"\\ud800"'), 4, "`text` holds a lone surrogate"),
        (with_field(2, "method", '"GET / HTTP/1.1\\r\\nx: y"'), 2, "`method` must be an HTTP"),
        *[(with_field(4, "at", n), 4, "from 0 to 86400") for n in ("-1", "86400.5", "NaN", "true")],
    ]
    for data, line, says in cases:
        with pytest.raises(RecordingFormatError) as caught:
            Recording.loads(data)
        assert caught.value.line == line, data
        assert says in str(caught.value), data
        if line is not None:
            assert str(caught.value).startswith(f"line {line}: "), data
    # The bounds themselves load.
    for text, expected in [("0", 0.0), ("-0.0", 0.0), ("5e-324", 5e-324), ("86400", 86400.0)]:
        assert Recording.loads(with_field(4, "at", text)).response.chunks[0].at == expected
    # ... and `qa check` charts them.
    lines = recorded("accounts").dumps().splitlines()
    for at in ["0", "-0.0", "5e-324", "1e-310", "1e-7", "86400"]:
        for index, text_line in enumerate(lines):
            value = json.loads(text_line)
            if value["type"] in ("chunk", "response_end"):
                value["at"] = MARK
                lines[index] = json.dumps(value).replace(json.dumps(MARK), at)
        path, page = tmp_path / "timed.jsonl", tmp_path / "qa.html"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert main(["qa", "check", str(path), "--html", str(page)]) == 0, at
        assert "Traceback" not in capsys.readouterr().err
        root = parse(page.read_text(encoding="utf-8").removeprefix("<!doctype html>\n"))
        bars = root.find("svg").find_all("rect")
        assert bars, at
        assert all(0 < float(bar.attrs["width"] or "") <= 520 for bar in bars), at
    # Every truncation is an error naming a line, or the same recording.
    data = SAMPLE.dumps().encode("utf-8")
    assert Recording.loads(data[:-1]) == SAMPLE  # only the final newline may go
    for cut in range(len(data) - 1):
        with pytest.raises(RecordingFormatError, match=r"line \d+|truncated"):
            Recording.loads(data[:cut])
    with pytest.raises(RecordingFormatError, match=r"ends after line 8, without its `end` line"):
        Recording.loads("\n".join(LINES[:-1]) + "\n")
    # A 400-digit number is a short error naming the file, in every command too.
    path = tmp_path / "huge.jsonl"
    for number, key in [(4, "at"), (7, "at"), (1, "version"), (9, "lines"), (3, "status")]:
        path.write_text(with_field(number, key, "1" + "0" * 400), encoding="utf-8")
        with pytest.raises(RecordingFormatError) as caught:
            Recording.load(path)
        assert isinstance(caught.value, SilviaError)
        assert isinstance(caught.value, ValueError)
        assert (caught.value.line, caught.value.path) == (number, str(path))
        assert len(str(caught.value)) < 200  # the number is not printed back
        for command in (["qa", "check", str(path)], ["serve", "--replay", str(path)]):
            assert main(command) == 2, (key, command)
            out, err = capsys.readouterr()
            assert (out, "Traceback" in err) == ("", False), (key, command)
            assert f"{path}: line {number}: " in err, (key, command)
    # A body past what a client reads: the bound (the client's max_response_bytes, 64 MiB)
    # made small, as a 64 MiB file is slow.
    monkeypatch.setattr(recording_format, "MAX_BODY_BYTES", 36)
    assert Recording.loads(SAMPLE.dumps()) == SAMPLE  # 30 + 1 + 5 bytes: at the bound
    for number, text, says in [
        (6, '"bbbbbb"', "the response's chunks would hold"),  # 31 + 6: one past
        (8, json.dumps("c" * 37), "the reload's body would hold"),
    ]:
        line = json.loads(LINES[number - 1])
        line.pop("base64", None)
        line["text"] = MARK
        edited = replaced(number, json.dumps(line).replace(json.dumps(MARK), text))
        with pytest.raises(RecordingFormatError, match=f"^line {number}: {says} more than 36"):
            Recording.loads(edited)


HOSTILE = {
    "crlf": ("x-request-id", "req_1\r\nSet-Cookie: sid=stolen"),
    "lf": ("x-note", "a\nb"),
    "nul": ("x-note", "a\x00b"),
    "not-latin-1": ("x-note", "snow \u2603"),
    "latin-1": ("x-note", "caf\u00e9"),
    "c1": ("x-note", "a\x9bb"),
    "lone-surrogate": ("x-note", "a\ud800b"),
    "space-in-name": ("x note", "v"),
    "colon-in-name": ("x:note", "v"),
    "empty-name": ("", "v"),
    "crlf-in-name": ("x\r\nset-cookie", "v"),
    "long-name": ("x " * 5000, "v"),
}


@cache
def turn() -> Recording:
    return recorded("accounts")


def with_header(where: str, header: tuple[str, str]) -> tuple[str, int]:
    """The file of `turn()` with `header` added to `where`'s headers, and that line's number."""
    lines = turn().dumps().splitlines()
    number = 3 if where == "response" else len(turn().response.chunks) + 5
    value = json.loads(lines[number - 1])
    assert value["type"] == where
    value["headers"].append(list(header))
    lines[number - 1] = json.dumps(value)  # (a lone surrogate as JSON escapes it)
    return "\n".join(lines) + "\n", number


def test_a_header_http_cannot_carry_is_kept_refused_by_every_replay_and_a_qa_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    turn().save(good)
    cases = [(where, header) for header in HOSTILE.values() for where in ("response", "reload")]
    paths, lines = [], []
    for number, case in enumerate(cases):
        where, header = case
        text, line = with_header(where, header)
        path = tmp_path / f"hostile-{number}.jsonl"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
        lines.append(line)
        loaded = Recording.load(path)
        owner = loaded.response if where == "response" else loaded.reload
        assert owner is not None, case
        assert header in owner.headers, case  # kept as the file has it
        [error] = loaded.header_errors()
        assert error.line == line, case
        assert str(error).startswith(f"line {line}: "), case
        assert str(error).isascii(), case  # escaped: nothing raw
        assert str(error).isprintable(), case
        assert len(str(error)) < 300, case  # a long name is cut
        for replay in (loaded.client, loaded.async_client, lambda: ReplayServer({"h": loaded})):  # noqa: B023
            with pytest.raises(RecordingFormatError) as caught:
                replay()
            assert caught.value.line == line, case
        with pytest.raises(RecordingFormatError) as caught:
            ReplayServer.from_files([str(path)])
        assert (caught.value.line, caught.value.path) == (line, str(path)), case

    # qa check judges every turn and reports each header as an error finding (hostile
    # headers in well-formed reports: tests/cli/test_hostile.py).
    report = tmp_path / "qa.json"
    assert main(["qa", "check", str(good), *paths, "--wide", "--json", str(report)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    rows = table(out)
    assert rows[RECORDED_HEADERS.id] == ["pass"] + ["FAIL"] * len(cases)
    assert rows["stream-complete"] == ["pass"] * (len(cases) + 1)  # the turns were judged
    assert rows["target-parses"] == ["pass"] * (len(cases) + 1)
    assert "\r" not in out  # (the request id holding it is shown escaped)
    prompts = json.loads(report.read_text(encoding="utf-8"))["prompts"][1:]
    for prompt, line, case in zip(prompts, lines, cases, strict=True):
        assert f"line {line}: " in out, case
        [finding] = prompt["findings"]
        assert finding["rule"] == RECORDED_HEADERS.id, case
        assert finding["evidence"] == {"line": line}, case
    assert prompts[0]["findings"][0]["message"].startswith(
        f"line {lines[0]}: the value of the response header x-request-id"  # HOSTILE["crlf"]
    )
    # The row comes last, and only when a recording needs it.
    assert list(rows)[-1] == RECORDED_HEADERS.id
    clean = check_recordings([("good", turn())])
    assert RECORDED_HEADERS.id not in {rule.id for rule in clean.rules}
    # In-process a kept header goes unsplit; on a socket its whitespace is trimmed.
    loaded = Recording.loads(with_header("response", HOSTILE["crlf"])[0])
    with httpx.Client(transport=loaded.transport(), base_url=IN_PROCESS_URL) as http:
        response = http.post("/api/claude", json={"message": "hi"})
    assert "set-cookie" not in response.headers
    assert (b"x-request-id", b"req_1\r\nSet-Cookie: sid=stolen") in response.headers.raw
    for kind in ("not-latin-1", "lone-surrogate"):
        loaded = Recording.loads(with_header("response", HOSTILE[kind])[0])
        with httpx.Client(transport=loaded.transport(), base_url=IN_PROCESS_URL) as http:
            assert http.post("/api/claude", json={}).status_code == 200
    # Whitespace around a value is dropped, inside kept (in-process: the property below).
    spaced = (("content-type", " text/event-stream\t "), ("x-note", "a \t b"), ("x-empty", ""))
    recording = plain(spaced)
    assert recording.header_errors() == ()
    with recording.client() as client:
        assert client.chat.send("hi").session_id == "s"
    with ReplayServer({"spaced": recording}).serve_loopback() as url:
        live = httpx.post(f"{url}/api/claude", json={}, headers={"authorization": "Bearer t"})
    assert live.headers["content-type"] == "text/event-stream"
    assert live.headers["x-note"] == "a \t b"
    assert live.headers["x-empty"] == ""


def plain(headers: tuple[tuple[str, str], ...]) -> Recording:
    return made([session("s") + done()], headers=headers, reload=b"{}", reload_headers=headers)


VISIBLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.text(max_size=6) | st.sampled_from(["x-a", "X-Tok!#$%&'*+-.^_`|~9"]),
    value=st.text(max_size=10) | st.text(VISIBLE, max_size=10),
)
@example(name="x-note", value=" a \t b\t")  # dropped around, kept inside
@example(name="content-type", value=" text/event-stream\t ")
@example(name="x-empty", value="")
def test_any_header_is_refused_or_written_as_http_allows(name: str, value: str) -> None:
    recording = plain(((name, value),))
    errors = recording.header_errors()
    if errors:
        assert {error.line for error in errors} <= {3, 5 + len(recording.response.chunks)}
        with pytest.raises(RecordingFormatError):
            recording.client()
        return
    lowered = name.lower()
    assert lowered
    assert all(c.isascii() and (c.isalnum() or c in "!#$%&'*+-.^_`|~") for c in lowered)
    written = value.strip(" \t")
    assert all(" " <= c <= "~" or c == "\t" for c in written)
    ReplayServer({"any": recording})  # accepted
    with httpx.Client(transport=recording.transport(), base_url=IN_PROCESS_URL) as http:
        assert http.post("/api/claude", json={}).headers[lowered] == written
