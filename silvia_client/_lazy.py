"""Packages whose public names load on first use (PEP 562), as pydantic's do.

pytest imports this package's two plugins in every run wherever the SDK is installed,
and with them their packages' `__init__`s: so those name where each public name lives
(type checkers read an `if TYPE_CHECKING:` block), and import it on first use. So does
`citations` for its pydantic rows, which `import silvia_client.citations` need not build.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from types import ModuleType


class _LazyPackage(ModuleType):
    """A package module whose missing public names are imported when first asked for."""

    _where: Mapping[str, str]  # public name -> the submodule (relative) that defines it

    def __getattr__(self, name: str) -> object:
        where = self.__dict__.get("_where", {})
        if name not in where:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], self.__name__), name)
        super().__setattr__(name, value)  # found directly next time
        return value

    def __setattr__(self, name: str, value: object) -> None:
        # Importing a submodule binds it on its package: a public name spelt like one
        # (`qa.observe`, a function of qa/observe.py) keeps its binding.
        if isinstance(value, ModuleType) and name in self.__dict__.get("_where", {}):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__dict__.get("_where", {})})


def load_on_first_use(package: str, where: Mapping[str, tuple[str, ...]]) -> None:
    """Make `package`'s public names (`__all__`) load on first use.

    `where` maps each relative submodule (".checker") to the public names it
    defines; together they must be exactly the names of the package's `__all__` it
    has not imported already.
    """
    module = sys.modules[package]
    table = {name: submodule for submodule, names in where.items() for name in names}
    public = set(getattr(module, "__all__", ())) - vars(module).keys()
    if set(table) != public or len(table) != sum(len(names) for names in where.values()):
        missing, extra = sorted(public - set(table)), sorted(set(table) - public)
        raise ImportError(f"{package}: the lazy table and __all__ differ ({missing=}, {extra=})")
    module.__class__ = _LazyPackage
    module.__dict__["_where"] = table
