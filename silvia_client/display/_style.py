"""The views' one stylesheet, and the names a view gives each target kind.

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

__all__ = ["KIND_NAMES", "LEGACY_NAME", "LINK_TEXT", "STYLE", "kind_class", "link_texts"]

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


_LIGHT = (
    "--silvia-fg0:#1f2328;--silvia-bg0:#ffffff;--silvia-muted0:#57606a;--silvia-link0:#0550ae;"
    "--silvia-line0:#d0d7de;--silvia-tint:#eef1f4;"
    "--silvia-c-web:#0969da;--silvia-c-doc:#8250df;--silvia-c-market:#1a7f37;"
    "--silvia-c-analysis:#9a6700;--silvia-c-account:#bf3989;--silvia-c-portfolio:#cf222e;"
    "--silvia-c-none:#6e7781;"
)
_DARK = (
    "--silvia-fg0:#e6edf3;--silvia-bg0:#0d1117;--silvia-muted0:#9da7b3;--silvia-link0:#58a6ff;"
    "--silvia-line0:#3d444d;--silvia-tint:#21262d;"
    "--silvia-c-web:#4493f8;--silvia-c-doc:#ab7df8;--silvia-c-market:#3fb950;"
    "--silvia-c-analysis:#d29922;--silvia-c-account:#db61a2;--silvia-c-portfolio:#f85149;"
    "--silvia-c-none:#8b949e;"
)

STYLE = (
    "<style>"
    f".silvia{{{_LIGHT}}}"
    f"@media (prefers-color-scheme:dark){{.silvia{{{_DARK}}}}}"
    f"[data-jp-theme-light=true] .silvia,body.vscode-light .silvia{{{_LIGHT}}}"
    "[data-jp-theme-light=false] .silvia,body.vscode-dark .silvia,"
    f"body.vscode-high-contrast:not(.vscode-high-contrast-light) .silvia{{{_DARK}}}"
    ".silvia{"
    "--silvia-fg:var(--jp-content-font-color1,var(--vscode-editor-foreground,var(--silvia-fg0)));"
    "--silvia-bg:var(--jp-layout-color0,var(--vscode-editor-background,var(--silvia-bg0)));"
    "--silvia-muted:var(--jp-content-font-color2,"
    "var(--vscode-descriptionForeground,var(--silvia-muted0)));"
    "--silvia-link:var(--jp-content-link-color,"
    "var(--vscode-textLink-foreground,var(--silvia-link0)));"
    "--silvia-line:var(--jp-border-color2,var(--vscode-panel-border,var(--silvia-line0)));"
    "color:var(--silvia-fg);background:var(--silvia-bg);box-sizing:border-box;max-width:100%;"
    "font-family:var(--jp-content-font-family,system-ui,-apple-system,'Segoe UI',sans-serif);"
    "font-size:var(--jp-content-font-size1,14px);line-height:1.5;overflow-wrap:anywhere;"
    "padding:.25em .1em}"
    ".silvia *{box-sizing:border-box;max-width:100%}"
    ".silvia p{margin:.35em 0}"
    ".silvia a{color:var(--silvia-link);text-decoration:underline;text-underline-offset:2px}"
    ".silvia .silvia-chip{font-size:.75em;line-height:0;margin:0 .1em}"
    ".silvia .silvia-chip a{text-decoration:none}"
    ".silvia .silvia-heading{font-weight:600;margin:.8em 0 .2em;"
    "border-top:1px solid var(--silvia-line);padding-top:.5em}"
    ".silvia ol.silvia-sources{margin:.2em 0;padding-left:1.8em}"
    ".silvia ol.silvia-sources>li{margin:.45em 0}"
    ".silvia .silvia-label{font-weight:600}"
    ".silvia .silvia-links{white-space:normal}"
    ".silvia .silvia-links a{white-space:nowrap}"
    ".silvia .silvia-badge{display:inline-block;font-size:.75em;font-weight:600;line-height:1.5;"
    "padding:0 .5em;margin-right:.45em;border-radius:.75em;background:var(--silvia-tint);"
    "color:var(--silvia-fg);border:1px solid var(--silvia-line);"
    "border-left:.45em solid var(--silvia-kind,var(--silvia-c-none));vertical-align:.1em}"
    ".silvia .silvia-quote{display:block;margin:.2em 0 0;color:var(--silvia-muted);"
    "font-size:.9em}"
    ".silvia q.silvia-quote{quotes:'\\201C' '\\201D'}"
    ".silvia dl.silvia-kv{display:grid;grid-template-columns:fit-content(45%) minmax(0,1fr);"
    "gap:0 .8em;margin:.25em 0 0;font-size:.85em;padding-left:.6em;"
    "border-left:2px solid var(--silvia-line)}"
    ".silvia dl.silvia-kv+dl.silvia-kv{margin-top:.35em}"
    ".silvia .silvia-kv dt{color:var(--silvia-muted);min-width:0}"
    ".silvia .silvia-kv dd{margin:0;min-width:0;font-variant-numeric:tabular-nums}"
    ".silvia details.silvia-more{margin:.2em 0 0}"
    ".silvia details.silvia-more>summary{cursor:pointer;color:var(--silvia-link);"
    "font-size:.85em}"
    ".silvia .silvia-note{color:var(--silvia-muted);font-size:.85em;font-style:italic}"
    ".silvia .silvia-role{margin:.9em 0 .1em;color:var(--silvia-muted);font-size:.85em;"
    "text-transform:uppercase;letter-spacing:.04em}"
    ".silvia .silvia-glance{display:flex;flex-wrap:wrap;align-items:center;gap:.2em .7em;"
    "color:var(--silvia-muted);font-size:.85em;margin:.2em 0 .6em}"
    ".silvia .silvia-bar{display:inline-flex;width:9em;height:.7em;border-radius:.35em;"
    "overflow:hidden;background:var(--silvia-line)}"
    ".silvia .silvia-bar>span{display:block;height:100%;background:var(--silvia-kind)}"
    ".silvia .silvia-count{white-space:nowrap}"
    ".silvia .silvia-count::before{content:'';display:inline-block;width:.6em;height:.6em;"
    "border-radius:50%;margin-right:.3em;background:var(--silvia-kind,transparent)}"
    ".silvia .silvia-kind-web{--silvia-kind:var(--silvia-c-web)}"
    ".silvia .silvia-kind-tax-reference,.silvia .silvia-kind-card-document,"
    ".silvia .silvia-kind-mortgage-reference{--silvia-kind:var(--silvia-c-doc)}"
    ".silvia .silvia-kind-market-data{--silvia-kind:var(--silvia-c-market)}"
    ".silvia .silvia-kind-analysis{--silvia-kind:var(--silvia-c-analysis)}"
    ".silvia .silvia-kind-account,.silvia .silvia-kind-accounts{"
    "--silvia-kind:var(--silvia-c-account)}"
    ".silvia .silvia-kind-portfolio{--silvia-kind:var(--silvia-c-portfolio)}"
    ".silvia .silvia-kind-none{--silvia-kind:var(--silvia-c-none)}"
    ".silvia h3{margin:.2em 0 .3em;font-size:1.15em}"
    "</style>"
)
