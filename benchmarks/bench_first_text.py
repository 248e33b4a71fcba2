"""Time to first text: from the server sending the first `text` event to the user's loop seeing it.

    python benchmarks/bench_first_text.py [--rounds 200] [--gap-ms 0,20]

A small HTTP/1.1 server in its own process on 127.0.0.1 (`_servers.serve_raw`)
answers `POST .../api/claude` with a short turn (`session`, eight `text`
deltas, `citations_summary`, `done`). The first `text` event carries its own
send time: the server reads `time.monotonic()` (one clock for every process
on the machine) just before it writes the event, and sends it as the delta's
text. The client reads `time.monotonic()` when its loop sees that event and
subtracts: the time the client took to hand the first text over, the
server's write and the kernel's hand-off included.

`--gap-ms` (default `0,20`, each measured in turn) is the time between the
response head (with `session`) and the first text. At 0 ms the head,
`session` and the first text go in one write, stamped before it: the figure
is the whole way in (the response head, the stream's opening, the first
events). At 20 ms the head has been read long before, and the client waits in
a read: the figure is one event's way through a waiting reader.

Sides, sync, each on its own keep-alive `httpx.Client`, one turn each per
round, the order alternating, for `--rounds` rounds after a warm-up:

* silvia: `with client.chat.stream(...) as stream: for event in stream:`,
  the first `TextEvent`;
* by hand: `httpx_sse.connect_sse(...)`, `EventSource.iter_sse()`,
  `json.loads(sse.data)` per event, the first `text` one.

Prints per gap each side's median time to first text (and from the request's
start), and the median of the per-round ratios silvia / by hand. Goal:
<= 1.2x. Exit status 0 whether or not the goal is met.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import httpx_sse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _servers

from silvia_client import DEFAULT_WIRE, SilviaClient
from silvia_client.chat import TextEvent

TOKEN = "sk-bench-first-text"
MESSAGE = "How much is in checking?"
GOAL = 1.2
SIDES = ("silvia", "by hand")

# (seconds from the send to the loop seeing it, seconds from the request's start)
Measure = Callable[[], tuple[float, float]]


# --- the server (a child process) ----------------------------------------------------


def turn(gap: float) -> Iterator[bytes | float]:
    """The turn's pieces: the first text is stamped as it is produced, just before it is sent."""
    yield _servers.sse("session", {"sessionId": "sess_first_text"})
    if gap > 0:
        yield gap  # the head and `session` go now, the first text after `gap`
    yield _servers.sse("text", {"text": repr(time.monotonic())})
    yield 0.0  # sent now, on its own
    for piece in _servers.SHORT_TURN_TEXT:
        yield _servers.sse("text", {"text": piece})
    yield _servers.sse("citations_summary", {"citations": []})
    yield _servers.sse("done", {})


def serve() -> None:
    def route(path: str) -> Iterator[bytes | float] | None:
        # /gap/<ms>/api/claude
        parts = path.split("/", 3)
        if len(parts) != 4 or parts[1] != "gap" or "/" + parts[3] != DEFAULT_WIRE.chat_path:
            return None
        return turn(float(parts[2]) / 1e3)

    _servers.serve_raw(route)


# --- the client ----------------------------------------------------------------------


def silvia_side(base_url: str) -> tuple[Measure, Callable[[], None]]:
    client = SilviaClient(base_url=base_url, token=TOKEN, max_retries=0)

    def once() -> tuple[float, float]:
        seen = stamp = started = 0.0
        started = time.monotonic()
        with client.chat.stream(MESSAGE) as stream:
            for event in stream:
                if not seen and isinstance(event, TextEvent):
                    seen = time.monotonic()
                    stamp = float(event.text)
        return seen - stamp, seen - started

    return once, client.close


def hand_side(base_url: str) -> tuple[Measure, Callable[[], None]]:
    http = httpx.Client()
    url = base_url + DEFAULT_WIRE.chat_path
    headers = {"authorization": f"Bearer {TOKEN}"}

    def once() -> tuple[float, float]:
        seen = stamp = started = 0.0
        started = time.monotonic()
        with httpx_sse.connect_sse(
            http, "POST", url, json={"message": MESSAGE}, headers=headers
        ) as source:
            for sse in source.iter_sse():
                data = json.loads(sse.data)
                if not seen and sse.event == "text":
                    seen = time.monotonic()
                    stamp = float(data["text"])
        return seen - stamp, seen - started

    return once, http.close


def measure(url: str, gap_ms: float, rounds: int) -> bool:
    base_url = f"{url}/gap/{gap_ms:g}"
    made = {"silvia": silvia_side(base_url), "by hand": hand_side(base_url)}
    sides = {side: once for side, (once, _) in made.items()}
    first: dict[str, list[float]] = {side: [] for side in sides}
    whole: dict[str, list[float]] = {side: [] for side in sides}
    try:
        for run in sides.values():
            for _ in range(10):  # warm up: imports, caches, the keep-alive connection
                run()
        for number in range(rounds):
            for side in SIDES if number % 2 == 0 else SIDES[::-1]:
                to_loop, from_start = sides[side]()
                first[side].append(to_loop)
                whole[side].append(from_start)
    finally:
        for _, close in made.values():
            close()
    print(f"\nfirst text {gap_ms:g} ms after the response head:")
    for side in SIDES:
        print(
            f"  {side:8} sent to seen: median {statistics.median(first[side]) * 1e6:7.0f} us "
            f"(p10 {_percentile(first[side], 0.1) * 1e6:5.0f}, p90 "
            f"{_percentile(first[side], 0.9) * 1e6:5.0f})   request to seen: median "
            f"{statistics.median(whole[side]) * 1e6:7.0f} us"
        )
    ratio = statistics.median(a / b for a, b in zip(first["silvia"], first["by hand"], strict=True))
    ok = ratio <= GOAL
    print(
        f"  silvia / by hand, median of the per-round ratios: {ratio:.2f}x  "
        f"(goal <= {GOAL}x)  {'PASS' if ok else 'MISS'}"
    )
    return ok


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument(
        "--gap-ms",
        type=lambda text: [float(part) for part in text.split(",")],
        default=[0.0, 20.0],
        help="comma-separated ms between the response head and the first text (default 0,20)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    if not 1 <= args.rounds <= 100_000:
        parser.error("--rounds 1 to 100,000")
    if not all(0 <= gap <= 1000 for gap in args.gap_ms):
        parser.error("--gap-ms 0 to 1000 each")

    print(
        f"time to first text, sync, keep-alive, {args.rounds} interleaved rounds per gap; "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}"
    )
    with _servers.Child([__file__, "--serve"]) as server:
        for gap in args.gap_ms:
            measure(server.first_line, gap, args.rounds)
    print(f"load average after the run: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
