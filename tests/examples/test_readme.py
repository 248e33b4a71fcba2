"""The README's code runs, and its reference names every public name.

A ```python block right after a `<!-- runnable -->` line is executed, each in a
fresh namespace, against the reference server on 127.0.0.1 (through
`SILVIA_BASE_URL` and `SILVIA_TOKEN`, as a reader would run it). A block right
after `<!-- pytest: PATH -->` is a test file an integrator would write: it runs
under pytest, with the package's plugin, beside a stand-in for the module at PATH
(the integrator's code under test). Every other ```python block must at least
compile.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import silvia_client
import silvia_client.chat
import silvia_client.citations
import silvia_client.display
from silvia_client.testing import ReferenceServer

README = Path(__file__).resolve().parents[2] / "README.md"
TOKEN = "readme-s3cret-token"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[tuple[int, bool, str]]:
    """(line, runnable, code) for every ```python block of the README."""
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        blocks.append((line, before.strip() == "<!-- runnable -->", match.group(1)))
    return blocks


def section(name: str) -> str:
    text = README.read_text(encoding="utf-8")
    start, end = f"<!-- section: {name} -->", f"<!-- /section: {name} -->"
    return text[text.index(start) + len(start) : text.index(end)]


RUNNABLE = [(line, code) for line, runnable, code in python_blocks() if runnable]
PYTEST_BLOCK = re.compile(
    r"^<!-- pytest: (\S+) -->\n```python\n(.*?)^```$", re.MULTILINE | re.DOTALL
)

# What an integrator's `source_links` would do: the links a UI shows for a citation.
CODE_UNDER_TEST = """
from silvia_client.citations import resolve_citation


def source_links(citation):
    return [link.href for link in resolve_citation(citation).links]
"""

pytest_plugins = ["pytester"]


def test_the_readme_has_runnable_blocks_in_each_of_its_sections() -> None:
    for name in ("quickstart", "streaming"):
        assert "<!-- runnable -->\n```python" in section(name)
    assert len(RUNNABLE) >= 6


@pytest.mark.parametrize(("line", "code"), [(b[0], b[2]) for b in python_blocks()])
def test_every_python_block_compiles(line: int, code: str) -> None:
    compile(code, f"README.md:{line}", "exec")


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


@pytest.mark.parametrize(("line", "code"), RUNNABLE, ids=[f"line {b[0]}" for b in RUNNABLE])
def test_runnable_blocks_run(
    line: int,
    code: str,
    server_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_BASE_URL", server_url)
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
    out, err = capsys.readouterr()
    assert out.strip(), "a README example shows something"
    for secret in (TOKEN, "plaid", "snaptrade"):
        assert secret not in out + err


def test_the_readmes_pytest_example_passes_under_pytest(pytester: pytest.Pytester) -> None:
    [(path, code)] = PYTEST_BLOCK.findall(section("testing-kit"))
    module = pytester.path / path
    module.parent.mkdir(parents=True)
    (module.parent / "__init__.py").write_text("")
    module.write_text(CODE_UNDER_TEST)
    pytester.makepyfile(test_readme_example=code)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    tests = code.count("\ndef test_") + code.count("\nasync def test_")
    assert outcomes.get("passed", 0) >= tests == 3, result.outlines
    assert set(outcomes) == {"passed"}, outcomes  # none skipped, failed or warned about
    assert not result.errlines


@pytest.mark.parametrize(
    "module",
    [silvia_client, silvia_client.citations, silvia_client.chat, silvia_client.display],
    ids=lambda m: m.__name__,
)
def test_the_reference_names_every_public_name(module: object) -> None:
    reference = section("reference")
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?`", reference))
    missing = sorted(set(module.__all__) - named)  # type: ignore[attr-defined]
    assert not missing, f"the README's reference does not name {missing}"


@pytest.mark.parametrize("scenario", ["pooling", "checkpoint-fresh-write", "demo"])
def test_the_quickstart_numbers_each_source_once(
    scenario: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A pooled source is cited by two summary rows: it is still one numbered source,
    # shown with its final target, as `silvia chat` and the notebooks show it.
    line, code = next((line, code) for line, code in RUNNABLE if code in section("quickstart"))
    server = ReferenceServer(token=TOKEN, default_scenario=scenario)
    with server.serve_loopback() as url:
        monkeypatch.setenv("SILVIA_BASE_URL", url)
        monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
        exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
    listed = [row for row in capsys.readouterr().out.splitlines() if row.startswith("[")]
    expected = server.expected_turn(scenario)
    final = {str(c["source"]): c.get("target") for c in expected.citations}
    sources = list(dict.fromkeys(str(c["source"]) for c in expected.inline_citations))
    assert len(listed) == len(sources)
    for number, (row, source) in enumerate(zip(listed, sources, strict=True), start=1):
        target = final[source]
        kind = target["kind"] if isinstance(target, dict) else "untyped"
        assert row.startswith(f"[{number}] ")
        assert f"({kind})" in row
