"""The reports' privacy, and `--html`: one self-contained page in which a hostile turn runs
nothing (`hostile_run`'s payloads would set `top.document.title` if they ran), its chart at
the edges of a float, and a hundred prompts' page laid out in headless Chromium."""

from __future__ import annotations

import html
import json
import math
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.chat import Timings
from silvia_client.cli import main
from silvia_client.qa import (
    RULES,
    Observer,
    Prompt,
    PromptResult,
    RunResult,
    Script,
    assert_conforms,
    check,
)
from silvia_client.qa._html import _LABEL_MOST, ChartRow, _width, _wrap, timing_chart
from silvia_client.qa._privacy import REDACTED, redact, redact_text
from silvia_client.qa.report import write_html
from silvia_client.testing import BROKEN_RULES, BROKEN_SCENARIOS, ReferenceServer

from ..browser import Chromium, read_report, report_script
from ..display._dom import Node, parse
from ._helpers import (
    AAPL,
    CARD_ONE,
    CARD_TWO,
    SECRET,
    VENDORS,
    account,
    assert_private,
    cases,
    cite,
    observe_events,
    report,
    run_cli,
    table,
    turn_events,
    write_script,
)

ARTIFACTS = Path(__file__).parents[1] / "artifacts"


def test_each_broken_scenario_fails_its_cell_and_no_output_holds_a_provider_or_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", SECRET)
    broken = [{"id": n, "message": "How are my accounts?", "scenario": n} for n in BROKEN_RULES]
    script = write_script(tmp_path / "s.json", [{"message": "Hi", "id": "demo"}, *broken])
    junit, path, page = tmp_path / "junit.xml", tmp_path / "report.json", tmp_path / "r.html"
    with ReferenceServer(token=SECRET).serve_loopback() as url:
        argv = ["qa", "run", str(script), "--base-url", url, "--junit", str(junit)]
        status, out, err = run_cli([*argv, "--json", str(path), "--html", str(page)], capsys)
    assert status == 1
    prompts = ["demo", *BROKEN_RULES]
    for rule, row in table(out).items():
        for prompt, cell in zip(prompts, row, strict=True):
            expected = "pass"
            if BROKEN_RULES.get(prompt) == rule:
                expected = "warn" if rule == "no-vendor-names" else "FAIL"
            elif prompt == "broken-stream-complete" and rule == "reload-agrees":
                expected = "-"  # an incomplete turn is not reloaded
            assert cell == expected, (rule, prompt)
    assert "broken-no-vendor-names: warn (0 error(s), 3 warning(s))" in err
    assert out.rstrip().splitlines()[-1].startswith("FAIL: 19 error(s), 3 warning(s)")

    data = report(path)
    assert (data["ok"], data["errors"], data["warnings"]) == (False, 19, 3)
    assert [rule["id"] for rule in data["rules"]] == [rule.id for rule in RULES]
    by_id = {prompt["id"]: prompt for prompt in data["prompts"]}
    assert (by_id["demo"]["ok"], by_id["demo"]["findings"]) == (True, [])
    assert by_id["demo"]["session_id"]
    assert by_id["demo"]["complete"] is True
    for name, rule in BROKEN_RULES.items():
        assert {finding["rule"] for finding in by_id[name]["findings"]} == {rule}
        status_of = by_id[name]["rules"][rule]["status"]
        assert status_of == ("warn" if rule == "no-vendor-names" else "fail")
    # A failure names its request and session, in the report, the table and the progress.
    fits = by_id["broken-target-fits-source"]
    pair = (fits["request_id"], fits["session_id"])
    assert all(pair)
    assert {(f["request_id"], f["session_id"]) for f in fits["findings"]} == {pair}
    ids = f"request {pair[0]}, session {pair[1]}"
    line = next(line for line in out.splitlines() if line.startswith("FAIL  target-fits-source"))
    assert line.startswith("FAIL  target-fits-source  [broken-target-fits-source]")
    assert line.endswith(f"  ({ids})")
    progress = next(line for line in err.splitlines() if "] broken-target-fits-source: " in line)
    assert progress.endswith(f"; {ids}")
    assert by_id["broken-stream-complete"]["rules"]["reload-agrees"] == {
        "status": "skip",
        "reason": "the turn did not complete, so it was not reloaded",
    }

    (suite,) = ET.parse(junit).getroot().iter("testsuite")
    tests = cases(junit)
    assert len(tests) == 12 * len(RULES) == int(suite.get("tests", ""))

    # Each case's time is its prompt's turn time (to done, else the last moment reached).
    def turn_time(timings: dict[str, float | None] | None) -> float:
        moments = (timings or {}).get
        return moments("done") or moments("first_text") or moments("first_byte") or 0.0

    done = {prompt["id"]: turn_time(prompt["timings"]) for prompt in data["prompts"]}
    for case in tests:
        prompt_id = (case.get("classname") or "").removeprefix("silvia.qa.")
        assert float(case.get("time", "")) == pytest.approx(done[prompt_id], abs=0.001)
    assert any(seconds > 0 for seconds in done.values())
    assert float(suite.get("time", "")) == pytest.approx(sum(done.values()), abs=0.02)
    failed = {(c.get("classname"), c.get("name")) for c in tests if c.find("failure") is not None}
    assert failed == {
        (f"silvia.qa.{name}", rule)
        for name, rule in BROKEN_RULES.items()
        if rule != "no-vendor-names"
    }
    assert int(suite.get("failures", "")) == len(failed)
    skipped = [(c.get("classname"), c.get("name")) for c in tests if c.find("skipped") is not None]
    assert skipped == [("silvia.qa.broken-stream-complete", "reload-agrees")]
    (vendor,) = [t for t in tests if t.get("classname") == "silvia.qa.broken-no-vendor-names"
                 and t.get("name") == "no-vendor-names"]  # fmt: skip
    assert vendor.find("failure") is None
    assert "warn  no-vendor-names" in (vendor.findtext("system-out") or "")
    failure = next(
        c for c in tests if c.get("name") == "target-parses" and c.find("failure") is not None
    )
    assert failure.find("failure").get("type") == "target-parses"  # type: ignore[union-attr]

    # Providers were there, and were hidden; vendor names too, the answers' in the page.
    shown = page.read_text(encoding="utf-8")
    assert "<redacted>" in out
    assert "&lt;redacted&gt;" in shown
    assert "&lt;vendor&gt;" in shown
    for text in (out, err, junit.read_text(encoding="utf-8"), path.read_text(encoding="utf-8")):
        assert_private(text)
    assert_private(shown)


