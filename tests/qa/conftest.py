"""The QA tests' fixtures: headless Chromium (`tests/browser.py`), and no server in the
environment (the CLI tests' own): `silvia qa` on the embedded server unless a test names one."""

from ..browser import chromium
from ..cli._cli import _no_silvia_environment

__all__ = ["_no_silvia_environment", "chromium"]
