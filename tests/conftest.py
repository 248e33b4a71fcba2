"""Settings every test shares, and the hypothesis profiles of the runs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from .depth import DEV_EXAMPLES, PROFILE

# tools/mutation.py's profile: few examples, the same each run (scores compare), no
# database carrying one mutant's failure into the next, no deadline (mutmut's wrapper is slow).
settings.register_profile(
    "mutation", max_examples=50, derandomize=True, database=None, deadline=None
)

# The others share two cores with other workers in `.ci/run`: no deadline, no too_slow
# health check (slow is not wrong). Example counts: tests/depth.py.
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
