"""Fixtures of the QA tests: headless Chromium, from `tests/browser.py`."""

from ..browser import chromium

__all__ = ["chromium"]
