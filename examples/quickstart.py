"""Quickstart: stream one turn, print it as it arrives, then its sources with their links.

python examples/quickstart.py                      # the embedded reference server
SILVIA_BASE_URL=https://... SILVIA_TOKEN=... python examples/quickstart.py
"""

from __future__ import annotations

import os

from silvia_client import SilviaClient
from silvia_client.display import numbered_sources
from silvia_client.testing import ReferenceServer

QUESTION = "How much is in checking, and what should I know about Apple, savings and my IRA?"


def main() -> None:
    # The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
    silvia = SilviaClient() if os.environ.get("SILVIA_BASE_URL") else ReferenceServer().client()
    with silvia, silvia.chat.stream(QUESTION) as stream:
        for text in stream.text_stream:  # the answer, piece by piece
            print(text, end="", flush=True)
        turn = stream.until_done()  # the assembled Turn
    print("\n")

    # Each source once (several rows may cite one), numbered as the answer's markers
    # are, with what a UI would show for it: its final target's label and links.
    for source in numbered_sources(turn.inline_citations, turn.citations):
        target = turn.target_for(source.source)
        kind = target.kind if target else "no target"
        links = ", ".join(link.href for link in source.resolved.links) or "(nothing to open)"
        print(f"[{source.number}] {source.resolved.label} ({kind}): {links}")


if __name__ == "__main__":
    main()
