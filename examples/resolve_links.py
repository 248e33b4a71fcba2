"""Resolving citations into what a UI shows: numbered chips, labels and links.

`resolve_citation(citation, web_url=...)` gives a label and zero or more
links: an account opens the web app's `/accounts/<id>` page (the id escaped as
JavaScript's encodeURIComponent escapes it), `accounts` gives one link per
account, a web page or a document its URL, and only http(s) URLs ever become
links. With no usable target it falls back to `source` and `title`. The
`provider` of an account is never in a label or a link.

This prints the JSON a backend might hand its frontend for one turn.
"""

from __future__ import annotations

import json
import os

from silvia_client import Citation, SilviaClient
from silvia_client.citations import resolve_citation
from silvia_client.testing import ReferenceServer

WEB_APP = "https://app.example.com"  # absolute account links; without it, SILVIA_WEB_URL or paths


def chips(text: str, inline: list[tuple[int, int]]) -> list[dict[str, object]]:
    """The answer cut at each chip: [{"text": ...}, {"chip": n}, ...]."""
    parts: list[dict[str, object]] = []
    start = 0
    for offset, number in inline:
        if offset > start:
            parts.append({"text": text[start:offset]})
            start = offset
        parts.append({"chip": number})
    parts.append({"text": text[start:]})
    return parts


def main() -> None:
    # The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
    silvia = SilviaClient() if os.environ.get("SILVIA_BASE_URL") else ReferenceServer().client()
    with silvia, silvia.chat.stream("Where do my accounts stand?") as stream:
        turn = stream.until_done()

    numbers: dict[str, int] = {}
    placed: list[tuple[int, int]] = []
    for citation in turn.inline_citations:
        number = numbers.setdefault(citation.source, len(numbers) + 1)
        if citation.offset is not None and (citation.offset, number) not in placed:
            placed.append((citation.offset, number))

    # One entry per source; the summary's row carries the final target.
    final: dict[str, Citation] = {citation.source: citation for citation in turn.citations}
    sources: list[dict[str, object]] = []
    for source, number in numbers.items():
        shown = final.get(source) or next(c for c in turn.inline_citations if c.source == source)
        resolved = resolve_citation(shown, web_url=WEB_APP)
        sources.append(
            {
                "number": number,
                "label": resolved.label,
                "kind": shown.target.kind if shown.target else None,
                "links": [{"href": link.href, "label": link.label} for link in resolved.links],
            }
        )
    print(json.dumps({"answer": chips(turn.text, placed), "sources": sources}, indent=2))

    # Rows saved before targets existed fall back to source and title; a script URL never links.
    for legacy in (
        Citation(
            source="https://www.irs.gov/forms-pubs/about-publication-590-a", title="Pub 590-A"
        ),
        Citation(source="silvia://your-account/checking", title="Checking"),
        Citation(source="javascript:alert(1)", title="Not a link"),
    ):
        resolved = resolve_citation(legacy)
        print(f"legacy {legacy.source!r}: label {resolved.label!r}, href {resolved.href!r}")


if __name__ == "__main__":
    main()
