"""The views in headless Chromium, at 1200 and 400 px: under each theme signal, and exported.

Four hosts, one page load each (`HOSTS`: plain light, a system that prefers dark,
JupyterLab's and VS Code's dark themes), each page holding every view (`VIEWS`: a turn
of every kind, a reloaded session, a hostile turn) in a 1200 px and a 400 px column,
every fold open. The probe (`themes_probe.js`) measures from boxes and computed
styles: nothing reaches past its column, no text lies outside an ancestor that clips,
every text has a contrast of at least 4.5:1 against what it is drawn on.

Exported: a notebook of a turn, a message and a three-turn session (their
`_repr_html_`) through nbconvert's lab and classic templates, framed 1200 and 400 px
wide (`export_probe.js`): the session folded and at most 800 px tall at 1200 px, the
"Sources" headings there, and with folds open no key wraps inside a word and nothing
scrolls sideways. Screenshots and measures go to `tests/artifacts/` (git-ignored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from silvia_client.display import session_html, turn_html
from silvia_client.sessions import Session

from ..browser import OFFLINE, Chromium, Page, read_report, report_script
from ._build import ACCOUNT_A, ACCOUNT_B, account, accounts, build_session, build_turn, row, web

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
WIDTHS = (1200, 400)
MIN_CONTRAST = 4.5

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
# host -> (attributes of <body>, extra Chromium flags)
HOSTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "light": ("", ()),
    "prefers-dark": ("", ("--force-dark-mode",)),
    "jupyterlab-dark": (f'data-jp-theme-light="false" style="{JUPYTERLAB_DARK}"', ()),
    "vscode-dark": (f'class="vscode-body vscode-dark" style="{VSCODE_DARK}"', ()),
}


def audit_rows() -> list[list[dict[str, Any]]]:
    """Three turns' rows, eight sources: SQL rows, market-data quotes (JSON), a long quote."""
    quote = '{{"symbol": "{}", "c": {}, "d": {}, "dp": {}, "pc": {}}}'
    rates, irs = "https://bank.example/rates", "https://irs.example/ira-limits"
    sql = "account_name: {}, balance: {}, account_id: {}"
    cards = "\n".join(
        sql.format("Card", b, i) for b, i in [(-1312.4, ACCOUNT_A), (-287.09, ACCOUNT_B)]
    )
    return [
        [row("silvia://your-account/checking", "Checking", account(),
             cited_text=sql.format("Checking", 4210.55, ACCOUNT_A)),
         row("silvia://your-account/credit-card", "Credit card", accounts(ACCOUNT_A, ACCOUNT_B),
             cited_text=cards),
         row("silvia://analysis", "Interest", {"kind": "analysis"}, cited_text="4210.55 * 0.043")],
        [row(f"silvia://market-data/finnhub/{t}", t, {"kind": "market_data", "ticker": t},
             cited_text=quote.format(t, *figures))
         for t, figures in [("AAPL", (227.48, 1.92, 0.85, 225.56)),
                            ("MSFT", (415.1, -2.3, -0.55, 417.4))]]
        + [row("silvia://your-portfolio", "Portfolio", {"kind": "portfolio"},
               cited_text="symbol: AAPL, shares: 10\nsymbol: MSFT, shares: 4")],
        [row(rates, "Best high-yield savings accounts", web(rates),
             cited_text="Top high-yield savings accounts pay around 4.30% APY."),
         row(irs, "IRA contribution limits", {"kind": "tax_reference", "url": irs},
             cited_text="For 2024, what you put into all your IRAs is limited to $7,000. " * 4)],
    ]  # fmt: skip


def _turn() -> str:
    rows = [cited for turn in audit_rows() for cited in turn]
    return turn_html(build_turn(*[piece for cited in rows for piece in ("An answer ", cited)]))


def _session() -> str:
    src = "silvia://your-account/cards"
    one = row(src, "Cards", account(ACCOUNT_A), cited_text="account_name: Card A, balance: 1")
    both = row(
        src, "Cards", accounts(ACCOUNT_A, ACCOUNT_B), cited_text="name: A, b: 1\nname: B, b: 2"
    )
    legacy = row("Old note", "Old note", cited_text="Saved before targets existed.")
    answer = {"role": "assistant", "content": "Your cards hold $3.", "created_at": "2025-01-01"}
    return session_html(
        build_session(
            [
                {"id": "m1", "role": "user", "content": "What do my cards hold?"},
                {"id": "m2", **answer, "citations": [both, legacy],
                 "inline_citations": [one, both, legacy]},
            ],
            title="Cards and notes",
        )
    )  # fmt: skip


def _hostile() -> str:
    long_url = "https://e.example/" + "a" * 300
    word = "W" * 250
    markup = '<script>alert(1)</script>"><img src=x onerror=alert(1)> \u202eevil\u202c'
    return turn_html(
        build_turn(
            f"{markup} {word}",
            row(long_url, word, web(long_url), cited_text=f"{markup} {word}"),
            row("silvia://your-account/x", markup, account(word),
                cited_text=f"{word}: {word}, k: v"),
            row(markup, markup, cited_text=markup),
            error=markup,
            done=False,
        )
    )  # fmt: skip


VIEWS = {"turn": _turn, "session": _session, "hostile turn": _hostile}

