"""Whatever a server sends, the commands show no token and no raw control.

`PAYLOAD` in every field a server controls, through `chat`, `session show`, `qa run` and `qa
check`: no raw control but newline and tab (`RAW`) reaches stdout, stderr or a report. Text a
stream cannot carry (`LONE`, `MISFIT`: lone surrogates) is written escaped, never a crash."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from silvia_client._wire import WireFormat
from silvia_client.cli import main
from silvia_client.cli._output import SafeStream, writing_safely
from silvia_client.testing import (
    Cite,
    HttpError,
    ReferenceServer,
    Say,
    Scenario,
    SearchWeb,
    SendError,
    SendUnknown,
    WebResult,
)
from silvia_client.testing._broken import Breakage, _retarget
from silvia_client.testing._steps import Event, Step
from silvia_client.testing._turn import PlayedTurn, TextDelta, WireCitation

from ..hostile import SSE, Connection, HostileServer, Request, chunk, event, head, response
from ..qa._helpers import cases, table
from ._cli import run, session_of

TOKEN = "cli-hostile-output-token"
PAYLOAD = (
    "\x1b]0;pwned\x07\x1b[2J\x9b31m\x7f\x00\u202eevil\u202c\u2066x\u2069"
    "\ud800\ufffe\uffff\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
)
# What a user may send (it becomes the session's title): no lone surrogate, which
# the client refuses to encode.
SENT = PAYLOAD.replace("\ud800", "")
URL = "https://example.com/rates"
LONE_PROMPTS = [("lone", "lone-surrogates"), ("misfit", "lone-surrogates-misfit")]
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

TITLE = "Rates \ud800 today"
TEXT = "Half \ud800 of a pair, \udfff alone, caf\u00e9 \U0001f600"
ESCAPED = "\\ud800"  # how a lone surrogate is written to a stream that cannot carry it

_SCRIPT = (
    SearchWeb(
        query="rates", results=(WebResult(title=TITLE, text="Rates eased \ud800.", url=URL),)
    ),
    Say(TEXT),
    Cite(URL),
)


def _in_source(turn: PlayedTurn) -> PlayedTurn:
    """Each citation's source, streamed and summarised, holds the payload."""

    def fix(row: WireCitation) -> WireCitation:
        return {**row, "source": f"{row.get('source')}#{PAYLOAD}"}

    stream = tuple(item if isinstance(item, TextDelta) else fix(item) for item in turn.stream)
    return replace(turn, stream=stream, summary=tuple(map(fix, turn.summary)))


def _in_session(steps: list[Step], wire: WireFormat) -> list[Step]:
    """The session id holds the payload."""
    for index, step in enumerate(steps):
        if isinstance(step, Event) and step.name == wire.events.session:
            data = dict(step.data)  # type: ignore[call-overload]
            steps[index] = replace(step, data={**data, wire.session_id_key: f"sess_{PAYLOAD}"})
    return steps


LONE = Scenario("lone-surrogates", "Text and a title holding lone surrogates.", script=_SCRIPT)
MISFIT = Scenario(
    "lone-surrogates-misfit",
    "Lone surrogates, and a citation whose target does not fit its source.",
    script=_SCRIPT,
    rewrite=Breakage(on_turn=_retarget({URL: {"kind": "market_data", "ticker": "X\ud800"}})),
)


_WEB = (
    SearchWeb(query=PAYLOAD, results=(WebResult(title=PAYLOAD, text=PAYLOAD, url=URL),)),
    Say(PAYLOAD),
    Cite(URL),
)
SCENARIOS = tuple(
    Scenario(name, f"The payload in {where}.", script=_WEB, **how)  # type: ignore[arg-type]
    for name, where, how in [
        ("hostile-text", "text, title, quote and source", {"rewrite": Breakage(_in_source)}),
        ("hostile-session", "the session id", {"rewrite": Breakage(_in_source, _in_session)}),
        ("hostile-events", "an unknown event and an error event",
         {"fault": SendError(error_type=PAYLOAD, message=PAYLOAD, after_events=3)}),
        ("hostile-unknown", "an unknown event's name and data",
         {"fault": SendUnknown(event=f"x{PAYLOAD}".replace("\x00", ""), data={PAYLOAD: PAYLOAD})}),
        ("hostile-status", "an HTTP error", {"fault": HttpError(400, PAYLOAD, PAYLOAD)}),
    ]
)  # fmt: skip


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    server = ReferenceServer(token=TOKEN)
    for scenario in (LONE, MISFIT, *SCENARIOS):
        server.register(scenario)
    with server.serve_loopback() as url:
        yield url


