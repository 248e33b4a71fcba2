"""Settings every test shares, and the hypothesis profile of the mutation runs."""

from __future__ import annotations

import pytest
from hypothesis import settings

# tools/mutation.py runs the tests against hundreds of mutants (`--hypothesis-profile
# mutation`): fewer examples, the same ones every run so that scores compare, and no
# database carrying one mutant's failing example into the next one's run. No deadline:
# mutmut calls every mutated function through a wrapper, which slows it down.
settings.register_profile(
    "mutation", max_examples=50, derandomize=True, database=None, deadline=None
)


@pytest.fixture(autouse=True)
def _no_web_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # SILVIA_WEB_URL makes every account link absolute; a developer who exported it
    # for notebooks must still see the views as the tests expect (they set it themselves).
    monkeypatch.delenv("SILVIA_WEB_URL", raising=False)
