"""Reloading a session: history comes back with the same typed citations as the live turn.

`client.sessions.get(id)` gives a `Session` whose messages carry `citations`
(the turn's summary) and `inline_citations` (as they streamed), each target
read by the same parser as a live stream. Rows saved before targets existed
have none; `resolve_citation` then falls back to `source` and `title`.
"""

from __future__ import annotations

import os

from silvia_client import Citation, SilviaClient
from silvia_client.citations import resolve_citation
from silvia_client.testing import ReferenceServer

QUESTION = "How much is in checking, and what do I owe on my cards?"


def key(citation: Citation) -> tuple[object, ...]:
    """What must match between live and reload (a live citation also has its offset)."""
    return (citation.source, citation.title, citation.cited_text, citation.target)


def main() -> None:
    # The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
    silvia = SilviaClient() if os.environ.get("SILVIA_BASE_URL") else ReferenceServer().client()
    with silvia:
        with silvia.chat.stream(QUESTION) as stream:
            live = stream.until_done()
        assert live.session_id is not None, "the server names the session in its first event"
        # Later, in another process, or after the app restarts:
        session = silvia.sessions.get(live.session_id)

    print(f"{len(session.messages)} messages")
    for message in session.messages:
        print(f"\n{message.role}: {message.text}")
        for citation in message.citations:
            resolved = resolve_citation(citation)
            hrefs = " ".join(link.href for link in resolved.links)
            print(f"  - {resolved.label}: {hrefs or '(no link)'}")
        for error in message.citation_errors:  # rows that could not be read are reported
            print(f"  ! skipped citation row {error.index}: {error.reason}")
        for error in message.inline_citation_errors:
            print(f"  ! skipped inline citation row {error.index}: {error.reason}")

    reloaded = session.messages[-1]
    same = [key(c) for c in live.citations] == [key(c) for c in reloaded.citations]
    same_inline = [key(c) for c in live.inline_citations] == [
        key(c) for c in reloaded.inline_citations
    ]
    print(f"\nlive and reload agree: citations {same}, inline citations {same_inline}")


if __name__ == "__main__":
    main()