def _clean(stream: str, where: str) -> None:
    found = RAW.findall(stream)
    assert not found, f"{where} holds raw {sorted(set(found))!r}"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    _clean(out, f"stdout of {argv[:2]}")
    _clean(err, f"stderr of {argv[:2]}")
    assert "internal error" not in err
    return status, out, err


def test_chat_then_session_show_write_no_raw_control(
    loopback: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for scenario in SCENARIOS[1:]:  # their lines are checked by `_run`; the first, below
        _run(["chat", f"/scenario {scenario.name} {SENT}", "--base-url", loopback], capsys)
    status, out, err = _run(
        ["chat", f"/scenario hostile-text {SENT}", "--base-url", loopback], capsys
    )
    assert status == 0
    assert "\\x1b]0;pwned\\x07" in out  # shown, escaped, not obeyed
    status, out, err = _run(["session", "show", session_of(err), "--base-url", loopback], capsys)
    assert status == 0
    assert "\\x1b[2J" in out


def _check_reports(junit: Path, report: Path, page: Path) -> None:
    for path in (junit, report, page):
        text = path.read_bytes().decode("utf-8")  # strict: no lone surrogate
        _clean(text, path.name)
        numbers = [int(number) for number in re.findall(r"&#(\d+);", text)]
        assert not [n for n in numbers if 0xD800 <= n <= 0xDFFF], path.name  # XML 1.0 refuses
    assert cases(junit)  # well-formed, with its cases
    assert json.loads(report.read_text(encoding="utf-8"))["prompts"]
    assert "<html" in page.read_text(encoding="utf-8")


def test_qa_run_and_qa_check_write_no_raw_control(
    loopback: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = [
        {"id": s.name, "message": f"{SENT} hi", "scenario": s.name, "expect": {"complete": True}}
        for s in SCENARIOS
    ]
    # Lone surrogates keep a turn's status (lone) and its finding's words (misfit).
    prompts += [
        {"id": n, "message": "Rates?", "scenario": s, "expect": {"complete": True}}
        for n, s in LONE_PROMPTS
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"name": PAYLOAD, "prompts": prompts}), encoding="utf-8")
    junit, report, page = tmp_path / "r.xml", tmp_path / "r.json", tmp_path / "r.html"
    recorded = tmp_path / "rec"
    argv = ["qa", "run", str(script), "--base-url", loopback, "--record", str(recorded)]
    status, out, err = _run(
        [*argv, "--junit", str(junit), "--json", str(report), "--html", str(page)], capsys
    )
    assert status == 1
    assert "\\x1b" in out
    _check_reports(junit, report, page)
    lone, misfit = (len(prompts) - 2, len(prompts) - 1)
    assert {row[lone] for row in table(out).values()} == {"pass"}
    assert table(out)["target-fits-source"][misfit] == "FAIL"
    (finding,) = [line for line in out.splitlines() if "[misfit]" in line]
    assert finding.startswith("FAIL  target-fits-source  [misfit]  https://example.com/rates: ")
    assert f"`market_data` (X{ESCAPED})" in finding
    assert f"[{len(prompts)}/{len(prompts)}] misfit: FAIL (1 error(s), 0 warning(s))" in err

    # A recording holding the payload where only a recording can: the request id and
    # a header value (HTTP could not carry them), and the event names as recorded.
    files = sorted(recorded.glob("*.jsonl"))
    assert files
    edited = tmp_path / "edited.jsonl"
    lines = files[0].read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        item = json.loads(line)
        if item["type"] == "response":
            item["headers"] = [
                [name, PAYLOAD if name == "x-request-id" else value]
                for name, value in item["headers"]
            ] + [["x-hostile", PAYLOAD]]
            lines[index] = json.dumps(item)
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    junit, report, page = (tmp_path / "c.xml", tmp_path / "c.json", tmp_path / "c.html")
    reports = ["--junit", str(junit), "--json", str(report), "--html", str(page)]
    status, out, _ = _run(["qa", "check", *map(str, files), str(edited), *reports], capsys)
    assert status in (0, 1)
    _check_reports(junit, report, page)