def test_assertions_and_redaction_hold_no_provider() -> None:
    # A check's findings, result and observation: test_rules.py, over every broken scenario.
    with Observer.reference() as qa:
        observation = qa.observe("How are my accounts?", scenario="broken-target-parses")
        vendor = qa.observe("How are my accounts?", scenario="broken-no-vendor-names")
    with pytest.raises(AssertionError) as caught:
        assert_conforms(observation)
    assert_private(str(caught.value))  # its words: test_pytest_plugin.py
    assert_conforms(vendor)  # a warning does not fail...
    with pytest.raises(AssertionError) as strict:
        assert_conforms(vendor, strict=True)  # ...unless asked
    assert "warn  no-vendor-names" in str(strict.value)
    assert_private(str(strict.value))
    value = {
        "kind": "SnapTrade",
        "provider": "manual",
        "accounts": [{"accountId": "a", "provider": "plaid"}, {"accountId": "b", "provider": None}],
        "PLAID": ["via Plaid", "manual", "Manual account", 3],
    }
    assert redact(value) == {
        "kind": REDACTED,  # a provider value, wherever it is
        "provider": REDACTED,
        "accounts": [
            {"accountId": "a", "provider": REDACTED},
            {"accountId": "b", "provider": None},
        ],
        REDACTED: ["via <vendor>", REDACTED, "Manual account", 3],
    }
    assert redact_text("silvia://your-account/snap-trade-brokerage") == (
        "silvia://your-account/<vendor>-brokerage"
    )


