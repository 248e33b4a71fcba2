"""Typed events per second through `ChatStream`, against two baselines, in one run.

    python benchmarks/bench_stream.py [--events N] [--repeat R] [--chunk-size B[,B...]]
                                      [--mix heavy,tenth]

Every side reads the same turn from an in-memory `MockTransport`, through a
real client, so each pays for its HTTP client's response handling:

* silvia: `SilviaClient(http_client=httpx.Client(transport=MockTransport(...)))`,
  `client.chat.stream(...)`, counting the events the stream yields; also
  `until_done()` (every event applied to the `Turn`, then the `Turn` built).
* by hand: what a user writes over the same bytes and transport without the
  SDK: `httpx_sse.connect_sse(...)`, `EventSource.iter_sse()`, and
  `json.loads(sse.data)` for each event. Goal: silvia >= 0.75 x this rate on the
  `heavy` mix (a typed SDK costs no more than parsing to dicts), >= 1.5 x on `tenth`.
  Beside it, for honesty and without a goal, the same loop with
  `pydantic_core.from_json(sse.data)`, a faster parser the SDK does not use (its
  events go through `json.loads`).
* anthropic: the Anthropic SDK's `Stream` (`client.messages.create(...,
  stream=True)`) over the same turn in Anthropic's own wire format (text and
  `search_result_location` citation deltas, `ping` events where silvia's body
  has keep-alive comments), the same number of yielded events, through
  `anthropic.Anthropic(http_client=httpx2.Client(transport=
  httpx2.MockTransport(...)))`. Goal: silvia >= 3.5 x this rate.

The turn (benchmarks/_corpus.py, `--mix`): `session`, then text deltas of one
to three words with a `citation` every fourth event, each with an account,
market data, tax reference or web target (`heavy`, the mix the goals are
measured on), or every tenth event from account, pooling account, portfolio,
market data, web, tax reference, analysis and untyped sources (`tenth`, the
first mix); a `: ping` every fiftieth event; then `citations_summary`,
`message` (the whole text) and `done`.

The body is served in chunks, measured one way after the other (`--chunk-size`,
default `4096,0`): 4 KiB chunks, what a client that is behind the server reads
from a full socket buffer; and one chunk per event, what an HTTP/1.1 client
gets from a server that writes each event on its own (h11 hands over each
chunk of a chunked body separately). Per chunk, every side pays its HTTP
client's fixed cost, which narrows the ratios.

Repetitions of the sides are interleaved. Each round gives each side's time
and the ratios between sides in that round; the script prints each side's
median and best time, and the median of the per-round ratios, which the goals
are checked on (the machine is shared: a ratio taken within one round sees
the same load on both sides). The exit status is 0 whether or not a goal is met.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import httpx_sse
import pydantic_core

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus

from silvia_client import SilviaClient

BASE_URL = "https://silvia.test"
HEADERS = {"content-type": "text/event-stream; charset=utf-8", "x-request-id": "req_bench"}

# CPU time of this process, not wall time: the machine is shared, and another
# process's burst would otherwise land in whichever side it fell on. Every side
# runs on this one thread, so its CPU time is what it would take on a quiet machine.
CLOCK = time.process_time


def _httpx_client(parts: list[bytes]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=HEADERS, content=_corpus.iter_chunks(parts))

    return httpx.Client(transport=httpx.MockTransport(handler))


def silvia_iterate(parts: list[bytes], events: int) -> Callable[[], int]:
    client = SilviaClient(base_url=BASE_URL, token="sk-bench", http_client=_httpx_client(parts))

    def run() -> int:
        count = 0
        with client.chat.stream("How much is in checking?") as stream:
            for _ in stream:
                count += 1
        return count

    return run


def silvia_until_done(parts: list[bytes], events: int) -> Callable[[], int]:
    client = SilviaClient(base_url=BASE_URL, token="sk-bench", http_client=_httpx_client(parts))

    def run() -> int:
        with client.chat.stream("How much is in checking?") as stream:
            turn = stream.until_done()
        assert turn.complete
        return events

    return run


def by_hand(parts: list[bytes], events: int, parse: Callable[[str], Any]) -> Callable[[], int]:
    http = _httpx_client(parts)
    url = BASE_URL + "/api/claude"

    def run() -> int:
        count = 0
        with httpx_sse.connect_sse(
            http,
            "POST",
            url,
            json={"message": "How much is in checking?"},
            headers={"authorization": "Bearer sk-bench"},
        ) as source:
            for sse in source.iter_sse():
                parse(sse.data)
                count += 1
        return count

    return run


def anthropic_stream(parts: list[bytes], events: int) -> Callable[[], int]:
    import anthropic

    # The Anthropic SDK 2.x runs on `httpx2` (its own fork of httpx); 0.x on httpx.
    http: Any = sys.modules.get("httpx2", httpx)

    def handler(request: Any) -> Any:
        return http.Response(200, headers=HEADERS, content=_corpus.iter_chunks(parts))

    client = anthropic.Anthropic(
        api_key="sk-bench",
        base_url=BASE_URL,
        max_retries=0,
        http_client=http.Client(transport=http.MockTransport(handler)),
    )

    def run() -> int:
        count = 0
        stream = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            messages=[{"role": "user", "content": "How much is in checking?"}],
            stream=True,
        )
        with stream:
            for _ in stream:
                count += 1
        return count

    return run


class CollectorTime:
    """CPU time spent in the cyclic garbage collector, per generation, while installed."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = CLOCK()
        else:
            self.seconds[info["generation"]] += CLOCK() - self._started


