"""Fixtures of the docs tests: headless Chromium (tests/browser.py) and the built site."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from ..browser import chromium
from .site import build_site

__all__ = ["built_site", "chromium"]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from this tree with `mkdocs build --strict` (the `docs` extra).

    Skipped with a line saying why when mkdocs is not installed; a failure instead
    when `CI` is set, as the browser is (.ci/run installs the extra where they run).
    """
    if importlib.util.find_spec("mkdocs") is None:
        message = "mkdocs is not installed (pip install -e '.[docs]'): the site is not tested"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, and CI is set", pytrace=False)
        pytest.skip(message)
    return build_site(tmp_path_factory.mktemp("site"))