# `{js}` is what a payload would run: it marks the page with the payload's number.
TEMPLATES = [
    "<script>{js}</script>", "<img src=x onerror={js}>", '<img src="x" onerror="{js}">',
    "<svg onload={js}>", "<svg><script>{js}</script></svg>", "<details open ontoggle={js}>",
    '<iframe srcdoc="<script>{js}</script>"></iframe>', '<a href="javascript:{js}">x</a>',
    '<meta http-equiv="refresh" content="0;url=javascript:{js}">',
    '"><script>{js}</script>', "'><img src=x onerror={js}>", '" onmouseover="{js}" x="',
    "</summary></details></main><script>{js}</script>", "</style><script>{js}</script>",
    "</title><script>{js}</script>", "<!--<script>{js}</script>-->", "<!--", "<plaintext>",
    "javascript:{js}", " JaVaScRiPt:{js}", "data:text/html,<script>{js}</script>",
    "[x](javascript:{js}) **b** _e_ `c` $x$ # h | t", "\u202eevil.exe\u202c",
]  # fmt: skip


def hostile_result(number: int, p: str) -> PromptResult:
    """A prompt whose message, turn text, titles, quotes, sources and targets all carry `p`."""
    streamed = [
        cite(p, {"kind": "web", "url": p}, title=p, cited_text=p),
        cite(f"https://e.example/{number}", {"kind": "web", "url": p}, title=p, cited_text=p),
        cite(AAPL, {"kind": "market_data", "ticker": p}, title=p, cited_text=p),
        cite(
            "silvia://your-account/credit-card", account(CARD_ONE, CARD_TWO), title=p, cited_text=p
        ),
        cite("silvia://your-account/x", account(p, provider="snaptrade"), title=p, cited_text=p),
    ]
    # Providers ("plaid", "snaptrade") only in the targets, where no report may show them.
    events = turn_events(streamed, text=f"Answer {p}", message={"target": p})
    timings = Timings(0.01 * number, 0.02 * number, 0.1 * number)  # for the chart
    observation = replace(observe_events(events, prompt=f"Ask {p}"), timings=timings)
    prompt = Prompt(id=f"{number}-{p}", message=f"Ask {p}", scenario=p)  # ids are checked
    return PromptResult(prompt, observation, check(observation))


