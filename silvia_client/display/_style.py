"""The names a view gives each target kind, and `style.css`, the views' one stylesheet.

It styles only `.silvia` and `.silvia-*`. Colours come from the host where it has
them (JupyterLab's `--jp-*`, VS Code's `--vscode-*`), else from a palette of our own,
light or dark by the host's signal, else by `prefers-color-scheme`. Every pair of
text and background is at least 4.5:1 (`tests/display/test_themes.py`). The views
are semantic HTML, readable where the `<style>` is stripped.
"""

from __future__ import annotations

import functools
from importlib import resources

# What the badge of each kind says; a row with no target says LEGACY_NAME.
KIND_NAMES = {
    "web": "Web page",
    "tax_reference": "Tax document",
    "card_document": "Card document",
    "mortgage_reference": "Mortgage document",
    "market_data": "Market data",
    "analysis": "Analysis",
    "account": "Account",
    "accounts": "Accounts",
    "portfolio": "Portfolio",
}
LEGACY_NAME = "Untyped"

# What a link says it opens, by its row's target kind (None: a legacy http(s) source).
LINK_TEXT = {
    "account": "Open account",
    "accounts": "Open account",
    "web": "Open page",
    None: "Open page",
    "tax_reference": "Open document",
    "card_document": "Open document",
    "mortgage_reference": "Open document",
}


def link_texts(kind: str | None, count: int) -> list[str]:
    """What each of a row's `count` links says: "Open account", or "Open account (1 of 2)"..."""
    opens = LINK_TEXT.get(kind, "Open")
    if count == 1:
        return [opens]
    return [f"{opens} ({number} of {count})" for number in range(1, count + 1)]


def kind_class(kind: str | None) -> str:
    """The class of a kind's badge and bar segment: `silvia-kind-<kind>`, or `-none`."""
    if kind is None or kind not in KIND_NAMES:
        return "silvia-kind-none"
    return "silvia-kind-" + kind.replace("_", "-")


@functools.cache
def style() -> str:
    """The `<style>` element of every view: `style.css`, beside this module, read once.

    The file breaks its rules into lines for reading; a view carries them on one
    line, as every view always has (a saved notebook's outputs stay as they are).
    """
    css = resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")
    return "<style>" + css.replace("\n", "") + "</style>"
