"""The twins: the sync I/O `tools/unasync.py` generates, and the twins written twice by hand.

A generated module says so; an edit on one side only fails the tool's check. The twins by
hand (CONTRIBUTING, "Twins") are found by name, the async one made sync by the generator's
substitutions and the twins' names, and compared statement by statement (docstrings aside).
A difference meant goes in `ALLOWED` with its reason, a twin whose async half does more in
`NOT_MIRRORED`; any other difference fails, and so does an entry matching nothing.
"""

from __future__ import annotations

import ast
import copy
import difflib
import importlib.util
import re
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "silvia_client"
TOOL = ROOT / "tools" / "unasync.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync_tool", TOOL)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Sync names of what async code calls, beside the generator's substitutions and each
# twin's own name (found).
RENAMES: tuple[tuple[str, str], ...] = (
    (r"\baiter_(?=\w)", "iter_"),  # aiter_bytes, aiter_raw, aiter_lines, aiter_sse
    (r"\baread\b", "read"),
    (r"\bhandle_async_request\b", "handle_request"),
    (r"\basyncio\.sleep\b", "time.sleep"),
    (r"\bAsyncByteStream\b", "SyncByteStream"),  # httpx's names for the two body streams
    (r"\bAsync(?=[A-Z])", ""),  # AsyncIterator, AsyncClient, AsyncBaseTransport, ...
)


@dataclass(frozen=True)
class Twin:
    module: str  # relative to silvia_client/
    sync: str  # dotted within the module: "SilviaClient", "RecordingTransport.close"
    async_: str

    def __str__(self) -> str:
        return f"{self.module}:{self.sync}"


# One place where they differ: the sync lines, and the async lines made sync (each dedented).
Hunk = tuple[str, str]


# -- finding the twins -----------------------------------------------------------------

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definitions(body: list[ast.stmt]) -> dict[str, Definition]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name: node for node in body if isinstance(node, kinds)}


def _sync_names(name: str, node: Definition) -> tuple[str, ...]:
    """The names the sync twin of `node` would have, were it an async twin."""
    if isinstance(node, ast.ClassDef):
        if name.startswith("_Async"):
            return ("_Sync" + name[6:], "_" + name[6:])
        return (name[5:],) if name.startswith("Async") else ()
    if name in ("handle_async_request", "__aiter__"):
        return ("handle_request",) if name == "handle_async_request" else ("__iter__",)
    underscore = "_" if name.startswith("_") else ""
    bare = name[len(underscore) :]
    if bare.startswith("async_"):
        return (underscore + bare[6:],)
    return (underscore + bare[1:],) if re.match(r"a[a-z]", bare) else ()


def _pairs(module: str, scope: dict[str, Definition], prefix: str) -> list[Twin]:
    return [
        Twin(module, prefix + sync, prefix + name)
        for name, node in scope.items()
        for sync in _sync_names(name, node)
        if sync in scope and isinstance(scope[sync], ast.ClassDef) == isinstance(node, ast.ClassDef)
    ]


def twins_in(module: str, source: str) -> list[Twin]:
    """The twins of one module's source."""
    top = _definitions(ast.parse(source).body)
    found = _pairs(module, top, prefix="")
    paired = {twin.sync for twin in found} | {twin.async_ for twin in found}
    for cls in (node for node in top.values() if isinstance(node, ast.ClassDef)):
        if cls.name not in paired:  # a twin's methods are compared with it
            found += _pairs(module, _definitions(cls.body), prefix=f"{cls.name}.")
    return found


# -- making async code sync ------------------------------------------------------------


class _OneWith(ast.NodeTransformer):
    def visit_With(self, node: ast.With) -> ast.With:
        self.generic_visit(node)
        if len(node.body) == 1 and isinstance(node.body[0], ast.With):
            inner = node.body[0]
            return ast.copy_location(ast.With([*node.items, *inner.items], inner.body), node)
        return node


def _without_docstrings(node: ast.AST) -> ast.AST:
    node = copy.deepcopy(node)
    for inner in ast.walk(node):
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(inner, kinds) and ast.get_docstring(inner) is not None:
            inner.body = inner.body[1:] or [ast.Pass()]
    return node


def code_lines(source: str, dotted: str, renames: dict[str, str] | None = None) -> list[str]:
    """The definition `dotted` of `source` as compared: made sync when `renames` is given."""
    node: ast.AST = ast.parse(source)
    for part in dotted.split("."):
        assert isinstance(node, (ast.Module, ast.ClassDef))
        node = _definitions(node.body)[part]
    node = _without_docstrings(node)
    if renames is None:
        return ast.unparse(_OneWith().visit(node)).splitlines()
    # The generator's own substitutions, then the twins' names and what else they call.
    text = "\n".join(map(UNASYNC_LINE, ast.unparse(node).splitlines()))
    for name, sync in renames.items():
        text = re.sub(rf"\b{name}\b", sync, text)
    for pattern, replacement in RENAMES:
        text = re.sub(pattern, replacement, text)
    return ast.unparse(_OneWith().visit(ast.parse(text))).splitlines()


