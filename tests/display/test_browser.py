"""The notebook views in a real browser: hostile server strings run no script, make no bad link.

Each payload of `TEMPLATES`, in every server-controlled field of every view (HTML, and
Markdown read by both `READERS`), is a `<section>` of one page that Chromium loads: none
runs, and each view has the HTML view's links, only the views' elements, no bidi control.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from silvia_client.display import session_html, session_markdown, turn_html, turn_markdown

from ..browser import Chromium, read_report, report_script
from ._build import ACCOUNT_A, accounts, build_session, build_turn, row, web
from ._dom import READERS, VIEW_TAGS

pytestmark = pytest.mark.browser

TITLE = "silvia-untouched"
WEB_URL = "https://app.example"
PYTHON_MARKDOWN_WART = re.compile(r"\\([$|~=])")
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

# `{js}` is what a payload would run: it marks the page with the payload's number.
TEMPLATES = [
    # Markup and event handlers
    *("<script>{js}</script>", "<SCRIPT SRC=//evil.example/x.js></SCRIPT>"),
    *("<img src=x onerror={js}>", '<img src="x" onerror="{js}">', "<svg onload={js}>"),
    *("<svg><script>{js}</script></svg>", "<body onload={js}>", "<details open ontoggle={js}>"),
    *("<input autofocus onfocus={js}>", '<iframe srcdoc="<script>{js}</script>"></iframe>'),
    *('<iframe src="javascript:{js}"></iframe>', '<object data="javascript:{js}"></object>'),
    *('<embed src="javascript:{js}">', '<form action="javascript:{js}"><button>x</button></form>'),
    '<meta http-equiv="refresh" content="0;url=javascript:{js}">',
    *('<a href="javascript:{js}">x</a>', '<style>@import "javascript:{js}";</style>'),
    "<math><mtext><table><mglyph><style><img src=x onerror={js}>",
    '<noscript><p title="</noscript><img src=x onerror={js}>">',
    # Breaking out of an attribute, an element, the page
    *('"><script>{js}</script>', "'><img src=x onerror={js}>", '" onmouseover="{js}" x="'),
    "</q></span></li></ol></p></div></section><script>{js}</script>",
    *("<!--<script>{js}</script>-->", "<!--", "-->", "<![CDATA[<script>{js}</script>]]>"),
    *("<textarea>", "<title>", "<style>", "<plaintext>", "<xmp>"),
    # Script URLs, in every case and with whitespace, controls and entities inside
    *("javascript:{js}", "JAVASCRIPT:{js}", "JaVaScRiPt:{js}", " javascript:{js}"),
    *("java\tscript:{js}", "java\nscript:{js}", "java\rscript:{js}", "\x01javascript:{js}"),
    *("\x00javascript:{js}", "jav&#x09;ascript:{js}", "&#106;avascript:{js}"),
    *("javascript&colon;{js}", "javascript://e.example/%0A{js}", "JAVASCRIPT://e.example/%0a{js}"),
    "data:text/html,<script>{js}</script>",
    *("DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "vbscript:msgbox(1)"),
    *("VBScript:{js}", "https:\\\\evil.example\\", "//evil.example/", "\\\\evil.example"),
    "/\\evil.example",
    # Markdown
    *("[x](javascript:{js})", "[x](JAVASCRIPT:{js})", "[x]( javascript:{js})"),
    *("![x](javascript:{js})", "[x]: javascript:{js}", "<javascript:{js}>"),
    *('<https://e.example/"onmouseover="{js}>', '[x](https://e.example/ "title" onclick={js})'),
    *("**bold** _em_ `code` ~~s~~ $x$ # h | t | {braces} =eq=", "\\", "\\[1\\]"),
    *("&lt;script&gt;{js}&lt;/script&gt;", "&#x3C;script&#x3E;{js}", "&amp;&quot;&#39;"),
    # Quotes, bidi controls, ids that are dot segments
    *("'single' \"double\" `back`", "a'b'", "\u202eevil.exe\u202c", "\u2067rtl\u2069", "\u202dlro"),
    *("\u200fRLM\u200e", ".", "..", "../..", "%2e%2e", "/.."),
]


def rows(number: int, p: str) -> list[dict[str, Any]]:
    """`p` in each field a server controls, as each way a view shows it (whether a URL or an
    id makes a link at all is `resolve_citation`'s, tests/citations/test_links.py)."""
    return [
        row(p, p, cited_text=p),
        row(f"https://e.example/{number}/{p}", p, web(f"https://e.example/{number}/{p}")),
        row(f"silvia://quote/{number}", None, {"kind": "market_data", "ticker": p}),
        row(f"silvia://accounts/{number}", p, accounts(p, ".", "..", ACCOUNT_A)),
    ]


def views(number: int, p: str, web_url: str) -> Iterator[tuple[str, str, str]]:
    """(the view's name, its family, its HTML) for every notebook view of payload `p`."""
    cited = rows(number, p)
    turn = build_turn(
        f"Answer {p} ends", *[x for c in cited for x in (c, f" {p} ")], error=p, done=False
    )
    answer = {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": p}],
              "citations": cited, "inline_citations": cited}  # fmt: skip
    session = build_session([{"id": "m1", "role": p, "content": f"Question {p}"}, answer], title=p)
    shown: list[tuple[str, Any, Any, Any]] = [
        ("turn", turn, turn_html, turn_markdown),
        ("session", session, session_html, session_markdown),
    ]
    for family, value, html_view, markdown_view in shown:
        yield f"{family} html", family, html_view(value, web_url=web_url)
        for name, reader in READERS.items():
            markdown = markdown_view(value, web_url=web_url)
            yield f"{family} markdown, {name}", family, reader(markdown)


# What the page reports: per section, what the browser built from it (beside this file).
PROBE = (Path(__file__).parent / "views_probe.js").read_text(encoding="utf-8")

# The views' own attributes, and a reader's: `style` only on the glance's bar (test_views.py).
ATTRIBUTES = {"class", "href", "target", "rel", "title", "value", "start", "style", "aria-hidden"}


def shown(link: dict[str, Any], view: str) -> tuple[str, str]:
    """A link as a reader shows it: the URL it decodes to, its text with spaces folded."""
    # A NUL is dropped by the HTML parser and made U+FFFD by CommonMark: either is fine.
    text = " ".join(link["text"].replace("\ufffd", "").split())
    if view.endswith("python-markdown"):
        # python-markdown knows no `\$ \| \~ \=` escape (CommonMark and Jupyter do), so
        # it shows their backslash: a wart in the text, not in the link.
        text = PYTHON_MARKDOWN_WART.sub(r"\1", text)
    return unquote(link["raw"]), text


def test_no_payload_ran_broke_the_page_or_made_a_link_other_than_the_html_views(
    chromium: Chromium,
) -> None:
    cases: dict[str, tuple[str, str, str, str]] = {}  # section id -> name, family, web_url, HTML
    for web_url in ("", WEB_URL):
        for number, template in enumerate(TEMPLATES, start=1):
            js = f"top.document.title='pwned-{number}';top.__silvia_pwned={number}"
            p = template.replace("{js}", js)
            for view, family, fragment in views(number, p, web_url):
                name = f"payload {number} ({p!r}), {view}"
                cases[f"case-{len(cases)}"] = (name, family, web_url, fragment)
    body = "".join(
        f'<section id="{case_id}" data-case="{html.escape(name)}">{fragment}</section>'
        for case_id, (name, _, _, fragment) in cases.items()
    )
    page = chromium.load(
        f'<!doctype html><html><head><meta charset="utf-8"><title>{TITLE}</title>'
        f"{report_script(PROBE)}</head><body>{body}</body></html>"
    )
    loaded: dict[str, Any] = read_report(page)
    assert loaded["pwned"] is None, f"payload {loaded['pwned']} ran a script"
    assert loaded["title"] == TITLE
    assert loaded["top"] == list(cases), "a view left an element open or closed one of the page's"
    # The page asked for itself and perhaps its icon: no view loaded anything.
    assert {path.split("?")[0] for path in page.requests[1:]} <= {"/favicon.ico"}
    html_links: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for section in loaded["sections"]:
        name, family, web_url, _ = cases[section["id"]]
        assert set(section["tags"]) <= VIEW_TAGS, name
        assert set(section["attributes"]) <= ATTRIBUTES, name
        assert not BIDI_CONTROLS & set(section["text"]), name
        for link in section["links"]:
            assert link["raw"] is not None, name
            assert link["protocol"] in ("http:", "https:"), (name, link)
            if link["raw"].startswith("/") or link["origin"] == (web_url or chromium.origin):
                # An account page: one segment under /accounts/, on the web app or the page.
                assert link["origin"] == (web_url or chromium.origin), (name, link)
                assert link["raw"].startswith((web_url or "") + "/accounts/"), (name, link)
                segment = link["path"].removeprefix("/accounts/")
                assert link["path"].startswith("/accounts/"), (name, link)
                assert segment not in ("", ".", ".."), (name, link)
                assert "/" not in segment, (name, link)
        # Each view has the HTML view's links (readers may encode more: the URL decodes the same).
        found = [shown(link, name) for link in section["links"]]
        key = (name.split(", ")[0], family, web_url)
        if name.endswith(" html"):
            html_links[key] = found
        else:
            assert found == html_links[key], name
    assert len(html_links) == 2 * 2 * len(TEMPLATES)
    assert sum(len(links) for links in html_links.values()) > 800  # the corpus made links
