"""Hand-written async twins made sync and compared with their sync halves.

The core's I/O is generated (`tools/unasync.py`); this is for what stays written
twice by hand (the list is in `tests/test_twins.py`, which runs this over the
package and holds the allow-list).

The twins are found by name, module by module, so a new one is checked without
being listed: the class `AsyncX` beside `X`, `_AsyncX` beside `_SyncX` or `_X`; the
function `aX` beside `X` (`arecord_turn`, `_aread_at_most`), `async_X` beside `X`;
the same for the methods of a class that is not itself a twin (`aclose` beside
`close`, `async_client` beside `client`, `__aiter__` beside `__iter__`); and
`handle_async_request` beside `handle_request`.

The async twin is made sync, then both are compared statement by statement:

- on the syntax tree, `async def` becomes `def`, `async with` `with`, `async for`
  `for` (in comprehensions too), `await x` becomes `x`, and `AsyncGenerator[T, None]`
  becomes `Generator[T, None, None]`; on both sides, a `with` that holds only another
  `with` is one `with` of both (an `async with` cannot take a sync context manager);
- then, in the code `ast.unparse` prints, every twin's name and the names in
  `RENAMES` are replaced by their sync forms (`AsyncX` by `X`, `aiter_` by `iter_`,
  `__aiter__` by `__iter__`, ...).

Docstrings and comments are left out (each is written once, on the sync twin, which
the async one may point to), and so is line wrapping (an `Async` name is longer).
"""

from __future__ import annotations

import ast
import copy
import difflib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "silvia_client"

# Sync names of what async code calls, beside each twin's own name (found).
RENAMES: tuple[tuple[str, str], ...] = (
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\b__aiter__\b", "__iter__"),
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


@dataclass(frozen=True)
class Hunk:
    """One place where they differ: the sync lines, and the async lines made sync.

    Each side is dedented as a block, so that a hunk reads the same wherever it sits.
    """

    sync: str
    async_: str

    def shown(self) -> str:
        sync = [f"  - {line}" for line in self.sync.splitlines()]
        return "\n".join(sync + [f"  + {line}" for line in self.async_.splitlines()])


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


def all_twins() -> list[Twin]:
    """Every twin in the package, module by module."""
    return [
        twin
        for path in sorted(PACKAGE.rglob("*.py"))
        for twin in twins_in(path.relative_to(PACKAGE).as_posix(), path.read_text("utf-8"))
    ]


def twin_renames(twins: list[Twin]) -> dict[str, str]:
    """Every twin's async name -> its sync name (one twin calls another)."""
    return {twin.async_.rpartition(".")[2]: twin.sync.rpartition(".")[2] for twin in twins}


# -- making async code sync ------------------------------------------------------------


class _Unasync(ast.NodeTransformer):
    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.FunctionDef:
        self.generic_visit(node)
        fields = {field: getattr(node, field) for field in node._fields}
        return ast.copy_location(ast.FunctionDef(**fields), node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.With:
        self.generic_visit(node)
        return ast.copy_location(ast.With(node.items, node.body, node.type_comment), node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.For:
        self.generic_visit(node)
        return ast.copy_location(
            ast.For(node.target, node.iter, node.body, node.orelse, node.type_comment), node
        )

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.is_async = 0
        return node

    def visit_Await(self, node: ast.Await) -> ast.expr:
        self.generic_visit(node)
        return node.value

    def visit_Subscript(self, node: ast.Subscript) -> ast.Subscript:
        # `Generator` has a return type that `AsyncGenerator` has not.
        self.generic_visit(node)
        name = node.value.attr if isinstance(node.value, ast.Attribute) else None
        name = node.value.id if isinstance(node.value, ast.Name) else name
        if name == "AsyncGenerator" and isinstance(node.slice, ast.Tuple):
            node.slice.elts.append(ast.Constant(None))
        return node


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
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = inner.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstring = isinstance(first.value.value, str)
                inner.body = (inner.body[1:] or [ast.Pass()]) if docstring else inner.body
    return node


def _find(tree: ast.Module, dotted: str) -> ast.AST:
    node: ast.AST = tree
    for part in dotted.split("."):
        assert isinstance(node, (ast.Module, ast.ClassDef))
        node = _definitions(node.body)[part]
    return node


def code_lines(source: str, dotted: str, renames: dict[str, str] | None = None) -> list[str]:
    """The definition `dotted` of `source` as compared: made sync when `renames` is given."""
    node = _without_docstrings(_find(ast.parse(source), dotted))
    if renames is None:
        return _unparse(_OneWith().visit(node))
    text = "\n".join(_unparse(_OneWith().visit(_Unasync().visit(node))))
    for name, sync in renames.items():
        text = re.sub(rf"\b{name}\b", sync, text)
    for pattern, replacement in RENAMES:
        text = re.sub(pattern, replacement, text)
    return text.splitlines()


# Python 3.10 prints a tuple it assigns to or loops over in parentheses; later ones do not.
_TUPLE_TARGETS = (
    re.compile(r"^(\s*)\(([^()]*)\)(?= = )"),
    re.compile(r"(\bfor )\(([^()]*)\)(?= in )"),
)


def _unparse(node: ast.AST) -> list[str]:
    lines = ast.unparse(node).splitlines()
    for pattern in _TUPLE_TARGETS:
        lines = [pattern.sub(r"\1\2", line) for line in lines]
    return lines


def differences(source: str, twin: Twin, renames: dict[str, str]) -> list[Hunk]:
    """Where the async twin made sync differs from the sync one, hunk by hunk."""
    ours = code_lines(source, twin.sync)
    theirs = code_lines(source, twin.async_, renames)
    matcher = difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False)
    return [
        Hunk(block("\n".join(ours[i1:i2])), block("\n".join(theirs[j1:j2])))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def block(text: str) -> str:
    """`text` dedented, without its first and last blank lines: how hunks are compared."""
    return textwrap.dedent(text).strip("\n")