def differences(twin: Twin) -> list[Hunk]:
    """Where the async twin made sync differs from the sync one, hunk by hunk."""
    source = (PACKAGE / twin.module).read_text("utf-8")
    ours = code_lines(source, twin.sync)
    theirs = code_lines(source, twin.async_, RENAMED)
    matcher = difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False)
    return [
        (block("\n".join(ours[i1:i2])), block("\n".join(theirs[j1:j2])))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def block(text: str) -> str:
    """`text` dedented, without its first and last blank lines: how hunks are compared."""
    return textwrap.dedent(text).strip("\n")


# -- the twins written by hand ------------------------------------------------------


# Each twin's hunks that are meant, and why.
ALLOWED: dict[str, dict[Hunk, str]] = {
    "testing/_record_transport.py:RecordingTransport.handle_request": {
        (
            "raise TypeError('this RecordingTransport wraps an async transport')",
            "raise TypeError('this RecordingTransport wraps a sync transport')",
        ): "each says which kind of transport it cannot send through",
    },
    "testing/pytest_plugin.py:silvia": {
        (
            "with silvia_server.client(**_OPTIONS) as client:",
            "client = silvia_server.client(**_OPTIONS)\ntry:",
        ): "a sync fixture cannot `async with`: the async client is closed on a loop of its "
        "own after the test (the test's loop may be gone by then)",
        ("", "finally:\n    _close_on_own_loop(client)"): "the other half of the `try` above",
    },
}

# Twins whose async half does more than its sync one, so is not a mirror of it.
NOT_MIRRORED = {
    "qa/runner.py:run_script": "`arun_script` runs up to `concurrency` prompts at once, "
    "chains of continued prompts in order; `run_script` runs them one after another",
}

UNASYNC_LINE = _tool().unasync_line
TWINS = [
    twin
    for path in sorted(PACKAGE.rglob("*.py"))
    for twin in twins_in(path.relative_to(PACKAGE).as_posix(), path.read_text("utf-8"))
]
# Every twin's async name -> its sync name (one twin calls another).
RENAMED = {twin.async_.rpartition(".")[2]: twin.sync.rpartition(".")[2] for twin in TWINS}


def test_the_twins_of_the_modules_with_twins_are_found() -> None:
    # The generated I/O has none: each of its modules holds one side.
    testing = [
        *("_server.py:ReferenceServer.client", "_recording.py:Recording.client"),
        *("pytest_plugin.py:silvia", "_transport.py:InProcessTransport.handle_request"),
        *("_record_transport.py:_CapturedStream.close", "_record_transport.py:record_turn"),
        "_record_transport.py:RecordingTransport.handle_request",
    ]
    expected = {"display/_live.py:live", *(f"testing/{name}" for name in testing)}
    assert {str(twin) for twin in TWINS} >= expected


@pytest.mark.parametrize("twin", [twin for twin in TWINS if str(twin) not in NOT_MIRRORED], ids=str)
def test_each_async_twin_is_its_sync_half_made_sync(twin: Twin) -> None:
    shown = [
        "\n".join(
            [f"  - {line}" for line in sync.splitlines()]
            + [f"  + {line}" for line in a.splitlines()]
        )
        for sync, a in differences(twin)
        if (sync, a) not in ALLOWED.get(str(twin), {})
    ]
    assert not shown, (
        f"{twin.async_} differs from {twin.sync} in silvia_client/{twin.module}"
        " (- sync, + async made sync); align them, or add to ALLOWED with the reason:\n"
        + "\n".join(shown)
    )


def test_every_listed_difference_is_still_there() -> None:
    by_name = {str(twin): twin for twin in TWINS}
    gone = [f"{name}: no such twin" for name in ALLOWED if name not in by_name]
    assert all(why.strip() for listed in ALLOWED.values() for why in listed.values())
    for name, listed in ALLOWED.items():
        if name in by_name:
            present = set(differences(by_name[name]))
            gone += [f"{name}: {why}" for hunk, why in listed.items() if hunk not in present]
    assert not gone, "listed differences that are gone:\n" + "\n".join(gone)


def test_every_twin_not_mirrored_is_a_twin_whose_halves_differ_and_says_why() -> None:
    by_name = {str(twin): twin for twin in TWINS}
    assert set(NOT_MIRRORED) <= set(by_name)
    assert all(differences(by_name[name]) for name in NOT_MIRRORED)
    assert all(why.strip() for why in NOT_MIRRORED.values())


# -- the generated I/O ----------------------------------------------------------------


def test_an_edit_on_one_side_only_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tool()
    for side in ("_async", "_sync"):
        shutil.copytree(ROOT / "silvia_client" / side, tmp_path / side)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    monkeypatch.setattr(tool, "SOURCE", tmp_path / "_async")
    monkeypatch.setattr(tool, "TARGET", tmp_path / "_sync")
    assert tool.main(["--check"]) == 0  # the committed files, as CI checks them
    sources = [path.name for path in tool.sources()]
    assert {"_body.py", "_client.py", "_sessions.py", "_stream.py"} <= set(sources)
    for name in sources:  # each says it is generated, and from what
        assert (
            (tmp_path / "_sync" / name)
            .read_text("utf-8")
            .startswith(
                f"# generated by tools/unasync.py from silvia_client/_async/{name}; do not edit"
            )
        )
    stream = tmp_path / "_sync" / "_stream.py"
    stream.write_text(stream.read_text("utf-8").replace("self._closed = True", "pass"), "utf-8")
    (tmp_path / "_sync" / "_orphan.py").write_text("", "utf-8")
    assert tool.run(check=True) == [
        "_sync/_stream.py differs from what _stream.py generates",
        "_sync/_orphan.py has no source in _async",
    ]
    assert tool.main([]) == 1  # generates again, and still names the orphan
    assert tool.run(check=True) == ["_sync/_orphan.py has no source in _async"]
