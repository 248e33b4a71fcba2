"""Settings every test shares, and the hypothesis profiles of the runs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from .depth import DEV_EXAMPLES, PROFILE

# tools/mutation.py runs the tests against hundreds of mutants (`--hypothesis-profile
# mutation`): fewer examples, the same ones every run so that scores compare, and no
# database carrying one mutant's failing example into the next one's run. No deadline:
# mutmut calls every mutated function through a wrapper, which slows it down.
settings.register_profile(
    "mutation", max_examples=50, derandomize=True, database=None, deadline=None
)

# Every other run (`HYPOTHESIS_PROFILE`: "ci", the default, or "dev"; the example counts
# are tests/depth.py's) shares two cores with three other workers in `.ci/run`: a draw or
# an example may take longer there than hypothesis's defaults allow (200 ms an example, a
# second for the first draws) without anything being wrong, and a test must not fail for it.
# A bare `@given`'s examples: tests/depth.py says why.
for _name, _examples in (("ci", 50), ("dev", DEV_EXAMPLES)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
if PROFILE in ("ci", "dev"):
    settings.load_profile(PROFILE)


@pytest.fixture(autouse=True)
def _no_web_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # SILVIA_WEB_URL makes every account link absolute; a developer who exported it
    # for notebooks must still see the views as the tests expect (they set it themselves).
    monkeypatch.delenv("SILVIA_WEB_URL", raising=False)
