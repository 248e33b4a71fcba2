"""The built-in scenarios, read from `scenarios/*.json` beside this module.

Where things are: `demo.json` (the `silvia demo` turn), `targets.json` (a row of
the doc's source table each), `turns.json` (the turn's rules), `faults.json`
(a server that breaks, errs, or is hostile); docs/testing.md describes the
format. `broken.json` is read the same way, by `_broken.py`, apart from these.
Each object is read into its class by the class's own field names and each
script played once, so a bad file fails on import, naming the file and the
scenario. Only the rows' `source` column names a vendor.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any, get_args

from ._faults import Fault
from ._scenario import Rewrite, Scenario
from ._script import (
    Checkpoint,
    Cite,
    ExaArticle,
    ExecutePython,
    ExecuteSql,
    PriorTurn,
    ReadLibraryDocument,
    Say,
    ScriptItem,
    SearchWeb,
    ToolResult,
    WebResult,
)

DEFAULT_SCENARIO = "demo"
_FILES = ("demo.json", "targets.json", "turns.json", "faults.json")
_FAULTS: dict[str, type[Fault]] = {fault.kind: fault for fault in get_args(Fault)}


def _tool(data: Mapping[str, Any]) -> ToolResult:
    fields = dict(data)
    tool = fields.pop("tool")
    if tool == "execute_sql":
        return ExecuteSql(**fields)
    if tool == "execute_python":
        articles = tuple(ExaArticle(**article) for article in fields.pop("articles", ()))
        return ExecutePython(**fields, articles=articles)
    if tool == "search_web":
        results = tuple(WebResult(**result) for result in fields.pop("results"))
        return SearchWeb(**fields, results=results)
    return ReadLibraryDocument(tool, **fields)  # which refuses a tool it is not


def _item(data: Mapping[str, Any]) -> ScriptItem:
    fields = dict(data)
    if "say" in fields:
        return Say(fields.pop("say"), **fields)
    if "cite" in fields:
        return Cite(fields.pop("cite"), **fields)
    if "tool" not in fields:
        raise ValueError(f"an item with none of `say`, `cite`, `tool`: {sorted(fields)}")
    return _tool(fields)


def _fault(data: Mapping[str, Any]) -> Fault:
    fields = dict(data)
    kind = fields.pop("kind")
    if kind not in _FAULTS:
        raise ValueError(f"no fault of kind {kind!r}: one of {', '.join(_FAULTS)}")
    if "headers" in fields:
        fields["headers"] = tuple(tuple(header) for header in fields["headers"])
    return _FAULTS[kind](**fields)


def _scenario(
    data: Mapping[str, Any],
    above: Mapping[str, Scenario],
    rewrite: Callable[[Mapping[str, Any]], Rewrite] | None,
) -> Scenario:
    fields = dict(data)
    script = fields.get("script", ())
    if isinstance(script, str):
        if script not in above:
            raise ValueError(f"no scenario {script!r} above it to take the script of")
        fields["script"] = above[script].script
    else:
        fields["script"] = tuple(_item(item) for item in script)
    if "checkpoint" in fields:
        checkpoint = fields["checkpoint"]
        calls = tuple(_tool(call) for call in checkpoint["tool_calls"])
        fields["checkpoint"] = Checkpoint(**{**checkpoint, "tool_calls": calls})
    if "history" in fields:
        fields["history"] = tuple(
            PriorTurn(**{**prior, "script": tuple(_item(item) for item in prior["script"])})
            for prior in fields["history"]
        )
    if "fault" in fields:
        fields["fault"] = _fault(fields["fault"])
    if "rewrite" in fields:
        if rewrite is None:
            raise ValueError("a `rewrite`, which only the broken scenarios have")
        fields["rewrite"] = rewrite(fields["rewrite"])
    return Scenario(**fields)


def read_library(
    files: Iterable[tuple[str, str]],
    *,
    above: Mapping[str, Scenario] = MappingProxyType({}),
    rewrite: Callable[[Mapping[str, Any]], Rewrite] | None = None,
) -> tuple[Scenario, ...]:
    """The scenarios of some files, each `(name, JSON text)`, in order.

    A `script` may name a scenario read before it, or one of `above`; a
    `rewrite` object is read by `rewrite` (`_broken.py`'s, for its scenarios).
    """
    library: dict[str, Scenario] = {}
    for file, text in files:
        for index, data in enumerate(json.loads(text)):
            name = data.get("name", f"number {index + 1}")
            try:
                if name in library:
                    raise ValueError("a second scenario of that name")
                library[name] = _scenario(data, {**above, **library}, rewrite)
            except (KeyError, TypeError, ValueError) as error:
                # A key missing or unknown (the classes' own TypeError), a bad value.
                message = f"{type(error).__name__}: {error}"
                raise ValueError(f"scenarios/{file}, scenario {name!r}: {message}") from error
    return tuple(library.values())


def scenarios() -> tuple[Scenario, ...]:
    """A fresh copy of the built-in library, default first, read from `scenarios/*.json`."""
    folder = resources.files(__package__).joinpath("scenarios")
    return read_library(
        (file, folder.joinpath(file).read_text(encoding="utf-8")) for file in _FILES
    )


SCENARIOS: MappingProxyType[str, Scenario] = MappingProxyType(
    {scenario.name: scenario for scenario in scenarios()}
)
"""The built-in scenarios by name, read-only (each server keeps its own copy to register into)."""

LEGACY_HISTORY: tuple[PriorTurn, ...] = SCENARIOS["legacy-session"].history
"""A turn saved before targets existed: its rows carry no `target` key."""
