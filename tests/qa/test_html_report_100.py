"""The HTML report of a hundred prompts: a matrix to jump from, failures only, labels whole.

One `silvia qa run` of 100 prompts against the embedded reference server
(some on broken scenarios, one on `status-500` so it does not run, one with
expectations, one over its time budget, and ids long enough to wrap) gives
the report every test here reads.

Without a browser: the matrix has a row per prompt that links to its section
and a cell per rule whose mark is the status the JSON report gives; the chart
holds every label whole. In headless Chromium (`tests/browser.py`) the page
is loaded in two frames, 1280 and 800 px wide, with every prompt opened, and
measured with the elements' boxes: nothing reaches past the page's edges, no
box scrolls sideways, every chart text lies inside the chart and every label
left of the bars, every rule id inside its header. Then "failures only" is
clicked: the passing prompts' sections and rows hide, the rest stay; clicked
again, all are back. A screenshot goes to `tests/artifacts/qa-report-100.png`
(git-ignored).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.chat import Timings
from silvia_client.cli import main
from silvia_client.qa._html import _LABEL_MOST, ChartRow, _width, _wrap, timing_chart
from silvia_client.testing import BROKEN_SCENARIOS

from ..browser import Chromium, read_report, report_script
from ..display._dom import Node, parse
from ._cli import write_script

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
COUNT = 100
WIDTHS = (1280, 800)
MARK_CLASS = {"pass": "pass", "warn": "warn", "fail": "fail", "skip": "skip", "not_run": "not-run"}


def hundred_prompts() -> list[dict[str, object]]:
    broken = list(BROKEN_SCENARIOS)
    prompts: list[dict[str, object]] = []
    for n in range(1, COUNT + 1):
        prompt: dict[str, object] = {"id": f"prompt-{n:03}", "message": f"Question {n}: accounts?"}
        if n % 7 == 4:  # a broken scenario every seventh prompt, its name in the id
            scenario = broken[n % len(broken)]
            prompt.update(id=f"{scenario}-{n}", scenario=scenario)
        prompts.append(prompt)
    prompts[4]["id"] = "W" * 64  # the widest letter, as long as an id may be
    prompts[5]["id"] = "a-very-long-prompt-id-that-says-what-it-checks-in-many-words-ok"
    prompts[6]["id"] = "x" * 64  # no place to break: broken anywhere
    prompts[7]["message"] = "月次レポートの確認と口座残高の照合 " * 8
    prompts[8]["expect"] = {"cites_kinds": ["web"]}
    prompts[9]["expect"] = {"max_turn_s": 1e-9}  # over budget: a warning
    prompts[50]["scenario"] = "status-500"  # the request fails: not run
    return prompts


@pytest.fixture(scope="module")
def hundred(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """(the HTML page, the JSON report) of one run of the hundred prompts."""
    folder = tmp_path_factory.mktemp("hundred")
    script = write_script(folder / "s.json", hundred_prompts(), name="a hundred prompts")
    page, report = folder / "r.html", folder / "r.json"
    with pytest.MonkeyPatch.context() as patch:  # the embedded reference server
        patch.delenv("SILVIA_TOKEN", raising=False)
        patch.delenv("SILVIA_BASE_URL", raising=False)
        status = main(["qa", "run", str(script), "--html", str(page), "--json", str(report)])
    assert status == 1  # the broken scenarios fail
    return page.read_text(encoding="utf-8"), json.loads(report.read_text(encoding="utf-8"))


def dom(page: str) -> Node:
    return parse(page.removeprefix("<!doctype html>\n"))


def chart_labels(report: dict[str, Any]) -> list[str]:
    """The chart's labels, as the report must write them: `N. id` of each prompt that ran."""
    return [
        f"{number}. {prompt['id']}"
        for number, prompt in enumerate(report["prompts"], start=1)
        if prompt["ran"] and prompt["timings"] is not None
    ]


def bare(text: str) -> str:
    """Text without white space: a label's line breaks after a space it does not keep."""
    return re.sub(r"\s", "", text)


# Without a browser -----------------------------------------------------------------------


def test_the_run_covers_every_mark(hundred: tuple[str, dict[str, Any]]) -> None:
    _, report = hundred
    statuses = {rule["status"] for p in report["prompts"] for rule in p["rules"].values()}
    assert statuses == {"pass", "warn", "fail", "skip", "not_run"}
    assert {p["status"] for p in report["prompts"]} == {"ok", "warn", "fail", "not_run"}


