"""Streaming a turn event by event (sync): every event is typed, none is dropped.

A `text` event is a piece of the answer; a `citation` event is a citation as it
streamed in, with its `offset` in the answer (where a UI puts its chip); the
`citations_summary` event holds the turn's final citations; `done` ends it.
Events this SDK does not know arrive as `UnknownEvent`, and data it cannot
read as `MalformedEvent`: neither stops the stream.
"""

from __future__ import annotations

import os

from silvia_client import SilviaClient, StreamError
from silvia_client.chat import (
    CitationEvent,
    CitationsSummaryEvent,
    DoneEvent,
    MalformedEvent,
    SessionEvent,
    TextEvent,
    UnknownEvent,
)
from silvia_client.testing import ReferenceServer

QUESTION = "Where do my accounts stand, and what should I know about Apple, savings and my IRA?"


def main() -> None:
    numbers: dict[str, int] = {}  # source -> its marker number, by first appearance
    # The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
    silvia = SilviaClient() if os.environ.get("SILVIA_BASE_URL") else ReferenceServer().client()
    with silvia:
        try:
            with silvia.chat.stream(QUESTION) as stream:
                for event in stream:
                    match event:
                        case SessionEvent():
                            print("[session started]")
                        case TextEvent(text=text):
                            print(text, end="", flush=True)
                        case CitationEvent(citation=citation):
                            number = numbers.setdefault(citation.source, len(numbers) + 1)
                            print(f"[{number}]", end="", flush=True)
                        case CitationsSummaryEvent(citations=citations):
                            print(f"\n[summary: {len(citations)} citations]")
                        case DoneEvent():
                            print("[done]")
                        case UnknownEvent(event=name) | MalformedEvent(event=name):
                            print(f"\n[skipped an event: {name}]")
                        case _:
                            pass  # the model's raw final message, an error event
                turn = stream.until_done()
        except StreamError as error:
            # The stream broke off; what arrived is kept on the error.
            print(f"\nThe turn did not finish: {error}")
            partial = error.turn
            print(f"It had {len(partial.text)} characters, {len(partial.citations)} citations.")
            raise SystemExit(1) from None

    print(f"\ncomplete: {turn.complete}")
    print(f"citations as they streamed: {len(turn.inline_citations)}")
    for citation in turn.inline_citations:
        target = turn.target_for(citation.source)  # the source's target at the end of the turn
        kind = target.kind if target else "untyped"
        print(f"  at offset {citation.offset:>3}: [{numbers[citation.source]}] {kind}")


if __name__ == "__main__":
    main()