ECHOED = "sk-cli-hostile-0123456789-SECRET"
ECHO = {"x-request-id": ECHOED}
JSON = {"content-type": "application/json"}
HTML = response(200, f"<p>{ECHOED}</p>".encode(), {"content-type": "text/html", **ECHO})


def answering(answers: list[bytes]) -> HostileServer:
    """A server that sends the last of `answers` (a list the test appends to) to each request."""

    def respond(request: Request, connection: Connection) -> None:
        connection.send(answers[-1])
        connection.sock.close()

    return HostileServer(respond)


def stream(*events: bytes) -> bytes:
    body = b"".join(chunk(e) for e in events) + chunk(b"")
    return head(200, {**SSE, **ECHO}, chunked=True) + body


DONE = stream(
    event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"}), event("done", {})
)
# An error event and a 401 echoing it through `silvia chat`: tests/e2e/test_hostile_faults.py.
CASES = {
    ("chat", "no-done"): stream(
        event("session", {"sessionId": "s1"}), event("text", {"text": "Hi"})
    ),
    ("chat", "500-reason"): response(500, b"", ECHO, reason=f"Broken {ECHOED}"),
    ("chat", "200-html"): HTML,
    ("chat", "done"): DONE,
    ("session show", "200-html"): HTML,
    ("session show", "200-not-a-session"): response(
        200, json.dumps({"messages": ECHOED}).encode(), {**JSON, **ECHO}
    ),
    ("session show", "404"): response(
        404, json.dumps({"error": f"no such session {ECHOED}"}).encode(), {**JSON, **ECHO}
    ),
}
ARGV = {"chat": ["chat", "hi"], "session show": ["session", "show", "s1"]}


def test_no_answer_of_the_server_nor_a_bad_token_makes_a_command_print_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", ECHOED)
    monkeypatch.setenv("NO_COLOR", "1")
    answers = [DONE]
    with answering(answers) as server:
        for (command, name), answer in CASES.items():
            answers.append(answer)
            status, out, err = run([*ARGV[command], "--base-url", server.url], capsys)
            assert status == (0 if name == "done" else 1), (command, name, err)
            assert ECHOED not in out + err, (command, name)
            if name != "done":
                assert f"silvia {command}:" in err  # the error was printed, blanked
            if command == "session show":
                assert "<token>" in err, (command, name)
    # A token no header can carry. (A URL holding a password: test_chat.py and test_serve.py.)
    monkeypatch.setenv("SILVIA_TOKEN", ECHOED + "\n")
    for argv in ARGV.values():
        status, out, err = run([*argv, "--base-url", "http://127.0.0.1:9"], capsys)
        assert status == 1
        assert "SILVIA_TOKEN" in err
        assert ECHOED not in out + err


def escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def test_chat_writes_lone_surrogates_escaped_and_the_rest_as_is(
    loopback: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # (`session show` writes through the same stream: the payload's test above.)
    status, out, err = run(["chat", "/scenario lone-surrogates", "--base-url", loopback], capsys)
    assert status == 0
    answer, _, sources = out.partition("\n\n")
    assert answer == escaped(TEXT) + "[1]"  # the whole turn is on screen, é and emoji as is
    assert f"  [1] {escaped(TITLE)} (web page)" in sources.splitlines()
    assert TOKEN not in out + err


# The writer -------------------------------------------------------------------------------


def test_the_writer_escapes_what_a_stream_cannot_carry(capsys: pytest.CaptureFixture[str]) -> None:
    stdout, stderr = sys.stdout, sys.stderr
    with writing_safely():
        assert isinstance(sys.stdout, SafeStream)
        assert isinstance(sys.stderr, SafeStream)
        print("out \ud800")
        print("err \udfff", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert capsys.readouterr() == ("out \\ud800\n", "err \\udfff\n")
    # Under PYTHONIOENCODING=ascii an `é` cannot be written either. (What `carried` writes
    # for each encoding: tests/test_text.py.)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    safe = SafeStream(stream)
    safe.write("é\ud800\n")
    safe.writelines(["ok", "\u2603"])
    assert raw.getvalue() == b"\\xe9\\ud800\nok\\u2603"
    assert safe.encoding == "ascii"
    assert safe.isatty() is False
