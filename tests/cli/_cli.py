"""What the command line's tests share: a clean environment, a loopback server, `run`, `Tty`.

`run(argv, capsys)` is `silvia ARGV` in-process through `cli.main`, with what it
wrote; a subprocess only where the process itself is what is tested (the entry
point, Ctrl-C, a pty, a closed pipe, `silvia serve`). `conftest.py` holds the fixtures.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.chat import Turn
from silvia_client.cli import main
from silvia_client.display import marked_segments, number_sources
from silvia_client.testing import IN_PROCESS_URL, ReferenceServer

TOKEN = "cli-s3cret-token-0123456789"
VENDORS = ("plaid", "snaptrade")
CHECKING = "/accounts/vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"


@pytest.fixture(autouse=True)
def _no_silvia_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SILVIA_BASE_URL", "SILVIA_TOKEN", "SILVIA_WEB_URL", "SILVIA_DEBUG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    """A reference server on 127.0.0.1 that takes `TOKEN` only."""
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


class Tty(io.StringIO):
    """A stream that says it is a terminal: one written to, or lines typed then Ctrl-D."""

    def isatty(self) -> bool:
        return True


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`silvia ARGV` in-process: (status, stdout, stderr); argparse's exit is a status too."""
    try:
        status = main(argv)
    except SystemExit as exit:
        status = int(exit.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def private(*outputs: str) -> bool:
    """Neither the token nor a provider's name in any of `outputs`."""
    text = "".join(outputs)
    return TOKEN not in text and not any(vendor in text.lower() for vendor in VENDORS)


def session_of(err: str) -> str:
    """The session id `silvia chat` says how to continue."""
    found = re.search(r"continue it with --session (\S+)", err)
    assert found, err
    return found.group(1)


def reference_turn(message: str) -> Turn:
    """The turn the embedded server plays for `message`, read with the SDK directly."""
    with (
        httpx.Client(transport=ReferenceServer().transport()) as http,
        SilviaClient(base_url=IN_PROCESS_URL, token="t", http_client=http) as client,
        client.chat.stream(message) as stream,
    ):
        return stream.until_done()


def with_markers(turn: Turn) -> str:
    """The answer with `[n]` where each source was cited, as the core's views place them."""
    numbers = number_sources(turn.inline_citations)
    marked = marked_segments(turn.text, turn.inline_citations, numbers)
    return "".join(piece + "".join(f"[{n}]" for n in marks) for piece, marks in marked)
