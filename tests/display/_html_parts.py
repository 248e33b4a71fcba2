"""What a reader sees in an HTML view: the answer's text, its chips, the sources list.

Outputs are parsed with `html.parser` (see `_dom.py`): a test asserts which
elements exist and what their text and attributes are, as a browser would read
them, rather than looking for substrings.
"""

from __future__ import annotations

from ._dom import Node, parse


def answer(html: str) -> Node:
    return parse(html).find("p", "silvia-answer")


def chips(html: str) -> list[tuple[int, str]]:
    """(offset in the answer's text, chip text) for every chip, in document order."""
    out: list[tuple[int, str]] = []
    offset = 0
    for child in answer(html).children:
        if isinstance(child, str):
            offset += len(child)  # a `<br>` is followed by the newline it stands for
        elif child.tag == "br":
            continue
        else:
            assert child.tag == "sup"
            assert "silvia-chip" in (child.attrs["class"] or "")
            out.append((offset, child.text))
    return out


def answer_text(html: str) -> str:
    """The answer's text without its chips (a `<br>` is followed by the newline it stands for)."""
    return "".join(c for c in answer(html).children if isinstance(c, str))


def sources(html: str) -> list[tuple[str | None, str, list[tuple[str | None, str]]]]:
    """(number, label, [(href, link text)]) for every item of the sources list."""
    items = []
    for li in parse(html).find_all("li"):
        label = li.find("span", "silvia-label").text
        links = [(a.attrs.get("href"), a.text) for a in li.find_all("a")]
        items.append((li.attrs.get("value"), label, links))
    return items
