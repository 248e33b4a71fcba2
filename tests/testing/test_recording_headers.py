"""Recorded headers HTTP cannot carry: kept by `load`, refused by every replay that writes them.

A name must be an RFC 9110 token, a value visible ASCII (a CR LF would split the
response on a socket). Each hostile header, in the response and in the reload:
`Recording.load` keeps it; `client()`, `async_client()`, `ReplayServer` and
`silvia serve --replay` refuse it naming its line; `silvia qa check` judges the
turn and reports the header as a finding.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from functools import cache
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silvia_client.cli import main
from silvia_client.qa import check_recordings
from silvia_client.qa.recorded import RECORDED_HEADERS
from silvia_client.testing import (
    IN_PROCESS_URL,
    Recording,
    RecordingFormatError,
    ReplayServer,
)

from ..depth import examples
from ..display._dom import parse
from ..qa._helpers import table
from ._helpers import made, recorded

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


def test_load_keeps_it_and_every_replay_that_writes_refuses_it_naming_the_line(
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

        assert main(["serve", "--replay", str(path), "--port", "0"]) == 2, case
        out, err = capsys.readouterr()
        assert out == "", case
        assert err.startswith(f"silvia serve: {path}: line {line}: "), case
        assert err.count("\n") == 1, case
        assert "stolen" not in err, case

    # qa check judges every turn and reports each header as an error finding.
    junit, report, page = tmp_path / "qa.xml", tmp_path / "qa.json", tmp_path / "qa.html"
    args = [
        "qa",
        "check",
        str(good),
        *paths,
        "--wide",
        "--junit",
        str(junit),
        "--json",
        str(report),
    ]
    assert main([*args, "--html", str(page)]) == 1
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
    ET.parse(junit)  # well-formed
    parse(page.read_text(encoding="utf-8").removeprefix("<!doctype html>\n"))


def test_check_recordings_adds_the_row_only_when_a_recording_needs_it() -> None:
    text, line = with_header("response", HOSTILE["crlf"])
    clean = check_recordings([("good", turn())])
    assert RECORDED_HEADERS.id not in {rule.id for rule in clean.rules}
    run = check_recordings([("good", turn()), ("bad", Recording.loads(text))])
    assert run.rules[-1].id == RECORDED_HEADERS.id
    good, bad = run.prompts
    assert good.result.outcome(RECORDED_HEADERS.id).status == "pass"
    assert bad.result.outcome(RECORDED_HEADERS.id).status == "fail"
    [finding] = bad.result.outcome(RECORDED_HEADERS.id).findings
    assert finding.message.startswith(f"line {line}: the value of the response header x-request-id")


def test_the_in_process_transport_hands_it_over_without_splitting_it() -> None:
    loaded = Recording.loads(with_header("response", HOSTILE["crlf"])[0])
    with httpx.Client(transport=loaded.transport(), base_url=IN_PROCESS_URL) as http:
        response = http.post("/api/claude", json={"message": "hi"})
    assert "set-cookie" not in response.headers
    assert (b"x-request-id", b"req_1\r\nSet-Cookie: sid=stolen") in response.headers.raw
    for case in ("not-latin-1", "lone-surrogate"):
        loaded = Recording.loads(with_header("response", HOSTILE[case])[0])
        with httpx.Client(transport=loaded.transport(), base_url=IN_PROCESS_URL) as http:
            assert http.post("/api/claude", json={}).status_code == 200


# -- what a replay does write ------------------------------------------------------------------


def plain(headers: tuple[tuple[str, str], ...]) -> Recording:
    body = b'event: session\ndata: {"sessionId":"s"}\n\nevent: done\ndata: {}\n\n'
    built = made([body], headers=headers, reload=b"{}")
    assert built.reload is not None
    return Recording(built.request, built.response, replace(built.reload, headers=headers))


SPACED = (("content-type", " text/event-stream\t "), ("x-note", "a \t b"), ("x-empty", ""))


def test_leading_and_trailing_whitespace_is_dropped_inside_is_kept() -> None:
    recording = plain(SPACED)
    assert recording.header_errors() == ()
    with httpx.Client(transport=recording.transport(), base_url=IN_PROCESS_URL) as http:
        response = http.post("/api/claude", json={"message": "hi"})
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-note"] == "a \t b"
    with recording.client() as client:
        assert client.chat.send("hi").session_id == "s"
    server = ReplayServer({"spaced": recording})
    with server.serve_loopback() as url:
        live = httpx.post(f"{url}/api/claude", json={}, headers={"authorization": "Bearer t"})
    assert live.headers["content-type"] == "text/event-stream"
    assert live.headers["x-note"] == "a \t b"
    assert live.headers["x-empty"] == ""


VISIBLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.text(max_size=6) | st.sampled_from(["x-a", "X-Tok!#$%&'*+-.^_`|~9"]),
    value=st.text(max_size=10) | st.text(VISIBLE, max_size=10),
)
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