def page_of(run: RunResult, web_url: str | None = None) -> str:
    """The page `write_html` writes for `run`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        write_html(run, path, web_url=web_url)
        return path.read_text(encoding="utf-8")


def dom(page: str) -> Node:
    assert page.startswith("<!doctype html>\n")
    return parse(page.removeprefix("<!doctype html>\n"))


def hostile_run() -> RunResult:
    results = []
    for number, template in enumerate(TEMPLATES, start=1):
        js = f"top.document.title='pwned-{number}';top.__silvia_pwned={number}"
        results.append(hostile_result(number, template.replace("{js}", js)))
    script = Script(tuple(result.prompt for result in results), name="<script>x</script>")
    return RunResult(script, "https://staging.example/<b>", tuple(results))


def test_the_page_is_well_formed_self_contained_and_private() -> None:
    page = page_of(hostile_run(), web_url="https://app.example")
    root = dom(page)
    prompts = [node for node in root.find_all("details") if "prompt" in (node.attrs["class"] or "")]
    assert len(prompts) == len(TEMPLATES)
    assert [node.attrs["id"] for node in prompts] == [
        f"prompt-{n}" for n in range(1, len(TEMPLATES) + 1)
    ]
    # No element, attribute or link of a payload's: only the report's own.
    assert root.tags() <= {
        "#root", "html", "head", "meta", "title", "style", "body", "header", "main", "section",
        "h1", "h2", "p", "ul", "ol", "li", "strong", "em", "span", "div", "sup", "a", "br", "q",
        "h3", "pre", "details", "summary", "dl", "dt", "dd", "svg", "g", "rect", "text", "line",
        "tspan", "input", "label", "table", "thead", "tbody", "tr", "th", "td",
    }  # fmt: skip
    for node in root.iter():
        assert not any(name.startswith("on") for name in node.attrs), node.attrs
        href = node.attrs.get("href")
        if href is not None:  # the web's, or a jump of the report's own to one of its parts
            assert href.startswith(("https://", "http://")) or re.fullmatch(
                r"#prompt-[0-9]+|#matrix", href
            ), href
    assert root.find("head").find("title").text == "silvia qa: <script>x</script>"
    # Nothing to fetch: no script, stylesheet, font or image from anywhere.
    assert not re.search(r"<(script|link|iframe|object|embed|img)\b", page, re.IGNORECASE)
    assert "@import" not in page
    assert "url(" not in page
    assert "Content-Security-Policy" in page
    assert not VENDORS.search(page)  # providers and vendor names are redacted


# The chart at the edges of a float --------------------------------------------------------

EDGE_TIMES = [0.0, -0.0, 5e-324, 1e-310, 1e-7, 1.7e308, math.inf, math.nan, -1.0]


def timed_run(times: list[Timings]) -> RunResult:
    results = []
    for number, timings in enumerate(times, start=1):
        result = hostile_result(number, "x")
        observation = replace(result.observation, timings=timings)
        results.append(replace(result, observation=observation))
    return RunResult(Script(tuple(result.prompt for result in results)), "t", tuple(results))


def test_the_chart_draws_any_time_alike_flat_at_zero_and_a_huge_one_as_a_day() -> None:
    for seconds in EDGE_TIMES:
        page = page_of(timed_run([Timings(seconds, seconds, seconds)] * 3))
        chart = dom(page).find("svg")
        widths = [float(bar.attrs["width"] or "") for bar in chart.find_all("rect")]
        assert len(widths) == 6, seconds
        assert all(1 <= width <= 520 for width in widths), seconds
        assert len(set(widths)) == 1, seconds  # one time, one length
        ticks = [float(line.attrs["x1"] or "") for line in chart.find_all("line")]
        left = float(chart.find_all("rect")[0].attrs["x"] or "")  # where the bars start
        assert all(left <= x <= left + 520 for x in ticks), seconds
        for node in chart.iter():  # every coordinate a plain number
            values = node.attrs.values()
            assert not any(re.search("nan|inf|e[+-]", value or "") for value in values), seconds
        assert not re.search(r"\d{40}", page), seconds  # and no 309-digit time on the page
    for seconds in [0.0, 5e-324]:
        chart = dom(page_of(timed_run([Timings(seconds, seconds, seconds)] * 2))).find("svg")
        assert {bar.attrs["width"] for bar in chart.find_all("rect")} == {"1.0"}, seconds
        assert chart.find_all("text")[0].text == "0 s", seconds
        assert len(chart.find_all("line")) == 1, seconds  # one gridline: a chart of scale 0
    day = bar_widths(Timings(0.1, 0.5, 1.0), Timings(1, 86_400, 86_400))
    huge = bar_widths(Timings(0.1, 0.5, 1.0), Timings(1, 1.7e308, 1.7e308))
    assert huge == day
    assert huge[2:] == [round(520 * 86_400 / 100_000, 1)] * 2  # on a scale of 0 to 100000 s
    chart = dom(page_of(timed_run([Timings(1, 1.7e308, math.inf)]))).find("svg")
    assert "first text 1.7e+308 s, done inf s" in chart.text  # the tooltip says them as they are


def bar_widths(*times: Timings) -> list[float]:
    chart = dom(page_of(timed_run(list(times)))).find("svg")
    return [float(bar.attrs["width"] or "") for bar in chart.find_all("rect")]


COUNT = 100
WIDTHS = (1280, 800)
MARK_CLASS = {"pass": "pass", "warn": "warn", "fail": "fail", "skip": "skip", "not_run": "not-run"}


@pytest.fixture(scope="module")
def hundred(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """(the HTML page, the JSON report) of one run of the hundred prompts."""
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
    folder = tmp_path_factory.mktemp("hundred")
    script = write_script(folder / "s.json", prompts, name="a hundred prompts")
    page, report = folder / "r.html", folder / "r.json"
    with pytest.MonkeyPatch.context() as patch:  # the embedded reference server
        patch.delenv("SILVIA_TOKEN", raising=False)
        patch.delenv("SILVIA_BASE_URL", raising=False)
        status = main(["qa", "run", str(script), "--html", str(page), "--json", str(report)])
    assert status == 1  # the broken scenarios fail
    return page.read_text(encoding="utf-8"), json.loads(report.read_text(encoding="utf-8"))


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


def test_the_matrix_and_the_chart_link_each_prompt_whole_and_mark_each_status(
    hundred: tuple[str, dict[str, Any]],
) -> None:
    page, report = hundred  # a run with every mark:
    statuses = {rule["status"] for p in report["prompts"] for rule in p["rules"].values()}
    assert statuses == {"pass", "warn", "fail", "skip", "not_run"}
    assert {p["status"] for p in report["prompts"]} == {"ok", "warn", "fail", "not_run"}
    root = dom(page)
    matrix = root.find("section", "matrix")
    rows = matrix.find("tbody").find_all("tr")
    assert len(rows) == COUNT
    details = root.find_all("details", "prompt")
    sections = {node.attrs["id"] for node in details}
    for section, prompt in zip(details, report["prompts"], strict=True):
        # Open where there is something to see, with each finding's rule.
        assert ("open" in section.attrs) is (prompt["status"] in ("fail", "warn")), prompt["id"]
        for finding in prompt["findings"]:
            assert finding["rule"] in section.find("ol", "findings").text, prompt["id"]
    good = details[0]  # the turn as the notebook display renders it
    assert [node for node in good.iter() if "silvia-chip" in (node.attrs.get("class") or "")]
    assert good.find("ol", "silvia-sources").find_all("li")
    for number, (row, prompt) in enumerate(zip(rows, report["prompts"], strict=True), start=1):
        link = row.find("th").find("a")
        assert link.attrs["href"] == f"#prompt-{number}"
        assert f"prompt-{number}" in sections
        assert link.text == f"{number}. {prompt['id']}"  # whole
        verdict = "not-run" if prompt["status"] == "not_run" else prompt["status"]
        assert row.attrs["class"] == verdict  # what "failures only" hides by
    headers = [th.text for th in matrix.find("thead").find_all("th", "rule")]
    assert headers == [rule["id"] for rule in report["rules"]]  # the table's rules, in order
    assert headers[-2:] == ["expectations", "timing"]
    marks: dict[str, set[str]] = {}
    for row, prompt in zip(rows, report["prompts"], strict=True):
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
    children = [node for node in root.find("body").children if isinstance(node, Node)]
    order = [node.tag + "." + (node.attrs.get("class") or "") for node in children]
    switch = order.index("input.switch")  # the CSS's `:checked ~` needs these siblings after it
    assert switch < order.index("section.matrix") < order.index("main.")
    assert "#failures-only:checked ~ main .prompt.ok" in page
    # Every chart label is whole, escaped, and fits its column.
    chart = root.find("svg")
    links = chart.find_all("a")
    expected = chart_labels(report)
    assert [bare(link.find("text").text) for link in links] == [bare(label) for label in expected]
    left = min(float(rect.attrs["x"] or "") for rect in chart.find_all("rect"))
    for link, label in zip(links, expected, strict=True):
        assert link.attrs["href"] == f"#prompt-{label.split('.')[0]}"
        lines = [span.text for span in link.find_all("tspan")]
        assert all(_width(line) < left for line in lines), lines
    assert any(len(link.find_all("tspan")) > 2 for link in links)  # the 64 W's wrap
    label = "recording-" + "\x07" * 40 + "-end"  # a file stem may hold anything
    chart = parse(timing_chart([ChartRow(label, Timings(0.1, 0.2, 0.3))])).find("svg")
    lines = [span.text for span in chart.find_all("tspan")]
    assert "".join(lines) == "recording-" + "\\x07" * 40 + "-end"  # each drawn as its escape
    left = float(chart.find_all("rect")[0].attrs["x"] or "")
    assert len(lines) > 1
    assert all(_width(line) < left for line in lines)


@given(st.text(min_size=1, max_size=120))
def test_wrap_keeps_every_character_and_each_line_fits(label: str) -> None:
    lines = _wrap(label)
    assert bare("".join(lines)) == bare(label)
    for line in lines:
        assert len(line) == 1 or _width(line) <= _LABEL_MOST


# In a browser: one Chromium for every measurement --------------------------------------

HOSTILE_PROBE = """(frame) => {
  const doc = frame.contentDocument;
  return {
    title: doc.title, scripts: doc.scripts.length,
    prompts: doc.querySelectorAll('details.prompt').length,
    handlers: [...doc.querySelectorAll('*')].flatMap(
      (e) => e.getAttributeNames().filter((n) => n.startsWith('on'))),
    links: [...doc.querySelectorAll('a')].map(
      (a) => new URL(a.getAttribute('href') ?? '', doc.baseURI).protocol),
  };
}"""
# Measures a frame of the hundred prompts, then clicks the switch and back.
LAYOUT_PROBE = """(frame) => {
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
}"""
PROBE = f"""(() => {{
  const frames = [...document.querySelectorAll('iframe')];
  return {{
    title: document.title, pwned: window.__silvia_pwned ?? null,
    layout: frames.slice(0, 2).map({LAYOUT_PROBE}),
    hostile: frames.slice(2).map({HOSTILE_PROBE}),
  }};
}})()"""
TITLE = "silvia qa: <script>x</script>"


@pytest.mark.browser
def test_in_chromium_a_hostile_report_runs_nothing_and_a_hundred_prompts_fit_and_show(
    chromium: Chromium, hundred: tuple[str, dict[str, Any]]
) -> None:
    hostile = page_of(hostile_run())
    policy = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]*>', hostile)
    assert policy is not None
    bare_page = hostile.replace(policy.group(0), "")  # escaping alone must keep it inert
    page, report = hundred
    shot = ARTIFACTS / "qa-report-100.png"  # of the top frame: the hundred prompts at 1280 px
    ARTIFACTS.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    frames = "".join(  # each page framed at its width, beside the probe
        f'<iframe style="border: 0; display: block" width="{width}" height="1000" '
        f'srcdoc="{html.escape(framed, quote=True)}"></iframe>'
        for framed, width in [*((page, w) for w in WIDTHS), (hostile, 1280), (bare_page, 1280)]
    )
    head = f"<title>probe</title>{report_script(PROBE)}"
    pages = f"<!doctype html><html><head>{head}</head><body>{frames}</body></html>"
    loaded = chromium.load(pages, window=(1300, 1000), flags=(f"--screenshot={shot}",))
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert {path.split("?")[0] for path in loaded.requests[1:]} <= {"/favicon.ico"}
    found: dict[str, Any] = read_report(loaded)
    assert found["pwned"] is None, f"payload {found['pwned']} ran a script"
    assert found["title"] == "probe"
    for frame in found["hostile"]:
        assert frame["title"] == TITLE
        assert frame["scripts"] == 0
        assert frame["prompts"] == len(TEMPLATES)
        assert frame["handlers"] == []
        assert set(frame["links"]) <= {"http:", "https:"}

    rules = [rule["id"] for rule in report["rules"]]
    verdicts = [p["status"] for p in report["prompts"]]
    assert len(found["layout"]) == len(WIDTHS)
    for width, frame in zip(WIDTHS, found["layout"], strict=True):
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
