"""A tiny DOM, parsed with `html.parser`, so tests assert structure rather than substrings,
and what a reader sees in an HTML view read off it: the answer, its chips, the sources.

`READERS`: python-markdown (looser than CommonMark: a quote in a link destination starts a
title) and markdown-it (CommonMark, as Jupyter), both passing raw HTML as a notebook does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

import markdown
from markdown_it import MarkdownIt

VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr"})
# The views' own elements, and a Markdown reader's: any other element came from the server.
VIEW_TAGS = {"div", "p", "h3", "h4", "strong", "em", "sup", "a", "ol", "li", "span", "br", "q"}
VIEW_TAGS |= {"blockquote", "style", "details", "summary", "dl", "dt", "dd"}  # folds; key/values


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text content, entities decoded, as a browser's `textContent`."""
        return "".join(child if isinstance(child, str) else child.text for child in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [
            node
            for node in self.iter()
            if node.tag == tag and (cls is None or cls in (node.attrs.get("class") or "").split())
        ]

    def find(self, tag: str, cls: str | None = None) -> Node:
        found = self.find_all(tag, cls)
        assert len(found) == 1, f"expected one <{tag} class={cls!r}>, found {len(found)}"
        return found[0]

    def tags(self) -> set[str]:
        return {node.tag for node in self.iter()}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]
        self.attribute_lists: list[list[tuple[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attribute_lists.append(attrs)
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attribute_lists.append(attrs)
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)

    def handle_comment(self, data: str) -> None:
        raise AssertionError("the output holds an HTML comment")

    def handle_decl(self, decl: str) -> None:
        raise AssertionError("the output holds a declaration")

    def handle_pi(self, data: str) -> None:
        raise AssertionError("the output holds a processing instruction")


def parse(html: str) -> Node:
    """Parse `html`; fails unless every element is closed where it was opened."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    for attrs in builder.attribute_lists:
        names = [name for name, _ in attrs]
        assert len(names) == len(set(names)), f"repeated attributes: {names}"
    return builder.root


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


def chip_links(html: str) -> list[tuple[str, list[str | None]]]:
    """(chip text, hrefs it opens) for every chip, in document order."""
    return [
        (chip.text, [a.attrs["href"] for a in chip.find_all("a")])
        for chip in parse(html).find_all("sup", "silvia-chip")
    ]


def sources(html: str) -> list[tuple[str | None, str, list[tuple[str | None, str]]]]:
    """(number, label, [(href, link text)]) for every item of the sources list."""
    items = []
    for li in parse(html).find_all("li"):
        label = li.find("span", "silvia-label").text
        links = [(a.attrs.get("href"), a.text) for a in li.find_all("a")]
        items.append((li.attrs.get("value"), label, links))
    return items


_COMMONMARK = MarkdownIt("commonmark")  # html=True: raw HTML passes, as in Jupyter
READERS: dict[str, Callable[[str], str]] = {
    "python-markdown": markdown.markdown,
    "markdown-it": _COMMONMARK.render,
}
