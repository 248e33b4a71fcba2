"""What the package's source may hold, read off its syntax trees (comments don't count).

Public APIs only and no process-wide side effect (the rules: `_Finder`); the tools take
from the rest only what a user can, and `TOOLS_MAY_IMPORT`; no lone surrogate in a string
(Python 3.13.0 cannot compile one once pytest rewrote it); no import circle, as grimp reads.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

# What the tools take from the package's private modules, and why (a key allows
# that module or name and everything under it). An entry no tool uses fails the test.
TOOLS_MAY_IMPORT = {
    "silvia_client._text": "`terminal_text` (and `escaped`, which it uses): how the reports and "
    "the command write server text; not for users",
    "silvia_client._sse.loads": "QA reads the server's raw JSON as the SDK does: a huge "
    "number is a number, not 'not JSON'",
    "silvia_client._lazy.load_on_first_use": "the lazy `__init__` of qa and testing, the root's",
    "silvia_client._wire.DEFAULTS": "the client's defaults, which the command's help states and "
    "a recording's body cap follows",
    "silvia_client._base.BoundedCookieJar": "the reference server's clients keep cookies as the "
    "SDK's own pool does",
    "silvia_client.citations._accounts.ACCOUNT_ID_COLUMNS": "where a row holds an account id: "
    "the recording redactor and the scenario builder look where the parser does",
}
TOOLS = ("silvia_client.qa", "silvia_client.cli", "silvia_client.testing")

PACKAGE = Path(__file__).resolve().parent.parent / "silvia_client"
PRIVATE_OF_DEPENDENCIES = ("httpx", "httpx_sse", "pydantic", "pydantic_core")


def _is_private_dependency(module: str) -> bool:
    top, _, rest = module.partition(".")
    return top in PRIVATE_OF_DEPENDENCIES and rest.startswith("_")


def _is_private_name(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _tool_of(module: str) -> str | None:
    return next((tool for tool in TOOLS if f"{module}.".startswith(f"{tool}.")), None)


class _Finder(ast.NodeVisitor):
    def __init__(self, module: str, *, is_package: bool) -> None:
        self.found: list[str] = []
        self.taken: set[str] = set()  # the exceptions the module's imports use
        self._package = module if is_package else module.rpartition(".")[0]
        self._tool = _tool_of(module)
        self._in_post_init = False

    def _say(self, node: ast.AST, what: str) -> None:
        self.found.append(f"line {getattr(node, 'lineno', '?')}: {what}")

    def _take(self, node: ast.AST, dotted: str) -> None:
        """The tools' rule, for one imported module or name (its absolute dotted path)."""
        parts = dotted.split(".")
        if self._tool is None or parts[0] != "silvia_client" or _tool_of(dotted) == self._tool:
            return
        if not any(_is_private_name(part) for part in parts[1:]):
            return
        allowed = [".".join(parts[:i]) for i in range(2, len(parts) + 1)]
        used = [key for key in allowed if key in TOOLS_MAY_IMPORT]
        if used:
            self.taken.update(used)
        else:
            self._say(node, f"a tool takes a private name of the SDK: {dotted}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "gc" or _is_private_dependency(alias.name):
                self._say(node, f"import {alias.name}")
            self._take(node, alias.name)

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
        base = self._package.split(".")[: len(self._package.split(".")) - node.level + 1]
        origin = ".".join([*base, module] if node.level else [module]).strip(".")
        for alias in node.names:
            self._take(node, f"{origin}.{alias.name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__pydantic_"):
            self._say(node, f".{node.attr}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        # getattr(model, "__pydantic_fields_set__") and its kind
        if isinstance(node.value, str) and node.value.startswith("__pydantic_"):
            self._say(node, repr(node.value))
        if isinstance(node.value, str) and any(0xD800 <= ord(c) < 0xE000 for c in node.value):
            self._say(node, "a string constant holds a lone surrogate")

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


def _finder(source: str, module: str, *, is_package: bool = False) -> _Finder:
    finder = _Finder(module, is_package=is_package)
    finder.visit(ast.parse(source))
    return finder


def test_every_module_uses_public_apis_only_and_every_exception_is_needed() -> None:
    found: list[str] = []
    taken: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        finder = _finder(path.read_text(encoding="utf-8"), module, is_package=is_package)
        found += [f"{path.relative_to(PACKAGE.parent)}, {what}" for what in finder.found]
        taken |= finder.taken
    assert not found, "\n".join(found)
    unused = sorted(set(TOOLS_MAY_IMPORT) - taken)
    assert not unused, f"exceptions no tool needs any more: {unused}"


def test_each_rule_finds_what_it_names() -> None:
    core, tool = "silvia_client.chat._turn", "silvia_client.qa.report"
    cases = [
        (core, "import gc\n", "import gc"),
        (core, "from gc import disable\n", "from gc import ..."),
        (core, "from httpx._models import Response\n", "from httpx._models import ..."),
        (core, "import pydantic_core._pydantic_core\n", "import pydantic_core._pydantic_core"),
        (core, "from httpx_sse import _decoders\n", "from httpx_sse import _decoders"),
        (core, "row.__pydantic_fields_set__ = set()\n", ".__pydantic_fields_set__"),
        (core, "getattr(row, '__pydantic_extra__')\n", "'__pydantic_extra__'"),
        (core, "object.__setattr__(row, 'title', 't')\n", "object.__setattr__ outside"),
        (
            core,
            "class C:\n    def method(self):\n        object.__setattr__(self, 'x', 1)\n",
            "object.__setattr__ outside",
        ),
        (core, "from .report import _rules as table_rules\n", "a sibling's private name: _rules"),
        (core, "from silvia_client.chat._turn import _preview\n", "a sibling's private name"),
        (core, '"""a \\ud800 b"""\n', "a lone surrogate"),
        # The tools' rule: a private module or submodule, imported relatively or not.
        (tool, "from .._wire import WireFormat\n", "of the SDK: silvia_client._wire.WireFormat"),
        (tool, "from .. import _client\n", "silvia_client._client"),
        (tool, "import silvia_client._client\n", "silvia_client._client"),
        (tool, "from silvia_client._pool import Pool\n", "silvia_client._pool.Pool"),
        (tool, "from ..testing._server import Handler\n", "silvia_client.testing._server"),
    ]
    misses = []
    for module, source, what in cases:
        found = _finder(source, module).found
        if len(found) != 1 or what not in found[0]:
            misses.append((source, found))
    assert not misses, "\n".join(map(repr, misses))


def test_what_each_rule_allows() -> None:
    sources = {
        "silvia_client.display._html": "from . import _rows\nfrom ._html_text import h as _h\n",
        "silvia_client.qa.report": (
            "from .. import __version__\nfrom .report import table_rules\n"
            "from .. import WireFormat\nfrom ..citations import AccountRef\n"
            "from ._results import seconds_text\nfrom .._text import terminal_text\n"
            "from .._wire import DEFAULTS\nimport silvia_client.display\n"
        ),
        "silvia_client.testing": "from .._lazy import load_on_first_use\nfrom ._server import S\n",
        "silvia_client._client": "from ._wire import WireFormat\nfrom ._pool import Pool\n",
        "silvia_client._text": 'X = r"[\\ud800-\\udfff]"\n',
    }
    for module, source in sources.items():
        assert _finder(source, module, is_package=module == "silvia_client.testing").found == []
    frozen = (
        "@dataclass(frozen=True)\nclass C:\n    x: tuple\n"
        "    def __post_init__(self):\n        object.__setattr__(self, 'x', tuple(self.x))\n"
    )
    assert _finder(frozen, "silvia_client.citations._targets").found == []


def test_no_module_is_imported_back_by_what_it_imports() -> None:
    graph = grimp.build_graph("silvia_client", exclude_type_checking_imports=True, cache_dir=None)
    circles = {
        (module, imported): chain
        for module in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if (chain := graph.find_shortest_chain(importer=imported, imported=module)) is not None
    }
    assert circles == {}
