"""`silvia qa run --html`: one self-contained page, and a hostile turn runs nothing in a browser.

The structural tests parse the page with `html.parser` (every element closed
where it opened). The browser tests load the report of a hostile run in
headless Chromium (`tests/browser.py`): every string the server or the script
controls carries a payload that would set `document.title` and a global if it
ran. The page is loaded as written (with its Content-Security-Policy) and with
the policy removed, so escaping alone is shown to hold. A screenshot of the
report goes to `tests/artifacts/` (git-ignored).
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from silvia_client.chat import Timings
from silvia_client.qa import PromptResult, RunResult, Script, check
from silvia_client.qa._html import html_report
from silvia_client.qa.script import Expectations, Prompt

from ..browser import Chromium, read_report, report_script
from ..display._dom import Node, parse
from ._cli import run_cli, write_script
from ._helpers import AAPL, CARD_ONE, CARD_TWO, account, cite, observe_events, turn_events

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
EXAMPLE = Path(__file__).parents[2] / "examples" / "qa_script.json"
VENDORS = re.compile(r"plaid|snaptrade", re.IGNORECASE)
OWN_LINK = re.compile(r"#prompt-[0-9]+|#matrix")

# `{js}` is what a payload would run: it marks the page with the payload's number.
TEMPLATES = [
    "<script>{js}</script>",
    "<img src=x onerror={js}>",
    '<img src="x" onerror="{js}">',
    "<svg onload={js}>",
    "<svg><script>{js}</script></svg>",
    "<details open ontoggle={js}>",
    '<iframe srcdoc="<script>{js}</script>"></iframe>',
    '<meta http-equiv="refresh" content="0;url=javascript:{js}">',
    '<a href="javascript:{js}">x</a>',
    '"><script>{js}</script>',
    "'><img src=x onerror={js}>",
    '" onmouseover="{js}" x="',
    "</summary></details></main><script>{js}</script>",
    "</style><script>{js}</script>",
    "</title><script>{js}</script>",
    "<!--<script>{js}</script>-->",
    "<!--",
    "<plaintext>",
    "javascript:{js}",
    " JaVaScRiPt:{js}",
    "data:text/html,<script>{js}</script>",
    "[x](javascript:{js}) **b** _e_ `c` $x$ # h | t",
    "\u202eevil.exe\u202c",
]


def payloads() -> Iterator[tuple[int, str]]:
    for number, template in enumerate(TEMPLATES, start=1):
        js = f"top.document.title='pwned-{number}';top.__silvia_pwned={number}"
        yield number, template.replace("{js}", js)


def hostile_result(number: int, p: str) -> PromptResult:
    """A prompt whose message, turn text, titles, quotes, sources and targets all carry `p`."""
    streamed = [
        cite(p, {"kind": "web", "url": p}, title=p, cited_text=p),
        cite(f"https://e.example/{number}", {"kind": "web", "url": p}, title=p, cited_text=p),
        cite(AAPL, {"kind": "market_data", "ticker": p}, title=p, cited_text=p),
        cite(
            "silvia://your-account/credit-card",
            account(CARD_ONE, CARD_TWO),
            title=p,
            cited_text=p,
        ),
        cite("silvia://your-account/x", account(p, provider="snaptrade"), title=p, cited_text=p),
    ]
    # Providers ("plaid", "snaptrade") only in the targets, where no report may show them.
    events = turn_events(streamed, text=f"Answer {p}", message={"target": p})
    timings = Timings(0.01 * number, 0.02 * number, 0.1 * number)  # for the chart
    observation = replace(observe_events(events, prompt=f"Ask {p}"), timings=timings)
    prompt = Prompt(id=f"{number}-{p}", message=f"Ask {p}", scenario=p)  # ids are checked
    return PromptResult(prompt, observation, check(observation))


def hostile_run() -> RunResult:
    results = [hostile_result(number, p) for number, p in payloads()]
    script = Script(tuple(result.prompt for result in results), name="<script>x</script>")
    return RunResult(script, "https://staging.example/<b>", tuple(results))


def test_the_page_is_well_formed_with_a_section_per_prompt(tmp_path: Path) -> None:
    run = hostile_run()
    page = html_report(run, web_url="https://app.example")
    assert page.startswith("<!doctype html>\n")
    root = parse(page.removeprefix("<!doctype html>\n"))
    prompts = [node for node in root.find_all("details") if "prompt" in (node.attrs["class"] or "")]
    assert len(prompts) == len(TEMPLATES)
    assert [node.attrs["id"] for node in prompts] == [
        f"prompt-{n}" for n in range(1, len(TEMPLATES) + 1)
    ]
    # No element, attribute or link of a payload's: only the report's own.
    assert root.tags() <= {
        "#root", "html", "head", "meta", "title", "style", "body", "header", "main", "section",
        "h1", "h2", "p", "ul", "ol", "li", "strong", "em", "span", "div", "sup", "a", "br", "q",
        "pre", "details", "summary", "dl", "dt", "dd", "svg", "g", "rect", "text", "line",
        "tspan", "input", "label", "table", "thead", "tbody", "tr", "th", "td",
    }  # fmt: skip
    for node in root.iter():
        assert not any(name.startswith("on") for name in node.attrs), node.attrs
        href = node.attrs.get("href")
        if href is not None:  # the web's, or a jump of the report's own to one of its parts
            assert href.startswith(("https://", "http://")) or OWN_LINK.fullmatch(href), href
    assert root.find("head").find("title").text == "silvia qa: <script>x</script>"
    # The chart labels each prompt by its whole id, as text (on lines), linking to its section.
    # (Compared without white space: a line breaks after a space, which it does not end with.)
    links = {
        re.sub(r"\s", "", node.find("text").text): node.attrs["href"]
        for node in root.find("svg").find_all("a")
    }
    p = TEMPLATES[1].replace("{js}", "top.document.title='pwned-2';top.__silvia_pwned=2")
    assert links[re.sub(r"\s", "", f"2. 2-{p}")] == "#prompt-2"  # whole, not cut at 24 chars


def test_self_contained_and_private() -> None:
    page = html_report(hostile_run())
    # Nothing to fetch: no script, stylesheet, font or image from anywhere.
    assert not re.search(r"<(script|link|iframe|object|embed|img)\b", page, re.IGNORECASE)
    assert "@import" not in page
    assert "url(" not in page
    assert "Content-Security-Policy" in page
    assert not VENDORS.search(page)  # providers and vendor names are redacted


def test_qa_run_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(
        tmp_path / "s.json",
        [
            {"id": "good", "message": "Cards?", "scenario": "accounts"},
            {"id": "bad", "message": "Apple?", "scenario": "broken-target-fits-source"},
        ],
    )
    out = tmp_path / "report.html"
    status, _, _ = run_cli(["qa", "run", str(script), "--html", str(out)], capsys)
    assert status == 1
    root = parse(out.read_text(encoding="utf-8").removeprefix("<!doctype html>\n"))
    good, bad = (
        node for node in root.find_all("details") if "prompt" in (node.attrs["class"] or "")
    )
    assert "ok" in (good.attrs["class"] or "").split()
    assert "open" not in good.attrs
    assert "fail" in (bad.attrs["class"] or "").split()
    assert "open" in bad.attrs
    findings = bad.find("ol", "findings")
    assert "target-fits-source" in findings.text
    chips = [node for node in good.iter() if "silvia-chip" in (node.attrs.get("class") or "")]
    assert chips  # the turn as the notebook display renders it
    assert good.find("ol", "silvia-sources").find_all("li")


# In a browser ---------------------------------------------------------------------------

PROBE = """(() => ({
  title: document.title,
  pwned: window.__silvia_pwned ?? null,
  scripts: document.scripts.length,
  prompts: document.querySelectorAll('details.prompt').length,
  handlers: [...document.querySelectorAll('*')].flatMap(
    (e) => e.getAttributeNames().filter((n) => n.startsWith('on'))),
  links: [...document.querySelectorAll('a')].map(
    (a) => new URL(a.getAttribute('href') ?? '', document.baseURI).protocol),
}))()"""
TITLE = "silvia qa: &lt;script&gt;x&lt;/script&gt;"


@pytest.mark.browser
def test_a_hostile_report_runs_no_script_in_chromium(chromium: Chromium) -> None:
    page = html_report(hostile_run())
    # As written: the title the report set, untouched; nothing requested but the page.
    loaded = chromium.load(page)
    assert f"<title>{TITLE}</title>" in loaded.dom
    assert {path.split("?")[0] for path in loaded.requests[1:]} <= {"/favicon.ico"}

    # Without its Content-Security-Policy, with a probe: escaping alone keeps it inert.
    policy = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]*>', page)
    assert policy is not None
    probed = page.replace(policy.group(0), report_script(PROBE))
    report: dict[str, Any] = read_report(chromium.load(probed))
    assert report["pwned"] is None, f"payload {report['pwned']} ran a script"
    assert report["title"] == html.unescape(TITLE)
    assert report["scripts"] == 1  # the probe alone
    assert report["prompts"] == len(TEMPLATES)
    assert report["handlers"] == []
    assert set(report["links"]) <= {"http:", "https:"}


@pytest.mark.browser
def test_a_screenshot_of_the_report(
    chromium: Chromium, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))["prompts"][:4]
    broken: dict[str, object] = {
        "id": "broken",
        "message": "Apple?",
        "scenario": "broken-target-fits-source",
    }
    script = write_script(tmp_path / "s.json", [*example, broken])
    out = tmp_path / "report.html"
    run_cli(["qa", "run", str(script), "--html", str(out)], capsys)
    shot = ARTIFACTS / "qa-report.png"
    shot.unlink(missing_ok=True)
    chromium.screenshot(out.read_text(encoding="utf-8"), shot)
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_expectations_do_not_break_the_page() -> None:
    result = hostile_result(1, "<b>")
    prompt = Prompt(id="x", message="m", expect=Expectations(no_citations=True))
    observation = result.observation
    checked = check(observation, expect=prompt.expect)
    run = RunResult(Script((prompt,)), "t", (PromptResult(prompt, observation, checked),))
    root = parse(html_report(run).removeprefix("<!doctype html>\n"))
    assert "expectations" in root.find("ol", "findings").text


# The chart at the edges of a float --------------------------------------------------------

EDGE_TIMES = [0.0, -0.0, 5e-324, 1e-310, 1e-7, 1.7e308, math.inf, math.nan, -1.0]


def timed_run(times: list[Timings]) -> RunResult:
    results = []
    for number, timings in enumerate(times, start=1):
        result = hostile_result(number, "x")
        observation = replace(result.observation, timings=timings)
        results.append(replace(result, observation=observation))
    return RunResult(Script(tuple(result.prompt for result in results)), "t", tuple(results))


def chart_of(page: str) -> Node:
    return parse(page.removeprefix("<!doctype html>\n")).find("svg")


def test_the_chart_draws_any_time_alike_for_every_prompt() -> None:
    for seconds in EDGE_TIMES:
        page = html_report(timed_run([Timings(seconds, seconds, seconds)] * 3))
        chart = chart_of(page)
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


def test_all_zero_or_tiny_times_draw_flat_bars_on_a_single_tick() -> None:
    for seconds in [0.0, 5e-324]:
        chart = chart_of(html_report(timed_run([Timings(seconds, seconds, seconds)] * 2)))
        assert {bar.attrs["width"] for bar in chart.find_all("rect")} == {"1.0"}, seconds
        assert chart.find_all("text")[0].text == "0 s", seconds
        assert len(chart.find_all("line")) == 1, seconds  # one gridline: a chart of scale 0


def bar_widths(*times: Timings) -> list[float]:
    chart = chart_of(html_report(timed_run(list(times))))
    return [float(bar.attrs["width"] or "") for bar in chart.find_all("rect")]


def test_a_huge_time_is_drawn_as_a_day_and_the_others_keep_their_scale() -> None:
    day = bar_widths(Timings(0.1, 0.5, 1.0), Timings(1, 86_400, 86_400))
    huge = bar_widths(Timings(0.1, 0.5, 1.0), Timings(1, 1.7e308, 1.7e308))
    assert huge == day
    assert huge[2:] == [round(520 * 86_400 / 100_000, 1)] * 2  # on a scale of 0 to 100000 s
    chart = chart_of(html_report(timed_run([Timings(1, 1.7e308, math.inf)])))
    assert "first text 1.7e+308 s, done inf s" in chart.text  # the tooltip says them as they are
