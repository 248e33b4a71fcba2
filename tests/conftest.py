"""Settings every test shares."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_web_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # SILVIA_WEB_URL makes every account link absolute; a developer who exported it
    # for notebooks must still see the views as the tests expect (they set it themselves).
    monkeypatch.delenv("SILVIA_WEB_URL", raising=False)
