"""The code of the README and of every docs/ page runs, as a reader would run it.

What each marker asks is in `pages.py`; a page added to docs/ is found by its file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

import silvia_client
import silvia_client.chat
import silvia_client.citations
import silvia_client.display
from silvia_client.testing import ReferenceServer

from .pages import DOCS, PAGES, README, Block, blocks, section

TOKEN = "readme-s3cret-token"

ALL = [block for page in PAGES for block in blocks(page)]
RUNNABLE = [block for block in ALL if block.runnable]
PYTEST = [block for block in ALL if block.pytest_path]

# What an integrator's code under test would be, for each PATH a pytest block names.
CODE_UNDER_TEST = {
    # An integrator's `source_links`: the links a UI shows for a citation.
    "myapp/render.py": """
from silvia_client.citations import resolve_citation


def source_links(citation):
    return [link.href for link in resolve_citation(citation).links]
""",
}

pytest_plugins = ["pytester"]


def test_every_block_is_found_and_compiles_and_the_topics_have_runnable_ones() -> None:
    # A fence the pattern misses (say, ```py) would silently go untested.
    for page in PAGES:
        fences = page.read_text(encoding="utf-8").count("```python\n")
        assert len(blocks(page)) == fences, page.name
    for block in ALL:
        compile(block.code, block.name, "exec")
    assert "<!-- runnable -->\n```python" in section(README, "quickstart")
    for name in ("streaming.md", "sessions.md", "errors.md", "testing.md"):
        assert any(block.runnable for block in blocks(DOCS / name)), name
    assert len(RUNNABLE) >= 20
    [kit] = [block for block in PYTEST if block.page.name == "testing.md"]
    assert kit.code.count("\ndef test_") + kit.code.count("\nasync def test_") == 3


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.name for block in RUNNABLE])
def test_runnable_blocks_run(
    block: Block,
    server_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", server_url)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    exec(compile(block.code, block.name, "exec"), {"__name__": "__docs__"})
    out, err = capsys.readouterr()
    assert out.strip(), "an example shows something"
    for secret in (TOKEN, "plaid", "snaptrade"):
        assert secret not in out + err


@pytest.mark.parametrize("block", PYTEST, ids=[block.name for block in PYTEST])
def test_the_pytest_examples_pass_under_pytest(block: Block, pytester: pytest.Pytester) -> None:
    path = str(block.pytest_path)
    assert path in CODE_UNDER_TEST, f"{block.name}: give {path} a stand-in in CODE_UNDER_TEST"
    module = pytester.path / path
    module.parent.mkdir(parents=True)
    (module.parent / "__init__.py").write_text("")
    module.write_text(CODE_UNDER_TEST[path])
    pytester.makepyfile(test_docs_example=block.code)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    tests = block.code.count("\ndef test_") + block.code.count("\nasync def test_")
    assert tests >= 1
    assert outcomes.get("passed", 0) >= tests, result.outlines
    assert set(outcomes) == {"passed"}, outcomes  # none skipped, failed or warned about
    assert not result.errlines


def test_the_references_overview_names_every_public_name() -> None:
    reference = section(DOCS / "reference.md", "reference")
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?`", reference))
    for module in (
        silvia_client,
        silvia_client.citations,
        silvia_client.chat,
        silvia_client.display,
    ):
        missing = sorted(set(module.__all__) - named)
        assert not missing, f"docs/reference.md's overview does not name {missing}"
