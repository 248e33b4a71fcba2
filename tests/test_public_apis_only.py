"""The package uses its dependencies' public APIs only, and no process-wide side effect.

Read off the source of every module of `silvia_client` (the AST, so a comment or a
docstring that names these things does not count):

- no `import gc` (the collector is never paused, frozen or tuned by the SDK);
- no import from a dependency's private module (`httpx._...`, `httpx_sse._...`,
  `pydantic._...`, `pydantic_core._...`);
- no `__pydantic_*__` attribute read or written (pydantic's instance internals);
- no `object.__setattr__`, but in a dataclass's own `__post_init__` (the standard
  library's way for a frozen dataclass to normalise its fields), which never
  touches a model;
- no private name taken from another of the package's modules (`from .report
  import _rules`): what a sibling needs is named without the underscore, so a
  reader sees it is shared. A private submodule itself (`from . import _rows`) is
  not a name of that kind.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "silvia_client"
MODULES = sorted(PACKAGE.rglob("*.py"))
PRIVATE_OF_DEPENDENCIES = ("httpx", "httpx_sse", "pydantic", "pydantic_core")


def _is_private_dependency(module: str) -> bool:
    top, _, rest = module.partition(".")
    return top in PRIVATE_OF_DEPENDENCIES and rest.startswith("_")


def _is_private_name(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []
        self._in_post_init = False

    def _say(self, node: ast.AST, what: str) -> None:
        self.found.append(f"line {getattr(node, 'lineno', '?')}: {what}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "gc" or _is_private_dependency(alias.name):
                self._say(node, f"import {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and (module == "gc" or _is_private_dependency(module)):
            self._say(node, f"from {module} import ...")
        if node.level == 0 and module in PRIVATE_OF_DEPENDENCIES:
            for alias in node.names:
                if alias.name.startswith("_"):
                    self._say(node, f"from {module} import {alias.name}")
        ours = node.level > 0 or module.split(".")[0] == "silvia_client"
        if ours and node.module is not None:  # `from . import _rows` takes a submodule
            for alias in node.names:
                if _is_private_name(alias.name):
                    self._say(node, f"a sibling's private name: {alias.name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__pydantic_"):
            self._say(node, f".{node.attr}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        # getattr(model, "__pydantic_fields_set__") and its kind
        if isinstance(node.value, str) and node.value.startswith("__pydantic_"):
            self._say(node, repr(node.value))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer, self._in_post_init = self._in_post_init, node.name == "__post_init__"
        self.generic_visit(node)
        self._in_post_init = outer

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        is_object_setattr = (
            isinstance(func, ast.Attribute)
            and func.attr == "__setattr__"
            and isinstance(func.value, ast.Name)
            and func.value.id == "object"
        )
        if is_object_setattr and not self._in_post_init:
            self._say(node, "object.__setattr__ outside a dataclass's __post_init__")
        self.generic_visit(node)


def _findings(source: str) -> list[str]:
    finder = _Finder()
    finder.visit(ast.parse(source))
    return finder.found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_module_uses_public_apis_only(path: Path) -> None:
    assert _findings(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import gc\n", "import gc"),
        ("from gc import disable\n", "from gc import ..."),
        ("from httpx._models import Response\n", "from httpx._models import ..."),
        ("import pydantic_core._pydantic_core\n", "import pydantic_core._pydantic_core"),
        ("from httpx_sse import _decoders\n", "from httpx_sse import _decoders"),
        ("row.__pydantic_fields_set__ = set()\n", ".__pydantic_fields_set__"),
        ("getattr(row, '__pydantic_extra__')\n", "'__pydantic_extra__'"),
        ("object.__setattr__(row, 'title', 't')\n", "object.__setattr__ outside"),
        (
            "class C:\n    def method(self):\n        object.__setattr__(self, 'x', 1)\n",
            "object.__setattr__ outside",
        ),
        ("from .report import _rules as table_rules\n", "a sibling's private name: _rules"),
        ("from silvia_client.chat._turn import _preview\n", "a sibling's private name"),
    ],
)
def test_each_rule_finds_what_it_names(source: str, what: str) -> None:
    found = _findings(source)
    assert len(found) == 1
    assert what in found[0]


def test_a_public_name_a_private_submodule_or_a_dunder_may_be_imported() -> None:
    source = (
        "from . import _rows\nfrom ._html_text import h as _h\n"
        "from .._version import __version__\nfrom .report import table_rules\n"
    )
    assert _findings(source) == []


def test_a_frozen_dataclass_may_normalise_its_fields_in_post_init() -> None:
    source = (
        "@dataclass(frozen=True)\nclass C:\n    x: tuple\n"
        "    def __post_init__(self):\n        object.__setattr__(self, 'x', tuple(self.x))\n"
    )
    assert _findings(source) == []
