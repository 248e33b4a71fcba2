"""Fixtures of the QA tests: headless Chromium (`tests/browser.py`), and no server in the env."""

import pytest

from ..browser import chromium

__all__ = ["chromium"]


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """`silvia qa` on the embedded reference server unless a test names one."""
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
