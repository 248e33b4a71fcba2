"""How many examples a hypothesis test runs, by the run's profile (`HYPOTHESIS_PROFILE`).

"ci" (the default): at most `CI_EXAMPLES` a test, 50 a bare `@given` or a citation
property (where `tools/mutation.py` kills or lists every mutant, with room to spare).
"dev" (other Pythons, lowest pins, by hand): 10, enough for what a version changes.
"mutation": at most 50. A test's own `max_examples` goes through `examples()`.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
CI_EXAMPLES = 100
DEV_EXAMPLES = 10


def examples(full: int) -> int:
    """`full` examples, at most the profile's."""
    return min(full, {"mutation": 50, "dev": DEV_EXAMPLES}.get(PROFILE, CI_EXAMPLES))