def test_the_matrix_has_a_row_per_prompt_linking_to_it(hundred: tuple[str, dict[str, Any]]) -> None:
    page, report = hundred
    root = dom(page)
    matrix = root.find("section", "matrix")
    rows = matrix.find("tbody").find_all("tr")
    assert len(rows) == COUNT
    sections = {node.attrs["id"] for node in root.find_all("details", "prompt")}
    for number, (row, prompt) in enumerate(zip(rows, report["prompts"], strict=True), start=1):
        link = row.find("th").find("a")
        assert link.attrs["href"] == f"#prompt-{number}"
        assert f"prompt-{number}" in sections
        assert link.text == f"{number}. {prompt['id']}"  # whole
        verdict = "not-run" if prompt["status"] == "not_run" else prompt["status"]
        assert row.attrs["class"] == verdict  # what "failures only" hides by


def test_each_cell_marks_the_status_the_json_report_gives(
    hundred: tuple[str, dict[str, Any]],
) -> None:
    page, report = hundred
    matrix = dom(page).find("section", "matrix")
    headers = [th.text for th in matrix.find("thead").find_all("th", "rule")]
    assert headers == [rule["id"] for rule in report["rules"]]  # the table's rules, in order
    assert headers[-2:] == ["expectations", "timing"]
    marks: dict[str, set[str]] = {}
    for row, prompt in zip(matrix.find("tbody").find_all("tr"), report["prompts"], strict=True):
        cells = row.find_all("td")
        assert len(cells) == len(headers)
        for rule, cell in zip(headers, cells, strict=True):
            css = (cell.attrs["class"] or "").split()
            assert css[0] == "m"
            assert css[1] == MARK_CLASS[prompt["rules"][rule]["status"]], (prompt["id"], rule)
            marks.setdefault(css[1], set()).add(cell.text)
            if css[1] == "fail":  # the finding says why, on hover
                assert cell.attrs["title"]
    assert marks == {"pass": {"✓"}, "warn": {"!"}, "fail": {"✗"}, "skip": {"–"}, "not-run": {"○"}}


def test_the_switch_comes_before_what_it_hides(hundred: tuple[str, dict[str, Any]]) -> None:
    page, _ = hundred
    body = dom(page).find("body")
    order = [
        node.tag + "." + (node.attrs.get("class") or "")
        for node in body.children
        if isinstance(node, Node)
    ]
    switch = order.index("input.switch")  # the CSS's `:checked ~` needs these siblings after it
    assert switch < order.index("section.matrix") < order.index("main.")
    assert "#failures-only:checked ~ main .prompt.ok" in page


def test_every_chart_label_is_whole_and_fits_its_column(
    hundred: tuple[str, dict[str, Any]],
) -> None:
    page, report = hundred
    chart = dom(page).find("svg")
    links = chart.find_all("a")
    expected = chart_labels(report)
    assert [bare(link.find("text").text) for link in links] == [bare(label) for label in expected]
    left = min(float(rect.attrs["x"] or "") for rect in chart.find_all("rect"))
    for link, label in zip(links, expected, strict=True):
        assert link.attrs["href"] == f"#prompt-{label.split('.')[0]}"
        lines = [span.text for span in link.find_all("tspan")]
        assert all(_width(line) < left for line in lines), lines
    assert any(len(link.find_all("tspan")) > 2 for link in links)  # the 64 W's wrap


@given(st.text(min_size=1, max_size=120))
def test_wrap_keeps_every_character_and_each_line_fits(label: str) -> None:
    lines = _wrap(label)
    assert bare("".join(lines)) == bare(label)
    for line in lines:
        assert len(line) == 1 or _width(line) <= _LABEL_MOST


# In a browser ----------------------------------------------------------------------------