# The measuring script (an expression), beside this file; %(min)s is the contrast to meet.
PROBE = (Path(__file__).parent / "themes_probe.js").read_text(encoding="utf-8")
PROBE = PROBE.split("\n", 1)[1].replace("%(min)s", str(MIN_CONTRAST))


def host_page(body_attributes: str) -> str:
    columns = "".join(
        f'<div data-frame="{name} at {width}px" style="width:{width}px;flex:none">{view()}</div>'
        for width in WIDTHS
        for name, view in VIEWS.items()
    )
    return (
        f'<!doctype html><html><head><meta charset="utf-8">{report_script(PROBE)}</head>'
        f'<body {body_attributes}><div style="display:flex;flex-wrap:wrap;gap:24px;'
        f'align-items:flex-start">{columns}</div></body></html>'
    )


@pytest.fixture(scope="module")
def measured(chromium: Chromium, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder = tmp_path_factory.mktemp("themes")
    for host, (attributes, flags) in HOSTS.items():
        path = folder / f"{host}.html"
        path.write_text(host_page(attributes), encoding="utf-8")
        shot = ARTIFACTS / f"notebook-views-{host}.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        # One launch for both: the DOM once the page settled, and its screenshot.
        size = "--window-size=1700,3000"
        dom = chromium.run(path.as_uri(), *flags, size, "--dump-dom", f"--screenshot={shot}")
        out[host] = read_report(Page(dom.decode("utf-8"), ()))
        assert shot.is_file()
    return out


def test_every_view_fits_its_column_unclipped_legible_and_in_its_hosts_palette(
    measured: dict[str, Any],
) -> None:
    for host, report in measured.items():
        assert report["views"] == len(VIEWS) * len(WIDTHS), host
        assert report["texts"] > 100, host  # the probe saw the views' text
        assert report["pwned"] is None, host
        assert report["problems"] == [], f"{report['count']} problems under {host}"
        assert report["minimum"] >= MIN_CONTRAST, host
        # The luminance of what each view is drawn on: near white when light, near black if dark.
        shades = report["shades"]
        assert (min(shades) > 0.8) if host == "light" else (max(shades) < 0.05), (host, shades)


# nbconvert's exports ---------------------------------------------------------------------

TEMPLATES = ("lab", "classic")
MAX_SESSION_HEIGHT = 800  # px at 1200 px, folds closed
FRAME_HEIGHT = 3000
EXPORT_PROBE = (Path(__file__).parent / "export_probe.js").read_text(encoding="utf-8")


def audit_session(sources: list[list[dict[str, Any]]]) -> Session:
    messages: list[dict[str, Any]] = []
    for n, cited in enumerate(sources):
        messages.append({"id": f"q{n}", "role": "user", "content": f"Question {n + 1}?"})
        answer = f"Answer {n + 1}: " + "what the sources below say, in a sentence or two. " * 2
        messages.append({"id": f"a{n}", "role": "assistant", "content": answer,
                         "citations": cited, "inline_citations": cited})  # fmt: skip
    return build_session(messages, title="Accounts, markets and savings")


def exported(template: str) -> str:
    nbformat = pytest.importorskip("nbformat", reason="the notebook extra is not installed")
    nbconvert = pytest.importorskip("nbconvert", reason="the notebook extra is not installed")
    rows = audit_rows()
    session = audit_session(rows)
    turn = build_turn("You have $4,210.55", *rows[0][:2], " and Apple", rows[1][0], ".")
    notebook = nbformat.v4.new_notebook()
    for shown in (turn, session.messages[3], session):
        cell = nbformat.v4.new_code_cell("shown")
        data = {"text/html": shown._repr_html_(), "text/plain": repr(shown)}
        cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=1)]
        notebook.cells.append(cell)
    body, _ = nbconvert.HTMLExporter(template_name=template).from_notebook_node(notebook)
    return str(body)


@pytest.fixture(scope="module")
def exports(chromium: Chromium) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for template in TEMPLATES:
        path = chromium.publish(f"/nbconvert-{template}.html", exported(template))
        for width in WIDTHS:
            frame = (
                f'<iframe src="{path}" style="border:0;width:{width}px;height:{FRAME_HEIGHT}px">'
            )
            host = f'<!doctype html><html><body style="margin:0">{frame}</iframe></body></html>'
            window = (max(width, 500), FRAME_HEIGHT)
            shot = ARTIFACTS / f"nbconvert-{template}-{width}.png"
            chromium.screenshot(host, shot, width=window[0], height=window[1], flags=(OFFLINE,))
            probe = (
                f"document.querySelector('iframe').contentWindow.eval({json.dumps(EXPORT_PROBE)})"
            )
            probed = host.replace("<body", f"<head>{report_script(probe)}</head><body")
            page = chromium.load(probed, window=window, flags=(OFFLINE,))
            out[f"{template} at {width}px"] = read_report(page)
    (ARTIFACTS / "nbconvert-measures.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return out


def test_nbconvert_exports_fold_the_session_and_fit_their_keys(exports: dict[str, Any]) -> None:
    assert len(exports) == len(TEMPLATES) * len(WIDTHS)
    for case, report in exports.items():
        width = int(case.split(" at ")[1].removesuffix("px"))
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
