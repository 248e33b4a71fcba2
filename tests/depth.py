"""How many examples a hypothesis test runs, by the run's profile (`HYPOTHESIS_PROFILE`).

Unset or "ci", the main run: at most `CI_EXAMPLES` a test, 50 a bare `@given` or a
citation property (the depth at which `tools/mutation.py` kills or lists every mutant,
with room to spare for a search that changes every run). "dev", `.ci/run`'s other
Pythons and lowest versions (and a quick run by hand): 10, since those runs look for
what an interpreter or a dependency's version changes, which the listed examples and
the first draws reach. "mutation", `tools/mutation.py`: at most 50. A test's own
`@settings(max_examples=...)` overrides the profile's, so it takes it through `examples()`.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
CI_EXAMPLES = 100
DEV_EXAMPLES = 10


def examples(full: int) -> int:
    """`full` examples, at most the profile's."""
    return min(full, {"mutation": 50, "dev": DEV_EXAMPLES}.get(PROFILE, CI_EXAMPLES))
