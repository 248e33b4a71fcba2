"""Text a stream cannot carry is written escaped: a lone surrogate never crashes a command.

`silvia chat` and `session show` on a loopback server whose turn holds lone surrogates
(`_lone_surrogates.py`; `silvia qa run`'s are in tests/qa/test_cli.py), on UTF-8 and on
an ASCII stdout; then the writer itself, `cli._output`.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator

import pytest

from silvia_client._text import carried
from silvia_client.cli import main
from silvia_client.cli._output import SafeStream, writing_safely

from ._cli import run, session_of
from ._lone_surrogates import ESCAPED, TEXT, TITLE, server

TOKEN = "cli-lone-surrogate-token"


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    with server(TOKEN).serve_loopback() as url:
        yield url


def escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def test_chat_then_session_show_write_lone_surrogates_escaped(
    loopback: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(["chat", "/scenario lone-surrogates", "--base-url", loopback], capsys)
    assert status == 0
    answer, _, sources = out.partition("\n\n")
    assert answer == escaped(TEXT) + "[1]"  # the whole turn is on screen, é and emoji as is
    assert ESCAPED in answer
    assert "\\udfff" in answer
    assert "café \U0001f600" in answer
    assert f"  [1] {escaped(TITLE)} (web page)" in sources.splitlines()
    status, out, err = run(["session", "show", session_of(err), "--base-url", loopback], capsys)
    assert status == 0
    blocks = out.split("\n\n")
    assert blocks[1] == "You: /scenario lone-surrogates"
    assert blocks[2] == "Silvia: " + escaped(TEXT)
    assert f"  [1] {escaped(TITLE)} (web page)" in blocks[3].splitlines()
    assert TOKEN not in out + err

    # Under PYTHONIOENCODING=ascii an `é` cannot be written either.
    written = io.BytesIO()
    stdout = io.TextIOWrapper(written, encoding="ascii", errors="strict", write_through=True)
    monkeypatch.setattr("sys.stdout", stdout)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["chat", "/scenario lone-surrogates", "--base-url", loopback]) == 0
    answer = written.getvalue().decode("ascii").split("\n\n")[0]  # nothing but ASCII written
    assert answer == TEXT.encode("ascii", "backslashreplace").decode("ascii") + "[1]"
    assert "caf\\xe9 \\U0001f600" in answer
    assert "Traceback" not in capsys.readouterr().err


# The writer -------------------------------------------------------------------------------


def test_carried() -> None:
    for text, encoding, errors, written in [
        ("a\ud800b", "utf-8", "strict", "a\\ud800b"),
        ("café \U0001f600", "utf-8", "strict", "café \U0001f600"),  # carried: as it is
        ("café \U0001f600", "ascii", "strict", "caf\\xe9 \\U0001f600"),
        ("café", "latin-1", "strict", "café"),
        ("a\ud800b", None, None, "a\ud800b"),  # no encoding (a StringIO): anything goes
        ("\udcff", "utf-8", "surrogateescape", "\udcff"),  # the stream's handler carries it
        ("\ud800", "utf-8", "surrogateescape", "\\ud800"),  # ... but not this one
    ]:
        assert carried(text, encoding, errors) == written, (text, encoding, errors)


def test_a_safe_stream_writes_escaped_and_is_the_stream_otherwise() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    safe = SafeStream(stream)
    safe.write("é\ud800\n")
    safe.writelines(["ok", "\u2603"])
    assert raw.getvalue() == b"\\xe9\\ud800\nok\\u2603"
    assert safe.encoding == "ascii"
    assert safe.isatty() is False


def test_writing_safely_wraps_both_streams_and_puts_them_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stdout, stderr = sys.stdout, sys.stderr
    with writing_safely():
        assert isinstance(sys.stdout, SafeStream)
        assert isinstance(sys.stderr, SafeStream)
        print("out \ud800")
        print("err \udfff", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert capsys.readouterr() == ("out \\ud800\n", "err \\udfff\n")
