"""What the command line's tests share: a clean environment, a loopback server, `run`.

`run(argv, capsys)` is `silvia ARGV` in-process through `cli.main`, with what it
wrote; a subprocess only where the process itself is what is tested (the entry
point, Ctrl-C, a pty, a closed pipe, `silvia serve`). `conftest.py` holds the fixtures.

Lone surrogates: `{"text": "\\ud800"}` is valid JSON, which `json.loads` reads as a lone
surrogate, which no UTF-8 stream can write; the commands must write it escaped (`ESCAPED`),
never crash. `LONE` is a turn whose answer text and web result's title hold them (with an
`é` and an emoji, which UTF-8 carries but ASCII does not); `MISFIT` the same turn, its web
citation given a `market_data` target with one in the ticker, so that `silvia qa` finds it
(target-fits-source) and its finding quotes the source and the ticker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client._wire import WireFormat
from silvia_client.chat import Turn
from silvia_client.cli import main
from silvia_client.testing import (
    IN_PROCESS_URL,
    Cite,
    ReferenceServer,
    Say,
    Scenario,
    SearchWeb,
    WebResult,
)
from silvia_client.testing._steps import Step
from silvia_client.testing._turn import PlayedTurn, TextDelta, WireCitation

TOKEN = "cli-s3cret-token-0123456789"
VENDORS = ("plaid", "snaptrade")
CHECKING = "/accounts/vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"


@pytest.fixture(autouse=True)
def _no_silvia_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SILVIA_BASE_URL", "SILVIA_TOKEN", "SILVIA_DEBUG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    """A reference server on 127.0.0.1 that takes `TOKEN` only."""
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


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
    """The answer with `[n]` where each citation streamed in (one per source at a place)."""
    numbers: dict[str, int] = {}
    inserts: dict[int, list[int]] = {}
    for citation in turn.inline_citations:
        number = numbers.setdefault(citation.source, len(numbers) + 1)
        assert citation.offset is not None
        here = inserts.setdefault(citation.offset, [])
        if number not in here:
            here.append(number)
    out, start = [], 0
    for offset in sorted(inserts):
        out.append(turn.text[start:offset] + "".join(f"[{n}]" for n in inserts[offset]))
        start = offset
    return "".join(out) + turn.text[start:]


URL = "https://example.com/rates"
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


class _Misfit:
    """The web citation, streamed and summarised, carries a `market_data` target."""

    def turn(self, turn: PlayedTurn) -> PlayedTurn:
        def fix(citation: WireCitation) -> WireCitation:
            if citation.get("source") != URL:
                return citation
            return {**citation, "target": {"kind": "market_data", "ticker": "X\ud800"}}

        stream = tuple(item if isinstance(item, TextDelta) else fix(item) for item in turn.stream)
        return replace(turn, stream=stream, summary=tuple(map(fix, turn.summary)))

    def steps(self, steps: list[Step], wire: WireFormat) -> list[Step]:
        return steps


LONE = Scenario("lone-surrogates", "Text and a title holding lone surrogates.", script=_SCRIPT)
MISFIT = Scenario(
    "lone-surrogates-misfit",
    "Lone surrogates, and a citation whose target does not fit its source.",
    script=_SCRIPT,
    rewrite=_Misfit(),
)


def lone_surrogates_server(token: str) -> ReferenceServer:
    """A reference server that requires `token` and plays `LONE` and `MISFIT`."""
    reference = ReferenceServer(token=token)
    reference.register(LONE)
    reference.register(MISFIT)
    return reference
