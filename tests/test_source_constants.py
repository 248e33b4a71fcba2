"""No string constant in the package holds a lone surrogate: Python 3.13.0 cannot compile such
a module once pytest has rewritten it (its assertion rewriter recompiles the plugin's package),
so one docstring that wrote `\\ud800` unescaped broke every test on that Python. A pattern that
must match surrogates says so in a raw string, which `re` reads."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "silvia_client"


def surrogate_constants(source: str) -> list[int]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node.value.encode("utf-8")
            except UnicodeEncodeError:
                found.append(node.lineno)
    return found


def test_no_module_holds_a_lone_surrogate_constant() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := surrogate_constants(path.read_text(encoding="utf-8")))
    }
    assert not found


def test_the_check_finds_one() -> None:
    assert surrogate_constants('"""a \\ud800 b"""\nX = r"[\\ud800-\\udfff]"\n') == [1]
