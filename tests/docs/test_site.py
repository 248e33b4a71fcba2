"""The documentation site in headless Chromium: every page loads clean, links, and is found.

Every page of the navigation, loaded once with a search for a word of its own (`?q=WORD`),
logs no error, misses no file, asks for nothing remote and links only ids that exist; the
search finds it; the reference anchors every public name. `SELF_TEST` proves the probe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

import silvia_client
import silvia_client.display
import silvia_client.qa
import silvia_client.testing

from ..browser import Chromium
from .pages import nav_pages
from .site import SiteServer, load

pytestmark = pytest.mark.browser

# A word is searched for only if it is on at most this many pages: the page must then
# be among the few the search shows, not past its first screen of results.
MAX_PAGES_PER_WORD = 3
# Where a name of `__all__` is documented when it is not `module.name`: `qa.observe`
# is also the name of a public submodule, which the reference shows under that name.
DOCUMENTED_AS = {"silvia_client.qa.observe": "silvia_client.qa.observe.observe"}
# A name the root re-exports is documented once, on the page of the module it comes from.
HOMES = (
    "silvia_client.chat",
    "silvia_client.citations",
    "silvia_client.sessions",
    "silvia_client.errors",
)
# The entry points an integrator reaches for first (issue 30): each an anchor, inherited
# (`with_options`, the stream's ids) or an attribute (`client.chat`) as much as a method.
ENTRY_POINTS = (
    "SilviaClient.with_options",
    "SilviaClient.chat",
    "SilviaClient.sessions",
    "ChatStream.request_id",
    "ChatStream.session_id",
    "ChatStream.current_turn",
)

# The probe's own test: a console error, a missing image, a remote style sheet, a link.
SELF_TEST_PATH = "/probe.html"
SELF_TEST = b"""<!doctype html><html><head><title>probe</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="https://fonts.example.com/a.css">
</head><body><img src="/no-such-image.png"><script>console.error("boom")</script>
<a href="/streaming/">a link</a></body></html>"""


@pytest.fixture(scope="module")
def words(built_site: Path) -> dict[str, str]:
    """For each page, a word on it that is on as few other pages as possible.

    Read from the site's own search index. Only a word that stands alone between
    spaces, in lower case, is taken: the search splits text on punctuation and
    between camel-case parts too, and does not stem a word next to punctuation
    (`(accumulating` is found by no query), so such a word is one it may not find.
    """
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    pages_of: dict[str, set[str]] = {}
    for entry in index["docs"]:
        page = "/" + str(entry["location"]).split("#", 1)[0]
        text = re.sub(r"<[^>]+>", " ", f"{entry['title']} {entry['text']}")
        for word in text.split():
            if re.fullmatch(r"[a-z]{5,}", word):
                pages_of.setdefault(word, set()).add(page)
    words: dict[str, str] = {}
    for word, pages in sorted(pages_of.items(), key=lambda item: (len(item[1]), -len(item[0]))):
        if len(pages) <= MAX_PAGES_PER_WORD:
            for page in pages:
                words.setdefault(page, word)
    return words


@pytest.fixture(scope="module")
def server(built_site: Path) -> Iterator[SiteServer]:
    with SiteServer(built_site, extra={SELF_TEST_PATH: SELF_TEST}) as served:
        yield served


@pytest.fixture(scope="module")
def loaded(chromium: Chromium, server: SiteServer, words: dict[str, str]) -> dict[str, Any]:
    """Every page of the navigation, loaded once (with its search word, if it has one), and
    `SELF_TEST`."""
    names = [page.removesuffix(".md") for page in nav_pages()]
    paths = ["/" if name == "index" else f"/{name}/" for name in names]
    queried = {path: path + (f"?q={words[path]}" if path in words else "") for path in paths}
    queried[SELF_TEST_PATH] = SELF_TEST_PATH
    pages = load(chromium, server, list(queried.values()))
    return {path: pages[query] for path, query in queried.items()}


def test_every_page_loads_without_a_console_error_or_a_missing_file(
    loaded: dict[str, Any], server: SiteServer
) -> None:
    for path, page in loaded.items():
        assert page["title"], path
        assert path == SELF_TEST_PATH or page["errors"] == [], path
    assert any(r.startswith("/search/search_index.json") for r in server.requests)
    assert server.missing == ["/no-such-image.png"]  # SELF_TEST's, below
    # The checks pass on an empty report too: the probe must see what it is for.
    errors = loaded[SELF_TEST_PATH]["errors"]
    assert "boom" in errors
    assert any("no-such-image.png" in error for error in errors)
    assert any("fonts.example.com" in error for error in errors)
    assert loaded[SELF_TEST_PATH]["links"] == [server.origin + "/streaming/"]


def test_every_internal_link_resolves(loaded: dict[str, Any], server: SiteServer) -> None:
    checked = 0
    ids_of: dict[Path, set[str]] = {}  # each page's ids, read once (the reference is large)
    for path, page in loaded.items():
        for href in page["links"]:
            link = urlsplit(href)
            if f"{link.scheme}://{link.netloc}" != server.origin:
                continue  # another site: a link, never something the page loads (below)
            target = server.file(unquote(link.path))
            assert target is not None, f"{path} links {href}: no such page"
            if link.fragment:
                if target not in ids_of:
                    text = target.read_text(encoding="utf-8")
                    ids_of[target] = set(re.findall(r'\bid="([^"]+)"', text))
                ids = ids_of[target]
                fragment = unquote(link.fragment)
                assert fragment in ids, f"{path} links {href}: no such id on that page"
            checked += 1
    assert checked > 100  # the navigation alone links every page from every page


def test_the_search_finds_each_page_by_a_word_on_it(
    loaded: dict[str, Any], words: dict[str, str]
) -> None:
    searched = 0
    for path, page in loaded.items():
        if path not in words:
            continue  # a stub with no word of its own (every word it has is on many pages)
        found = {urlsplit(href).path for href in page["results"]}
        assert path in found, f"searching {words[path]!r}: {page['meta']}, {found}"
        searched += 1
    topics = ("/", "/streaming/", "/sessions/", "/citations/", "/errors/", "/configuration/")
    assert set(topics) | {"/testing/", "/reference/"} <= set(words)
    assert searched >= 8


def test_the_reference_lists_every_public_name_and_anchors_the_entry_points(
    loaded: dict[str, Any],
) -> None:
    pages = [page for path, page in loaded.items() if path.startswith("/reference/")]
    assert len(pages) >= 8, "one page per public module"
    ids = {id_ for page in pages for id_ in page["ids"]}
    missing = []
    for module in (silvia_client, silvia_client.testing, silvia_client.qa, silvia_client.display):
        prefix = module.__name__
        for name in module.__all__:
            documented = {DOCUMENTED_AS.get(f"{prefix}.{name}", f"{prefix}.{name}")}
            if prefix == "silvia_client":
                documented |= {f"{home}.{name}" for home in HOMES}
            if not documented & ids:
                missing.append(f"{prefix}.{name}")
    assert not missing, f"the reference pages do not list {missing}"
    for entry in ENTRY_POINTS:
        found = [id_ for id_ in ids if id_.startswith("silvia_client.") and id_.endswith(entry)]
        assert found, f"no anchor ends in {entry}"


# An element that loads something from outside the site: a script, a style sheet, an
# image, a frame, a font in a style sheet.
REMOTE = re.compile(
    rb"""(?:\bsrc\s*=\s*["']?|<link\b[^>]*\bhref\s*=\s*["']?|url\(\s*["']?|@import\s+["']?)"""
    rb"""(?:https?:)?//""",
    re.IGNORECASE,
)


def test_the_site_asks_for_nothing_remote(built_site: Path) -> None:
    # The machines have no internet, and a reader's may not either: no web font, CDN
    # or analytics. (Chromium, above, also resolves no host but 127.0.0.1.)
    files = [f for f in built_site.rglob("*") if f.suffix in {".html", ".css", ".js"}]
    assert len(files) > 12
    remote = [f.relative_to(built_site).as_posix() for f in files if REMOTE.search(f.read_bytes())]
    assert remote == []
    assert REMOTE.search(SELF_TEST)  # which the probe sees, above
