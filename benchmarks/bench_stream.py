"""Typed events per second through `ChatStream`, against two baselines, in one run.

    python benchmarks/bench_stream.py [--events N] [--repeat R] [--chunk-size B[,B...]]

Every side reads the same turn from an in-memory `MockTransport`, through a
real client, so each pays for its HTTP client's response handling:

* silvia: `SilviaClient(http_client=httpx.Client(transport=MockTransport(...)))`,
  `client.chat.stream(...)`, counting the events the stream yields; also
  `until_done()` (every event applied to the `Turn`, then the `Turn` built).
* by hand: what a user writes over the same bytes and transport without the
  SDK: `httpx_sse.connect_sse(...)`, `EventSource.iter_sse()`, and
  `json.loads(sse.data)` for each event. Goal: silvia >= 0.7 x this rate.
* anthropic: the Anthropic SDK's `Stream` (`client.messages.create(...,
  stream=True)`) over the same turn in Anthropic's own wire format (text and
  `search_result_location` citation deltas, `ping` events where silvia's body
  has keep-alive comments), the same number of yielded events, through
  `anthropic.Anthropic(http_client=httpx2.Client(transport=
  httpx2.MockTransport(...)))`. Goal: silvia >= 5 x this rate.

The turn (benchmarks/_corpus.py): `session`, then text deltas of one to three
words with a `citation` every tenth event (account, pooling account, portfolio,
market data, web, tax reference, analysis, untyped sources) and a `: ping`
every fiftieth, then `citations_summary`, `message` (the whole text) and `done`.

The body is served in chunks, measured one way after the other (`--chunk-size`,
default `4096,0`): 4 KiB chunks, what a client that is behind the server reads
from a full socket buffer; and one chunk per event, what an HTTP/1.1 client
gets from a server that writes each event on its own (h11 hands over each
chunk of a chunked body separately). Per chunk, every side pays its HTTP
client's fixed cost, which narrows the ratios.

Repetitions of the sides are interleaved, and the best time of each is kept
(the least disturbed run). The exit status is 0 whether or not a goal is met.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import httpx_sse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus

from silvia_client import SilviaClient

BASE_URL = "https://silvia.test"
HEADERS = {"content-type": "text/event-stream; charset=utf-8", "x-request-id": "req_bench"}


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


def by_hand(parts: list[bytes], events: int) -> Callable[[], int]:
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
                json.loads(sse.data)
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


def best_times(sides: dict[str, Callable[[], int]], repeat: int, events: int) -> dict[str, float]:
    best = dict.fromkeys(sides, float("inf"))
    for name, run in sides.items():  # warm up: builds schemas, fills caches
        got = run()
        if got != events:
            raise SystemExit(f"{name}: expected {events} events, got {got}")
    for _ in range(repeat):
        for name, run in sides.items():
            gc.collect()
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def chunking(size: int) -> str:
    return f"{size:,}-byte chunks" if size else "one chunk per event"


def measure(turn: _corpus.Turn, args: argparse.Namespace, size: int) -> list[bool]:
    ours = _corpus.chunks(_corpus.silvia_body(turn), size)
    sides = {
        "silvia ChatStream (iterate)": silvia_iterate(ours, args.events),
        "silvia ChatStream.until_done()": silvia_until_done(ours, args.events),
        "httpx-sse + json.loads (by hand)": by_hand(ours, args.events),
    }
    if not args.no_anthropic:
        theirs = _corpus.chunks(_corpus.anthropic_body(turn), size)
        sides["anthropic Stream"] = anthropic_stream(theirs, args.events)

    print(f"\n{chunking(size)} ({len(ours):,} for silvia's body, {sum(map(len, ours)):,} bytes):")
    best = best_times(sides, args.repeat, args.events)
    rate = {name: args.events / seconds for name, seconds in best.items()}
    for name, seconds in best.items():
        print(f"  {name:34} {seconds * 1e3:9.1f} ms  {rate[name]:>12,.0f} events/s")

    # The goal holds for the slower of the two ways to read a stream.
    ours_rate = rate["silvia ChatStream (iterate)"]
    done_rate = rate["silvia ChatStream.until_done()"]
    hand = rate["httpx-sse + json.loads (by hand)"]
    results = [min(ours_rate, done_rate) / hand >= 0.7]
    print(
        f"  silvia / by hand:    iterate {ours_rate / hand:.2f}x, until_done "
        f"{done_rate / hand:.2f}x  (goal >= 0.7x)  {verdict(results[-1])}"
    )
    if "anthropic Stream" in rate:
        them = rate["anthropic Stream"]
        results.append(min(ours_rate, done_rate) / them >= 5)
        print(
            f"  silvia / anthropic:  iterate {ours_rate / them:.2f}x, "
            f"until_done {done_rate / them:.2f}x  (goal >= 5x)  {verdict(results[-1])}"
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--chunk-size",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[4096, 0],
        help="comma-separated chunk sizes in bytes, 0 for one chunk per event (default 4096,0)",
    )
    parser.add_argument("--no-anthropic", action="store_true", help="skip the Anthropic side")
    args = parser.parse_args()

    turn = _corpus.build_turn(args.events)
    print(
        f"{args.events:,} events per turn ({turn.citation_count:,} citations, "
        f"{len(turn.pings_after):,} keep-alives), best of {args.repeat} interleaved runs, "
        f"Python {sys.version.split()[0]}"
    )
    for size in args.chunk_size:
        measure(turn, args, size)


if __name__ == "__main__":
    main()
