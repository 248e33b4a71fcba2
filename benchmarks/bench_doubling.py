"""No cost that grows faster than the input: each hostile count doubled, the ratio reported.

    python benchmarks/bench_doubling.py [--n N] [--repeat R]

The shapes that used to be quadratic or worse, each timed at N and at 2N in
interleaved rounds (the machine is shared; both sizes of a round see the same
load), the ratio the median of the per-round ratios:

* views: `turn_html` and `turn_markdown` of a turn whose N sources all cite at
  offset 0 (placing one mark checked every mark already placed there), and
  `session_html` of a session of N rows;
* the command line: `TerminalRenderer` writing the same turn's text and sources;
* QA: `check_recordings` over a recording of that turn, then its JUnit, JSON
  and HTML reports and the terminal table (`format_report`).

Goal: at most 2.5x per doubling (2x is linear; a quadratic cost reads 4x).
The exit status is 0 whether or not the goal is met.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from silvia_client.chat import CitationEvent, TextEvent, Turn
from silvia_client.cli._render import TerminalRenderer
from silvia_client.display import session_html, turn_html, turn_markdown
from silvia_client.qa import RunResult, check_recordings
from silvia_client.qa.report import format_report, write_html, write_json, write_junit
from silvia_client.sessions import Session, parse_session
from silvia_client.testing import RecordedChunk, RecordedRequest, RecordedResponse, Recording

GOAL = 2.5


def stream(n: int) -> bytes:
    """A turn of `n` sources, each cited once, every one at offset 0."""
    events = [b'event: session\ndata: {"sessionId":"s1"}\n\n']
    for i in range(n):
        row = {"source": f"https://example.com/{i}", "title": f"Source {i}", "cited_text": "q"}
        events.append(b"event: citation\ndata: " + json.dumps({"citation": row}).encode() + b"\n\n")
    events.append(b'event: text\ndata: {"text":"All of it."}\n\n')
    events.append(b"event: done\ndata: {}\n\n")
    return b"".join(events)


def recording(n: int) -> Recording:
    headers = (("content-type", "text/event-stream"),)
    return Recording(
        RecordedRequest("POST", "/api/claude", {"message": "hi"}),
        RecordedResponse(200, headers, (RecordedChunk(0.0, stream(n)),)),
        None,
    )


def turn(n: int) -> Turn:
    with recording(n).client() as client:
        return client.chat.send("hi")


def session(n: int) -> Session:
    rows = [{"source": f"https://example.com/{i}", "title": f"S{i}"} for i in range(n)]
    message = {"id": "m", "role": "assistant", "content": "x", "citations": rows}
    return parse_session({"messages": [message]}, "s1")


def render(t: Turn) -> None:
    renderer = TerminalRenderer(io.StringIO())
    for row in t.inline_citations:
        renderer.event(CitationEvent(row))
    renderer.event(TextEvent(t.text))
    renderer.sources(list(t.inline_citations), list(t.citations))


def qa(r: Recording) -> None:
    run: RunResult = check_recordings([r])
    with tempfile.TemporaryDirectory() as folder:
        write_html(run, Path(folder) / "r.html")
        write_junit(run, Path(folder) / "r.xml")
        write_json(run, Path(folder) / "r.json")
    format_report(run, 100)


def shapes() -> dict[str, tuple[Callable[[int], Any], Callable[[Any], object]]]:
    """name -> (what to build for a count, what to time on it)."""
    return {
        "turn_html": (turn, turn_html),
        "turn_markdown": (turn, turn_markdown),
        "session_html": (session, session_html),
        "terminal sources": (turn, render),
        "qa check + reports": (recording, qa),
    }


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = args.n
    print(f"each shape at N = {n:,} and 2N = {2 * n:,}, {args.repeat} interleaved rounds")
    print(f"  {'shape':20} {'N':>9} {'2N':>9} {'ratio':>7}  (goal <= {GOAL}x)")
    for name, (make, use) in shapes().items():
        small, large = make(n), make(2 * n)
        ratios, best_small, best_large = [], float("inf"), float("inf")
        for _ in range(args.repeat):
            a, b = timed(partial(use, small)), timed(partial(use, large))
            ratios.append(b / a)
            best_small, best_large = min(best_small, a), min(best_large, b)
        ratio = statistics.median(ratios)
        verdict = "PASS" if ratio <= GOAL else "MISS"
        times = f"{best_small * 1e3:7.1f}ms {best_large * 1e3:7.1f}ms"
        print(f"  {name:20} {times} {ratio:6.2f}x  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