def timed_rounds(
    sides: dict[str, Callable[[], int]], repeat: int, events: int, gc_stats: bool = False
) -> list[dict[str, float]]:
    """Each round's time of every side, the sides interleaved."""
    for name, run in sides.items():  # warm up: builds schemas, fills caches
        got = run()
        if got != events:
            raise SystemExit(f"{name}: expected {events} events, got {got}")
    rounds = []
    collector: dict[str, list[list[float]]] = {name: [] for name in sides}
    for _ in range(repeat):
        times = {}
        for name, run in sides.items():
            gc.collect()
            spent = CollectorTime()
            if gc_stats:
                gc.callbacks.append(spent)
            start = CLOCK()
            run()
            times[name] = CLOCK() - start
            if gc_stats:
                gc.callbacks.remove(spent)
                collector[name].append(spent.seconds)
        rounds.append(times)
    if gc_stats:
        print("  cyclic garbage collection, median ms per run (young, middle, full):")
        for name, runs in collector.items():
            by_generation = [statistics.median(run[g] for run in runs) * 1e3 for g in range(3)]
            print(f"    {name:34} " + ", ".join(f"{ms:6.1f}" for ms in by_generation))
    return rounds


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def chunking(size: int) -> str:
    return f"{size:,}-byte chunks" if size else "one chunk per event"


ITERATE = "silvia ChatStream (iterate)"
UNTIL_DONE = "silvia ChatStream.until_done()"
HAND = "httpx-sse + json.loads (by hand)"
HAND_FAST = "httpx-sse + from_json (by hand)"
ANTHROPIC = "anthropic Stream"
HAND_GOALS = {"heavy": 0.75, "tenth": 1.5}  # by mix: issue 29's floor, the plain core's
ANTHROPIC_GOAL = 3.5  # issue 29's floor


def median_ratio(rounds: list[dict[str, float]], ours: str, theirs: str) -> float:
    """The median over rounds of ours' rate / theirs' rate (theirs' time / ours')."""
    return statistics.median(times[theirs] / times[ours] for times in rounds)


def measure(args: argparse.Namespace, mix: str, size: int) -> list[bool]:
    turn = _corpus.build_turn(args.events, mix=mix)
    ours = _corpus.chunks(_corpus.silvia_body(turn), size)
    sides = {
        ITERATE: silvia_iterate(ours, args.events),
        UNTIL_DONE: silvia_until_done(ours, args.events),
        HAND: by_hand(ours, args.events, json.loads),
        HAND_FAST: by_hand(ours, args.events, pydantic_core.from_json),
    }
    if not args.no_anthropic:
        theirs = _corpus.chunks(_corpus.anthropic_body(turn), size)
        sides[ANTHROPIC] = anthropic_stream(theirs, args.events)

    print(
        f"\nmix {mix!r} ({turn.citation_count:,} citations, {len(turn.pings_after):,} "
        f"keep-alives), {chunking(size)} ({len(ours):,} for silvia's body, "
        f"{sum(map(len, ours)):,} bytes):"
    )
    rounds = timed_rounds(sides, args.repeat, args.events, args.gc_stats)
    for name in sides:
        times = [r[name] for r in rounds]
        median, best = statistics.median(times), min(times)
        print(
            f"  {name:34} median {median * 1e3:8.1f} ms {args.events / median:>11,.0f} events/s"
            f"  (best {args.events / best:>11,.0f})"
        )

    # The goals hold for the slower of the two ways to read a stream.
    results = []
    hand_goal = HAND_GOALS.get(mix)
    for baseline, goal in ((HAND, hand_goal), (HAND_FAST, None), (ANTHROPIC, ANTHROPIC_GOAL)):
        if baseline not in sides:
            continue
        iterate = median_ratio(rounds, ITERATE, baseline)
        until_done = median_ratio(rounds, UNTIL_DONE, baseline)
        line = f"  silvia / {baseline:32} iterate {iterate:5.2f}x, until_done {until_done:5.2f}x"
        if goal is not None:
            results.append(min(iterate, until_done) >= goal)
            line += f"  (goal >= {goal}x)  {verdict(results[-1])}"
        print(line)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--chunk-size",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[4096],
        help="comma-separated chunk sizes in bytes, 0 for one chunk per event (default 4096)",
    )
    parser.add_argument(
        "--mix",
        type=lambda text: text.split(","),
        default=["heavy", "tenth"],
        help="comma-separated event mixes (benchmarks/_corpus.py; default heavy,tenth)",
    )
    parser.add_argument("--no-anthropic", action="store_true", help="skip the Anthropic side")
    parser.add_argument(
        "--gc-stats", action="store_true", help="also print each side's time in the collector"
    )
    args = parser.parse_args()

    print(
        f"{args.events:,} events per turn, {args.repeat} interleaved rounds (median ratios "
        f"of the rounds), Python {sys.version.split()[0]}"
    )
    for mix in args.mix:
        for size in args.chunk_size:
            measure(args, mix, size)


if __name__ == "__main__":
    main()
