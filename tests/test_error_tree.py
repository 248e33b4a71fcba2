"""The tree `errors.py` draws in its docstring is the tree the classes make.

A reader learns the exceptions from that drawing; a class added, moved or
re-parented without it would leave the drawing wrong without anyone noticing.
"""

from __future__ import annotations

import re

import silvia_client.citations
import silvia_client.errors
import silvia_client.testing
from silvia_client.errors import SilviaError

# `├── Name   comment` or `└── Name`, indented by four characters a level.
_ROW = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)")


def drawn_tree() -> dict[str, str]:
    """Each drawn class's name -> its parent's name, read off the docstring."""
    doc = silvia_client.errors.__doc__
    assert doc is not None
    parents: dict[str, str] = {}
    path = ["SilviaError"]
    for line in doc.splitlines():
        row = _ROW.match(line.strip("\n")[4:])  # the drawing is indented by four
        if row is None:
            continue
        depth = len(row["indent"]) // 4
        del path[depth + 1 :]
        parents[row["name"]] = path[depth]
        path.append(row["name"])
    return parents


def public_errors() -> dict[str, type[SilviaError]]:
    """Every `SilviaError` subclass the public modules export, by name."""
    found: dict[str, type[SilviaError]] = {}
    for module in (silvia_client.errors, silvia_client.citations, silvia_client.testing):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, SilviaError):
                found[name] = value
    found.pop("SilviaError")
    return found


def test_every_public_error_is_drawn_under_its_parent() -> None:
    drawn = drawn_tree()
    # The check is only as good as this reading of the drawing, with its nesting.
    assert drawn["InvalidAccountIdError"] == "SilviaError"
    assert drawn["StreamTooLargeError"] == "StreamError"
    assert drawn["APITimeoutError"] == "APIConnectionError"
    assert drawn["AuthenticationError"] == "APIStatusError"
    errors = public_errors()
    assert sorted(drawn) == sorted(errors)
    for name, cls in errors.items():
        parent = next(base for base in cls.__mro__[1:] if issubclass(base, SilviaError))
        assert drawn[name] == parent.__name__, name


def test_every_error_of_errors_py_is_named_from_there() -> None:
    # A traceback names `module.Class`: `silvia_client.errors.ConfigurationError`, as
    # a user imports it, not a private module it once lived in (`_errors_root`).
    elsewhere = {
        name: cls.__module__
        for name in silvia_client.errors.__all__
        if (cls := getattr(silvia_client.errors, name)).__module__ != "silvia_client.errors"
    }
    assert elsewhere == {}
