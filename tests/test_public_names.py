"""One public name, one meaning: across every public module's `__all__`, a name is one object.

A public module is one whose dotted path has no part starting with `_` (and not
`__main__`, which runs the command line). A name may be re-exported (the same
object under the same name in several modules); it may not name two different
things, as `ErrorEvent` once named both a chat event and a testing fault.

The packages whose names load on first use (`_lazy.py`) are checked here too:
their table of where each name lives must say what their `TYPE_CHECKING` import
block says, since type checkers read the one and Python the other.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

import silvia_client

# Each `silvia` subcommand's module offers the same two functions, which the
# command line's `__init__` calls by these names: one interface, many modules.
SUBCOMMAND_INTERFACE = {"register", "run"}
LAZY_PACKAGES = (
    "silvia_client",
    "silvia_client.chat",
    "silvia_client.sessions",
    "silvia_client.testing",
    "silvia_client.qa",
)


def public_modules() -> list[ModuleType]:
    names = ["silvia_client"] + [
        info.name
        for info in pkgutil.walk_packages(silvia_client.__path__, "silvia_client.")
        if not any(part.startswith("_") for part in info.name.split(".")[1:])
    ]
    return [importlib.import_module(name) for name in names]


def test_the_walk_sees_the_public_modules_and_each_lists_its_names() -> None:
    modules = public_modules()
    names = {module.__name__ for module in modules}
    assert {
        *("silvia_client", "silvia_client.chat", "silvia_client.citations"),
        *("silvia_client.testing", "silvia_client.testing.pytest_plugin", "silvia_client.qa"),
        *("silvia_client.qa.observe", "silvia_client.cli"),
    } <= names
    assert not any(part.startswith("_") for name in names for part in name.split(".")[1:])
    for module in modules:
        assert isinstance(getattr(module, "__all__", None), list), module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.__all__ names {name!r}, absent"


def test_a_public_name_is_one_object_everywhere() -> None:
    holders: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module in public_modules():
        for name in module.__all__:
            if name in SUBCOMMAND_INTERFACE and module.__name__.startswith("silvia_client.cli."):
                continue
            holders[name][id(getattr(module, name))].append(module.__name__)
    clashes = {name: list(by_id.values()) for name, by_id in holders.items() if len(by_id) > 1}
    assert not clashes, f"names meaning different things in different modules: {clashes}"


def _type_checking_imports(package: ModuleType) -> dict[str, tuple[str, ...]]:
    """`{".submodule": names}` from the package's `if TYPE_CHECKING:` block."""
    tree = ast.parse(Path(str(package.__file__)).read_text(encoding="utf-8"))
    found: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                where = "." * statement.level + (statement.module or "")
                names = {*found.get(where, ()), *(alias.name for alias in statement.names)}
                found[where] = tuple(sorted(names))
    return found


def test_a_lazy_packages_table_says_what_its_type_checking_imports_say() -> None:
    for name in LAZY_PACKAGES:
        package = importlib.import_module(name)
        table: dict[str, list[str]] = defaultdict(list)
        for public, where in package.__dict__["_where"].items():
            table[where].append(public)
        assert {where: tuple(sorted(names)) for where, names in table.items()} == (
            _type_checking_imports(package)
        ), name
        assert set(package.__dict__["_where"]) == set(package.__all__), name
        assert set(package.__all__) <= set(dir(package)), name
        with pytest.raises(AttributeError, match="NoSuchName"):
            package.NoSuchName  # noqa: B018


def _fresh(code: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout.splitlines()


def test_a_public_name_keeps_its_meaning_whichever_module_is_imported_first() -> None:
    # `silvia_client.qa.observe` is both a function (the public name) and the module
    # defining it; importing the module directly first must not replace the function.
    out = _fresh(
        "import silvia_client.qa.runner\n"
        "import silvia_client.qa as qa\n"
        "from silvia_client.qa import observe\n"
        "print(callable(observe), qa.observe is observe, type(qa.observe).__name__)\n"
    )
    assert out == ["True True function"]
