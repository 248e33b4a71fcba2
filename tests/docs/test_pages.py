"""The README is the front door to the docs/ pages, and the pages say what the code does.

Read from the files alone (no site build, so on every Python): the README's length
and its links, the site's navigation, and the parts of a page that restate the
code (the error tree), compared with the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import silvia_client.errors

from .pages import DOCS, PAGES, README, nav_pages

MAX_README_LINES = 300
# A Markdown link or image to a relative target: `[text](target)`, the target kept.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SITE_PAGES = sorted(page.name for page in DOCS.glob("*.md"))


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"^```.*?^```$", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_readme_is_a_short_front_door_that_links_every_page_of_the_docs() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines"
    linked = {link.partition("#")[0] for link in relative_links(README)}
    missing = [name for name in SITE_PAGES if f"docs/{name}" not in linked]
    assert not missing, f"README.md links no {missing}"


def test_every_relative_link_names_a_file_that_exists() -> None:
    # `mkdocs build --strict` checks the pages' links and anchors too, where it is
    # installed; this holds on every Python, and for the README, which is not on the site.
    for page in PAGES:
        for link in relative_links(page):
            target = (page.parent / link.partition("#")[0]).resolve()
            assert target.exists(), f"{page.name} links {link}, which is not there"


def test_the_sites_navigation_lists_every_page_once() -> None:
    listed = nav_pages()
    assert sorted(listed) == sorted(
        page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")
    )
    assert listed[0] == "index.md"


def test_the_errors_page_draws_the_tree_errors_py_draws() -> None:
    docstring = str(silvia_client.errors.__doc__)
    tree = [line[4:] for line in docstring.splitlines() if line.startswith("    ")]
    page = (DOCS / "errors.md").read_text(encoding="utf-8")
    drawn = page[page.index("```text\n") + 8 :]
    assert drawn[: drawn.index("```")].splitlines() == tree
