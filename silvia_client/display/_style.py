"""The names a view gives each target kind, and the views' one stylesheet, `style.css`.

Scoped to the SDK's own class names (`.silvia` and `.silvia-*`), so it styles
nothing of the page around a view. Colours come from the host where it has
them: JupyterLab's `--jp-*` variables, VS Code's `--vscode-*`; else from a
palette of our own, light or dark by the host's signal (JupyterLab's
`data-jp-theme-light`, VS Code's `vscode-light` / `vscode-dark` /
`vscode-high-contrast` body classes), else by `prefers-color-scheme`. A host's
signal beats the system's: JupyterLab's light theme on a dark system is light.
Every pair of text and background colour here is at least 4.5:1
(`tests/display/test_themes.py` measures it in Chromium). The views are plain
semantic HTML under it (lists, a `<dl>`, `<details>`), so a view stays readable
where the `<style>` is stripped (an untrusted notebook, a Git host's renderer).
"""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["KIND_NAMES", "LEGACY_NAME", "LINK_TEXT", "kind_class", "link_texts", "style"]

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
