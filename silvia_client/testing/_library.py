"""The built-in scenarios: every row of the doc's source table, every rule, every fault.

Each scenario is only tool results, text and citations; sources and targets
come from the server's rules (`_derive`), never written here. Where things are:

- `_library_data.py`     the user's accounts, the cited sources, shared tool results, the demo
- `_library_targets.py`  one scenario per row of the doc's source table
- `_library_turns.py`    the turn's rules: registry, legacy prompt, checkpoints, legacy rows
- `_library_faults.py`   a server that breaks, errs, or is hostile
"""

from __future__ import annotations

from types import MappingProxyType

from ._library_data import DEMO_SCRIPT, LEGACY_HISTORY
from ._library_faults import faults
from ._library_targets import target_table
from ._library_turns import turn_rules
from ._scenario import Scenario

__all__ = ["DEFAULT_SCENARIO", "LEGACY_HISTORY", "SCENARIOS", "scenarios"]

DEFAULT_SCENARIO = "demo"


def scenarios() -> tuple[Scenario, ...]:
    """A fresh copy of the built-in library, default first."""
    demo = Scenario(
        DEFAULT_SCENARIO,
        "The `silvia demo` turn: two accounts, a ticker, a web page and a tax document.",
        script=DEMO_SCRIPT,
    )
    return (demo, *target_table(), *turn_rules(), *faults())


SCENARIOS: MappingProxyType[str, Scenario] = MappingProxyType(
    {scenario.name: scenario for scenario in scenarios()}
)
"""The built-in scenarios by name, read-only (each server keeps its own copy to register into)."""
