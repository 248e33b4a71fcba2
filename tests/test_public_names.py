"""Public names: one meaning each, and what `import silvia_client` loads now or on first use.

A public module has no part of its dotted path starting with `_` (nor is `__main__`). A
name may be re-exported (the same object in several modules), never name two things, as
`ErrorEvent` once named a chat event and a testing fault. A lazy package's table
(`_lazy.py`) says what its `TYPE_CHECKING` block says: type checkers read the one, Python
the other.
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
import silvia_client.citations as citations
from silvia_client.citations import _rows

# Every `silvia` subcommand's module offers these two (one interface, many modules).
SUBCOMMAND_INTERFACE = {"register", "run"}
LAZY_PACKAGES = (
    "silvia_client",
    *(f"silvia_client.{n}" for n in ("chat", "citations", "sessions", "testing", "qa")),
)


def public_modules() -> list[ModuleType]:
    names = ["silvia_client"] + [
        info.name
        for info in pkgutil.walk_packages(silvia_client.__path__, "silvia_client.")
        if not any(part.startswith("_") for part in info.name.split(".")[1:])
    ]
    return [importlib.import_module(name) for name in names]


def test_each_public_module_lists_its_names_and_a_name_is_one_object_everywhere() -> None:
    modules = public_modules()
    names = {module.__name__ for module in modules}
    assert {
        *("silvia_client", "silvia_client.chat", "silvia_client.citations"),
        *("silvia_client.testing", "silvia_client.testing.pytest_plugin", "silvia_client.qa"),
        *("silvia_client.qa.observe", "silvia_client.cli"),
    } <= names
    assert not any(part.startswith("_") for name in names for part in name.split(".")[1:])
    holders: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module in modules:
        assert isinstance(getattr(module, "__all__", None), list), module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.__all__ names {name!r}, absent"
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
        # The rest load with the package (`load_on_first_use` checks that none is missing).
        assert set(package.__dict__["_where"]) <= set(package.__all__), name
        assert set(package.__all__) <= set(dir(package)), name


def test_a_name_a_package_lacks_is_an_attribute_error_naming_it() -> None:
    for name in LAZY_PACKAGES:
        package = importlib.import_module(name)
        with pytest.raises(AttributeError) as info:
            package.NoSuchName  # noqa: B018
        assert str(info.value) == f"module {name!r} has no attribute 'NoSuchName'"
        assert "NoSuchName" not in vars(package)


def test_what_loads_on_first_use_and_a_public_name_keeps_its_meaning() -> None:
    # pydantic's models (most of an import's cost) wait for a citation model, the views
    # for a view, pandas for `to_pandas`; importing the module `qa.observe` does not
    # replace the function. In a fresh interpreter.
    code = (
        "import sys, silvia_client, silvia_client.cli\n"
        "silvia_client.cli.build_parser()\n"
        "print(*(m in sys.modules for m in "
        "('silvia_client.citations._rows', 'pydantic.main', 'silvia_client.display')))\n"
        "import silvia_client.qa.runner\n"
        "from silvia_client.testing import ReferenceServer\n"
        "turn = ReferenceServer().client().chat.send('hi')\n"
        "print(len(turn.citation_records()) > 0, 'pandas' in sys.modules)\n"
        "from silvia_client import Citation\n"
        "from silvia_client.citations import InlineCitation, load_citations\n"
        "print(Citation.__module__, InlineCitation.__module__, load_citations.__module__)\n"
        "import silvia_client.qa as qa\n"
        "from silvia_client.qa import observe\n"
        "print(callable(observe), qa.observe is observe, type(qa.observe).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.splitlines() == [
        "False False False",
        "True False",
        "silvia_client.citations._rows silvia_client.citations._rows silvia_client.citations._rows",
        "True True function",
    ]


def test_a_citation_model_is_read_from_the_rows_module_then_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # In this process the names were loaded long ago: drop them to load them again.
    for name in ("Citation", "InlineCitation", "load_citations"):
        monkeypatch.delitem(vars(citations), name, raising=False)
        assert getattr(citations, name) is getattr(_rows, name)
        assert vars(citations)[name] is getattr(_rows, name)  # kept: no second lookup
