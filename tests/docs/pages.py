"""The README and the docs/ pages as the tests read them: their files, sections and code.

A page's markers are HTML comments (a git host and the site show none):

- `<!-- runnable -->` right before a ```python block: it runs in a fresh namespace against
  the reference server on 127.0.0.1 (`SILVIA_BASE_URL` and `SILVIA_TOKEN`, as a reader
  would run it) and must print something;
- `<!-- pytest: PATH -->` right before one: a test file an integrator would write, run
  under pytest beside a stand-in for the module at PATH;
- `<!-- section: NAME -->` ... `<!-- /section: NAME -->`: a part a test reads by name.

Every other ```python block must at least compile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# Every page whose code the tests run: the README and each page of the site.
PAGES = (README, *sorted(DOCS.glob("*.md")))

FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PYTEST_MARKER = re.compile(r"^<!-- pytest: (\S+) -->$")


@dataclass(frozen=True)
class Block:
    """One ```python block of a page: where it is, how it is marked, its code."""

    page: Path
    line: int  # of the opening fence, 1-based
    marker: str  # the line right before the fence, stripped
    code: str

    @property
    def name(self) -> str:
        """`docs/streaming.md:42`, as a test id and as the code's file name."""
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def runnable(self) -> bool:
        return self.marker == "<!-- runnable -->"

    @property
    def pytest_path(self) -> str | None:
        """PATH of a `<!-- pytest: PATH -->` block, else None."""
        found = PYTEST_MARKER.match(self.marker)
        return found[1] if found else None


def blocks(page: Path) -> list[Block]:
    """Every ```python block of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        found.append(Block(page, line, before.strip(), match.group(1)))
    return found


def section(page: Path, name: str) -> str:
    """The text between `<!-- section: NAME -->` and `<!-- /section: NAME -->`."""
    text = page.read_text(encoding="utf-8")
    start, end = f"<!-- section: {name} -->", f"<!-- /section: {name} -->"
    return text[text.index(start) + len(start) : text.index(end)]


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's navigation lists, sections' pages too, in its order."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:\n") : config.index("\ntheme:")]
    return re.findall(r"^ +- [^:\n]+: (\S+\.md)$", nav, re.M)
