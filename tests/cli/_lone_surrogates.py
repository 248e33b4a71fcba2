"""A reference server whose turns hold lone surrogates, for the command line's tests.

`{"text": "\\ud800"}` is valid JSON, and `json.loads` reads it as a lone
surrogate, which no UTF-8 stream can write. The reference server streams such
text escaped (`\\udXXX`), as a JSON server does; the commands must write it
escaped, never crash.

- `LONE`: a turn whose answer text and whose web result's title hold lone
  surrogates (with an `é` and an emoji, which UTF-8 carries but ASCII does not).
- `MISFIT`: the same turn, its web citation given a `market_data` target with a
  lone surrogate in the ticker, so `silvia qa` finds it (target-fits-source)
  and its finding quotes the source and the ticker.
"""

from __future__ import annotations

from dataclasses import replace

from silvia_client._wire import WireFormat
from silvia_client.testing import Cite, ReferenceServer, Say, Scenario, SearchWeb, WebResult
from silvia_client.testing._steps import Step
from silvia_client.testing._turn import PlayedTurn, TextDelta, WireCitation

__all__ = ["ESCAPED", "LONE", "MISFIT", "TEXT", "TITLE", "URL", "server"]

URL = "https://example.com/rates"
TITLE = "Rates \ud800 today"
TEXT = "Half \ud800 of a pair, \udfff alone, caf\u00e9 \U0001f600"
ESCAPED = "\\ud800"  # how a lone surrogate is written to a stream that cannot carry it

_SCRIPT = (
    SearchWeb(
        query="rates",
        results=(WebResult(title=TITLE, text="Rates eased \ud800.", url=URL),),
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


def server(token: str) -> ReferenceServer:
    """A reference server that requires `token` and plays `LONE` and `MISFIT`."""
    reference = ReferenceServer(token=token)
    reference.register(LONE)
    reference.register(MISFIT)
    return reference
