"""The views in headless Chromium, at 1200 and 400 px: under each theme signal, and exported.

Under each theme (`HOSTS`, and a system that prefers dark), nothing reaches past its column
or is clipped, and every text is legible (`themes_probe.js`); exported by nbconvert, the
session is folded and short, and nothing wraps or scrolls sideways (`export_probe.js`).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from silvia_client.display import session_html, turn_html
from silvia_client.testing import ReferenceServer

from ..browser import OFFLINE, Chromium, Page, read_report, report_script
from ._build import account, build_turn, row, web

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
WIDTHS = (1200, 400)
MIN_CONTRAST = 4.5
MAX_SESSION_HEIGHT = 800  # px at 1200 px, folds closed
FRAME_HEIGHT = 3000
THEME_WIDTH = 1700  # a theme's frame: its views' columns side by side
TEMPLATES = ("lab", "classic")
NOTEBOOK = all(importlib.util.find_spec(name) for name in ("nbformat", "nbconvert"))

JUPYTERLAB_DARK = (
    "--jp-layout-color0:#111111;--jp-content-font-color1:rgba(255,255,255,1);"
    "--jp-content-font-color2:rgba(255,255,255,0.72);--jp-content-link-color:#64b5f6;"
    "--jp-border-color2:#424242;--jp-content-font-family:system-ui,sans-serif;"
    "--jp-content-font-size1:14px;"
    "background:var(--jp-layout-color0);color:var(--jp-content-font-color1)"
)
VSCODE_DARK = (
    "--vscode-editor-background:#1e1e1e;--vscode-editor-foreground:#d4d4d4;"
    "--vscode-descriptionForeground:rgba(204,204,204,0.7);"
    "--vscode-textLink-foreground:#3794ff;--vscode-panel-border:rgba(128,128,128,0.35);"
    "background:var(--vscode-editor-background);color:var(--vscode-editor-foreground)"
)
HOSTS = {  # host -> the attributes of its <body>
    "light": "",
    "jupyterlab-dark": f'data-jp-theme-light="false" style="{JUPYTERLAB_DARK}"',
    "vscode-dark": f'class="vscode-body vscode-dark" style="{VSCODE_DARK}"',
}

# Each frame's measuring script (an expression), beside this file.
PROBES = {
    name: (Path(__file__).parent / f"{name}_probe.js").read_text(encoding="utf-8")
    for name in ("themes", "export")
}
PROBES["themes"] = PROBES["themes"].replace("%(min)s", str(MIN_CONTRAST))
FRAMES_PROBE = (
    "Object.fromEntries([...document.querySelectorAll('iframe')].map((f) => "
    f"[f.dataset.case, f.contentWindow.eval({json.dumps(PROBES)}[f.dataset.probe])]))"
)


def theme_page(body_attributes: str, views: dict[str, str]) -> str:
    columns = "".join(
        f'<div data-frame="{name} at {width}px" style="width:{width}px;flex:none">{view}</div>'
        for width in WIDTHS
        for name, view in views.items()
    )
    return (
        f'<!doctype html><html><head><meta charset="utf-8"></head><body {body_attributes}>'
        f'<div style="display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start">{columns}'
        "</div></body></html>"
    )


def exported(template: str, shown: list[Any]) -> str:
    nbformat, nbconvert = importlib.import_module("nbformat"), importlib.import_module("nbconvert")
    notebook = nbformat.v4.new_notebook()
    for value in shown:
        cell = nbformat.v4.new_code_cell("shown")
        data = {"text/html": value._repr_html_(), "text/plain": repr(value)}
        cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=1)]
        notebook.cells.append(cell)
    body, _ = nbconvert.HTMLExporter(template_name=template).from_notebook_node(notebook)
    return str(body)


def measure(
    chromium: Chromium,
    name: str,
    frames: dict[str, tuple[str, str, int]],
    window: tuple[int, int],
    *flags: str,
) -> dict[str, Any]:
    """Load `frames` (case -> probe, page, width) side by side in one launch; their reports."""
    iframes = "".join(
        f'<iframe src="{chromium.publish(f"/{name}/{n}.html", page)}" data-case="{case}" '
        f'data-probe="{probe}" style="border:0;width:{width}px;height:{FRAME_HEIGHT}px"></iframe>'
        for n, (case, (probe, page, width)) in enumerate(frames.items())
    )
    host = chromium.publish(
        f"/{name}.html",
        f'<!doctype html><html><head>{report_script(FRAMES_PROBE)}</head><body style="margin:0;'
        f'display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start">{iframes}</body></html>',
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    size = f"--window-size={window[0]},{window[1]}"
    dom = chromium.run(
        chromium.origin + host, OFFLINE, *flags, size, "--dump-dom", f"--screenshot={shot}"
    )
    assert shot.is_file()
    report: dict[str, Any] = read_report(Page(dom.decode("utf-8"), ()))
    assert list(report) == list(frames)
    return report


@pytest.fixture(scope="module")
def measured(chromium: Chromium) -> dict[str, Any]:
    # The scenario library's answers: SQL rows, market-data quotes (JSON), a pooled source.
    with ReferenceServer().client() as client:
        turn = client.chat.send("/scenario demo")
        for scenario in ("pooling", "portfolio"):
            client.chat.send(f"/scenario {scenario}", session_id=turn.session_id)
        session = client.sessions.get(str(turn.session_id))
    long_url, word = "https://e.example/" + "a" * 300, "W" * 250
    markup = '<script>alert(1)</script>"><img src=x onerror=alert(1)> \u202eevil\u202c'
    hostile = build_turn(
        f"{markup} {word}",
        row(long_url, word, web(long_url), cited_text=f"{markup} {word}"),
        row("silvia://your-account/x", markup, account(word), cited_text=f"{word}: {word}, k: v"),
        row(markup, markup, cited_text=markup),
        error=markup,
        done=False,
    )
    views = {
        "turn": turn_html(turn),
        "session": session_html(session),
        "hostile": turn_html(hostile),
    }
    frames = {
        host: ("themes", theme_page(attributes, views), THEME_WIDTH)
        for host, attributes in HOSTS.items()
    }
    for template in TEMPLATES if NOTEBOOK else ():
        page = exported(template, [turn, session.messages[3], session])
        for width in WIDTHS:
            frames[f"{template} at {width}px"] = ("export", page, width)
    # The themes side by side, the exports below them.
    out = measure(chromium, "notebook-views", frames, (3 * THEME_WIDTH + 100, 2 * FRAME_HEIGHT))
    dark = {"prefers-dark": frames["light"]}
    window = (THEME_WIDTH, FRAME_HEIGHT)
    out |= measure(chromium, "notebook-views-prefers-dark", dark, window, "--force-dark-mode")
    (ARTIFACTS / "notebook-measures.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return out


def test_every_view_fits_its_column_unclipped_legible_and_in_its_hosts_palette(
    measured: dict[str, Any],
) -> None:
    for host in (*HOSTS, "prefers-dark"):
        report = measured[host]
        assert report["views"] == 3 * len(WIDTHS), host
        assert report["texts"] > 100, host  # the probe saw the views' text
        assert report["pwned"] is None, host
        assert report["problems"] == [], f"{report['count']} problems under {host}"
        assert report["minimum"] >= MIN_CONTRAST, host
        # The luminance of what each view is drawn on: near white when light, near black if dark.
        shades = report["shades"]
        assert (min(shades) > 0.8) if host == "light" else (max(shades) < 0.05), (host, shades)


def test_nbconvert_exports_fold_the_session_and_fit_their_keys(measured: dict[str, Any]) -> None:
    if not NOTEBOOK:
        pytest.skip("the notebook extra (nbconvert, nbformat) is not installed")
    for template in TEMPLATES:
        for width in WIDTHS:
            case = f"{template} at {width}px"
            report = measured[case]
            assert report["width"] == width, case
            assert report["words"] > 20, case  # the probe saw the keys
            assert report["problems"] == [], case
            turn, message, session = report["views"]
            assert [turn["view"], message["view"], session["view"]] == [
                "silvia-turn", "silvia-messages", "silvia-session"
            ], case  # fmt: skip
            assert [turn["headings"], message["headings"], session["headings"]] == [1, 1, 3], case
            assert turn["open"] == message["open"] == session["open"] == 0, case
            if width == 1200:
                assert session["height"] <= MAX_SESSION_HEIGHT, (case, session["height"])