# Run in the page that holds the report in two frames: measures each, then clicks the switch.
PROBE = """[...document.querySelectorAll('iframe')].map((frame) => {
  const doc = frame.contentDocument, root = doc.documentElement, near = 0.5;
  const box = (e) => e.getBoundingClientRect();
  const shown = (e) => e.getClientRects().length > 0;
  const inside = (a, b) => a.left >= b.left - near && a.right <= b.right + near
    && a.top >= b.top - near && a.bottom <= b.bottom + near;
  const text = (e) => (e.textContent || '').slice(0, 60);
  const problems = [];
  doc.querySelectorAll('details').forEach((d) => { d.open = true; });
  const page = {left: 0, right: root.clientWidth, top: -1e9, bottom: 1e9};
  for (const e of doc.body.querySelectorAll('*')) {
    if (shown(e) && box(e).width && !inside(box(e), page)) {
      problems.push(['past the page', e.tagName, text(e), box(e).left, box(e).right]);
    }
  }
  for (const e of doc.querySelectorAll('.box, .matrix tbody th, pre, .turn, dd')) {
    if (e.scrollWidth > e.clientWidth) {
      problems.push(['scrolls sideways', e.tagName, text(e), e.scrollWidth, e.clientWidth]);
    }
  }
  const svg = doc.querySelector('svg.chart');
  const bars = Math.min(...[...svg.querySelectorAll('rect')].map((r) => box(r).left));
  for (const t of svg.querySelectorAll('text')) {
    if (!inside(box(t), box(svg))) problems.push(['chart text clipped', text(t)]);
  }
  const labels = [...svg.querySelectorAll('a text')].map((t) => {
    if (box(t).right > bars + near) problems.push(['label over the bars', text(t)]);
    return t.textContent;
  });
  const headers = [...doc.querySelectorAll('.matrix th.rule')].map((th) => {
    const span = th.querySelector('span');
    if (!inside(box(span), box(th))) problems.push(['header clipped', text(span)]);
    return [span.textContent, box(span).height > box(span).width];
  });
  const state = () => ({
    prompts: [...doc.querySelectorAll('details.prompt')].map((e) => [e.className, shown(e)]),
    rows: [...doc.querySelectorAll('.matrix tbody tr')].map((e) => [e.className, shown(e)]),
  });
  const before = state();
  doc.getElementById('failures-only').click();
  const on = state();
  doc.getElementById('failures-only').click();
  return {
    width: root.clientWidth, scrollWidth: root.scrollWidth, svgWidth: box(svg).width,
    problems: problems.slice(0, 20), count: problems.length, labels, headers,
    before, on, after: state(),
  };
})"""


def framed(page: str) -> str:
    """A page holding `page` in a frame per width, with the probe."""
    source = html.escape(page, quote=True)
    frames = "".join(
        f'<iframe style="border: 0; display: block" width="{width}" height="1000" '
        f'srcdoc="{source}"></iframe>'
        for width in WIDTHS
    )
    return f"<!doctype html><html><head>{report_script(PROBE)}</head><body>{frames}</body></html>"


@pytest.mark.browser
def test_at_1280_and_800_px_nothing_is_clipped_and_failures_only_hides_the_passes(
    chromium: Chromium, hundred: tuple[str, dict[str, Any]]
) -> None:
    page, report = hundred
    frames: list[dict[str, Any]] = read_report(chromium.load(framed(page)))
    assert len(frames) == len(WIDTHS)
    rules = [rule["id"] for rule in report["rules"]]
    verdicts = [p["status"] for p in report["prompts"]]
    for width, frame in zip(WIDTHS, frames, strict=True):
        assert width - 20 <= frame["width"] <= width  # the frame's page (less a scroll bar)
        assert frame["count"] == 0, (width, frame["problems"])
        assert frame["scrollWidth"] <= frame["width"]  # the page does not scroll sideways
        assert frame["svgWidth"] <= frame["width"]
        labels = [bare(label) for label in frame["labels"]]
        assert labels == [bare(label) for label in chart_labels(report)]  # whole, in order
        assert frame["headers"] == [[rule, True] for rule in rules]  # whole, and upright
        for state in ("before", "after"):  # the switch off: everything shows
            assert all(shown for _, shown in frame[state]["prompts"] + frame[state]["rows"])
        on = frame["on"]
        assert [shown for _, shown in on["prompts"]] == [v != "ok" for v in verdicts]
        assert [shown for _, shown in on["rows"]] == [v != "ok" for v in verdicts]
        assert sum(v != "ok" for v in verdicts) > 10  # something stays: fails, a warn, not run


@pytest.mark.browser
def test_a_screenshot_of_a_hundred_prompts(
    chromium: Chromium, hundred: tuple[str, dict[str, Any]]
) -> None:
    # One shot to look at (each is a Chromium of its own): the 800 px and "failures
    # only" layouts are measured above.
    page, _ = hundred
    shot = ARTIFACTS / "qa-report-100.png"
    shot.unlink(missing_ok=True)
    chromium.screenshot(page, shot, width=1280, height=1600)
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_a_label_is_wrapped_as_it_is_shown_control_characters_escaped() -> None:
    label = "recording-" + "\x07" * 40 + "-end"  # a file stem may hold anything
    chart = parse(timing_chart([ChartRow(label, Timings(0.1, 0.2, 0.3))])).find("svg")
    lines = [span.text for span in chart.find_all("tspan")]
    assert "".join(lines) == "recording-" + "\\x07" * 40 + "-end"  # each drawn as its escape
    left = float(chart.find_all("rect")[0].attrs["x"] or "")
    assert len(lines) > 1
    assert all(_width(line) < left for line in lines)
