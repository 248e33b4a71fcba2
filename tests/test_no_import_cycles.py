"""No module of the package imports itself back, through any chain of imports.

Every import counts, at module level and inside a function, as grimp reads them;
one under `if TYPE_CHECKING:` does not, as it is no edge at run time. The layers
and acyclic contracts in pyproject.toml say where each import may go; this holds
the whole package, each module, whatever those contracts name.
"""

from __future__ import annotations

import grimp


def test_no_module_is_imported_back_by_what_it_imports() -> None:
    graph = grimp.build_graph("silvia_client", exclude_type_checking_imports=True, cache_dir=None)
    circles = {
        (module, imported): chain
        for module in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if (chain := graph.find_shortest_chain(importer=imported, imported=module)) is not None
    }
    assert circles == {}
