"""How many examples a hypothesis test runs, by the profile of the run.

`HYPOTHESIS_PROFILE` names it: unset (or "ci"), the main run, at most
`CI_EXAMPLES` (100) a test, 50 a bare `@given` or a citation property: the depth
at which `tools/mutation.py` (50 a test) kills or lists every mutant, with
room to spare for a search that changes every run;
"dev", the other Pythons and the lowest versions in `.ci/run` (and a quick run by
hand), 10: those runs look for what an interpreter or a dependency's version
changes, which the listed examples and the first draws reach, and the search for
inputs nobody listed is the main run's;
"mutation", `tools/mutation.py`, which runs the tests once per mutant, at most
50. A test's own `@settings(max_examples=...)` overrides the profile's, so a
test that sets one takes it through `examples()`.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
CI_EXAMPLES = 100
DEV_EXAMPLES = 10


def examples(full: int) -> int:
    """`full` examples, at most the profile's."""
    if PROFILE == "mutation":
        return min(full, 50)
    if PROFILE == "dev":
        return min(full, DEV_EXAMPLES)
    return min(full, CI_EXAMPLES)
