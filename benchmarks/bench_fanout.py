"""A backend proxying many streams at a model's pace: the client's CPU and memory per stream.

    python benchmarks/bench_fanout.py [--streams 200] [--events 200] [--rate 50] [--rounds 3]
                                      [--sides silvia,hand,hand-keep,anthropic,silvia-raw]
    python benchmarks/bench_fanout.py --find [--max-streams 1000]   # what the server sustains

`--streams` turns at once (`asyncio.gather`), each of `--events` events
streamed at `--rate` events a second (a model's pace: 200 events at 50/s is a
four-second turn), from a server in its own process on 127.0.0.1. Each side
runs in a fresh client process of its own, so that neither its CPU time nor
its peak memory mixes with another side's:

* silvia: `AsyncSilviaClient` on an `httpx.AsyncClient` whose limits allow
  `--streams` connections; `async with client.chat.stream(...) as s: async
  for e in s: count += 1`;
* hand: the same `httpx.AsyncClient`, `httpx_sse.aconnect_sse(...)`,
  `EventSource.aiter_sse()`, `json.loads(sse.data)` per event: what a
  backend writes without the SDK;
* hand-keep: the hand loop keeping what silvia keeps of a turn (the text
  deltas, joined at the end, and the citation, summary, message and session
  events' dicts) until its stream closes: the side silvia's memory is
  compared with (goal: <= 2x the peak RSS a stream);
* anthropic: the Anthropic SDK's `AsyncStream` (`await
  client.messages.create(..., stream=True)`, `async for`) on an
  `httpx2.AsyncClient` with the same limits, over the same turn in
  Anthropic's event format;
* silvia-raw, hand-raw (hand-raw not run by default): silvia and the hand
  loop on the server that serves the Anthropic side, so that the Anthropic
  SDK is compared with them on the same server and the same arrivals (a
  client's CPU an event depends on how its events arrive: how late a loaded
  server sends them, how many a read finds).

silvia, hand and hand-keep read the reference server (`LoopbackServer(ReferenceServer(
pace=1/rate))`, the `--serve-reference` child) playing a scenario of exactly
`--events` events: the `demo` scenario's script, repeated, then padded (text
deltas with a `citation` about every fourth event, targets and all). The
Anthropic side reads a small asyncio server (`_servers.serve_raw`, the
`--serve-raw` child) serving the same turn: the reference server's body,
taken once, as Silvia's stream at `/api/claude` and rewritten in Anthropic's
events (`_corpus.anthropic_body`: `message_start`, `content_block_start`,
`text_delta` and `citations_delta`, `content_block_stop`, `message_delta`,
`message_stop`; the same number of events) at `/v1/messages`, each event its
own chunk, paced as the reference server paces (a pause before each delta).

Each client process does one unpaced warm-up turn (imports, caches), then
takes its baseline: `ru_maxrss` (the peak so far) and `time.process_time()`;
runs the streams; and reports the CPU seconds of the run, the growth of its
peak RSS over the baseline divided by the streams, and each turn's duration.
Prints per side: CPU seconds (median of `--rounds` rounds, the sides' order
rotating), CPU microseconds an event, peak RSS per open stream, the turns'
median and slowest duration against the pace's, and the server's CPU share;
then silvia / hand in CPU seconds, the median of the per-round ratios (goal:
<= 1.1x), and silvia-raw / anthropic (no goal). Exit status 0 whether or not
the goal is met.

`--find` runs the hand loop at a rising number of streams (50, 100, ...),
one run each, until two counts in a row miss, and reports the largest at
which the median turn took at most 10% longer than with ten streams: what
the reference server, with a client beside it on this machine, sustains at
this pace; and, from the server's CPU seconds per event, about how many
streams it would serve on a core of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus
import _servers

from silvia_client import DEFAULT_WIRE
from silvia_client.testing import (
    IN_PROCESS_URL,
    SCENARIO_COMMAND,
    SCENARIOS,
    Cite,
    LoopbackServer,
    ReferenceServer,
    Say,
    Scenario,
)

TOKEN = "sk-bench-fanout"
SCENARIO = "fanout"
MESSAGE = f"{SCENARIO_COMMAND} {SCENARIO}"
GOAL = 1.1
FAST = "/fast"  # the raw server's prefix for an unpaced stream (the warm-up)
SIDES = ("silvia", "hand", "hand-keep", "anthropic", "silvia-raw", "hand-raw")
ON_REFERENCE = ("silvia", "hand", "hand-keep")  # the sides that read the reference server
MEMORY_GOAL = 2.0  # silvia's peak RSS a stream, against hand-keep's


# --- the turn ------------------------------------------------------------------------


def fanout_scenario(events: int) -> Scenario:
    """A scenario whose turn streams exactly `events` events: `demo`'s script, repeated."""
    demo = SCENARIOS["demo"].script
    tools = tuple(item for item in demo if not isinstance(item, (Say, Cite)))
    talk = tuple(item for item in demo if isinstance(item, (Say, Cite)))

    def build(repeats: int, padding: int) -> Scenario:
        pad = (Say(" and so on" * padding),) if padding > 0 else ()
        script = tools + talk * repeats + pad
        return Scenario(SCENARIO, f"{events} events: demo, repeated.", script=script)

    empty, once = count_events(build(0, 0)), count_events(build(1, 0))
    repeats = max(0, (events - empty) // (once - empty))
    padding = events - empty - repeats * (once - empty)
    for _ in range(5):  # a delta is one to three words: settle the padding on the count
        scenario = build(repeats, padding)
        got = count_events(scenario)
        if got == events:
            return scenario
        padding += events - got
    raise SystemExit(f"cannot build a turn of {events} events (got {got})")


def count_events(scenario: Scenario) -> int:
    server = ReferenceServer(scenarios=[scenario], default_scenario=scenario.name)
    with server.client() as client, client.chat.stream("count") as stream:
        return sum(1 for _ in stream)


def silvia_blocks(events: int) -> list[bytes]:
    """The reference server's body for the turn, one SSE block (event or comment) each."""
    server = ReferenceServer(scenarios=[fanout_scenario(events)], default_scenario=SCENARIO)
    with httpx.Client(transport=server.transport()) as http:
        body = http.post(
            IN_PROCESS_URL + DEFAULT_WIRE.chat_path,
            json={DEFAULT_WIRE.message_field: MESSAGE},
            headers={"authorization": f"Bearer {TOKEN}"},
        ).content
    parts = body.split(b"\n\n")
    assert not parts.pop()  # the body ends with a blank line
    return [part + b"\n\n" for part in parts]


def _fields(block: bytes) -> tuple[str, str]:
    name, data = "", ""
    for line in block.decode().splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
    return name, data


def anthropic_blocks(blocks: list[bytes]) -> list[bytes]:
    """The same turn in Anthropic's events (`_corpus.anthropic_body`), one block each."""
    items: list[str | dict[str, object]] = []
    pings: set[int] = set()
    summary: list[dict[str, object]] = []
    session = ""
    for block in blocks:
        if block.startswith(b":"):
            if items:
                pings.add(len(items) - 1)
            continue
        name, data = _fields(block)
        value = json.loads(data)
        if name == "session":
            session = value["sessionId"]
        elif name == "text":
            items.append(value["text"])
        elif name == "citation":
            items.append(value["citation"])
        elif name == "citations_summary":
            summary = value["citations"]
    text = "".join(item for item in items if isinstance(item, str))
    turn = _corpus.Turn(session, tuple(items), frozenset(pings), tuple(summary), text)
    return _corpus.chunks(_corpus.anthropic_body(turn), 0)


def paced(blocks: list[bytes], pace: float, delta: Callable[[bytes], bool]) -> list[bytes | float]:
    """`blocks` with a pause before each delta, as the reference server paces a turn."""
    out: list[bytes | float] = []
    for block in blocks:
        if pace > 0 and delta(block):
            out.append(pace)
        out.append(block)
    return out


def _is_silvia_delta(block: bytes) -> bool:
    return block.startswith((b"event: text\n", b"event: citation\n"))


def _is_anthropic_delta(block: bytes) -> bool:
    return block.startswith(b"event: content_block_delta\n")


# --- the servers (child processes) ---------------------------------------------------


def serve_reference(events: int, rate: float) -> None:
    """The reference server, paced and unpaced (for warm-ups); print both URLs."""
    _servers.raise_file_limit()
    scenario = fanout_scenario(events)
    running = []
    for pace in (1 / rate, 0.0):
        server = ReferenceServer(scenarios=[scenario], default_scenario=SCENARIO, pace=pace)
        running.append(LoopbackServer(server, backlog=4096))
    urls = [loopback.start() for loopback in running]
    print(*urls, flush=True)

    def answer(command: str) -> str:
        if command == "cpu":
            return repr(time.process_time())
        if command == "count":
            return str(running[0].open_connections)
        return "?"

    try:
        _servers.answer_commands(answer)
    finally:
        for loopback in running:
            loopback.stop()


def serve_raw(events: int, rate: float) -> None:
    """Silvia's and Anthropic's streams of the turn, by path; `/fast/...` unpaced."""
    ours = silvia_blocks(events)
    theirs = anthropic_blocks(ours)
    streams = {
        (DEFAULT_WIRE.chat_path, True): paced(ours, 1 / rate, _is_silvia_delta),
        (DEFAULT_WIRE.chat_path, False): paced(ours, 0.0, _is_silvia_delta),
        ("/v1/messages", True): paced(theirs, 1 / rate, _is_anthropic_delta),
        ("/v1/messages", False): paced(theirs, 0.0, _is_anthropic_delta),
    }

    def route(path: str) -> Iterator[bytes | float] | None:
        slow = not path.startswith(FAST)
        pieces = streams.get((path.removeprefix(FAST), slow))
        return None if pieces is None else iter(pieces)

    _servers.serve_raw(route)


# --- the client (a child process per side and run) -----------------------------------


def _limits(streams: int) -> dict[str, int]:
    return {"max_connections": streams, "max_keepalive_connections": streams}


async def _timed(turn: Callable[[], Awaitable[int]]) -> tuple[int, float, str]:
    started = time.perf_counter()
    try:
        count = await turn()
    except Exception as error:
        return 0, time.perf_counter() - started, f"{type(error).__name__}: {error}"[:200]
    return count, time.perf_counter() - started, ""


def _silvia(url: str, streams: int) -> tuple[Callable[[], Awaitable[int]], Callable[[], Any]]:
    from silvia_client import AsyncSilviaClient

    http = httpx.AsyncClient(limits=httpx.Limits(**_limits(streams)), timeout=60.0)
    client = AsyncSilviaClient(
        base_url=url, token=TOKEN, http_client=http, idle_timeout=60.0, max_retries=0
    )

    async def turn() -> int:
        count = 0
        async with client.chat.stream(MESSAGE) as stream:
            async for _ in stream:
                count += 1
        return count

    return turn, http.aclose


def _hand_connect(url: str, streams: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The hand loops' client: a turn's `aconnect_sse`, and the client's close."""
    import httpx_sse

    http = httpx.AsyncClient(limits=httpx.Limits(**_limits(streams)), timeout=60.0)
    endpoint = url + DEFAULT_WIRE.chat_path
    headers = {"authorization": f"Bearer {TOKEN}"}

    def connect() -> Any:
        return httpx_sse.aconnect_sse(
            http, "POST", endpoint, json={"message": MESSAGE}, headers=headers
        )

    return connect, http.aclose


def _hand(url: str, streams: int) -> tuple[Callable[[], Awaitable[int]], Callable[[], Any]]:
    connect, close = _hand_connect(url, streams)

    async def turn() -> int:
        count = 0
        async with connect() as source:
            async for sse in source.aiter_sse():
                json.loads(sse.data)
                count += 1
        return count

    return turn, close


def _hand_keep(url: str, streams: int) -> tuple[Callable[[], Awaitable[int]], Callable[[], Any]]:
    connect, close = _hand_connect(url, streams)

    async def turn() -> int:
        # What silvia keeps of a turn, kept by hand: the text deltas joined at the end,
        # each citation's dict, the summary's rows and the final message, until the
        # stream is closed.
        count = 0
        texts: list[str] = []
        kept: list[Any] = []
        async with connect() as source:
            async for sse in source.aiter_sse():
                data = json.loads(sse.data)
                if sse.event == "text":
                    texts.append(data["text"])
                elif sse.event in ("citation", "citations_summary", "message", "session"):
                    kept.append(data)
                count += 1
            kept.append("".join(texts))
        return count

    return turn, close


def _anthropic(url: str, streams: int) -> tuple[Callable[[], Awaitable[int]], Callable[[], Any]]:
    import anthropic

    # The Anthropic SDK 2.x runs on `httpx2` (its own fork of httpx); 0.x on httpx.
    try:
        http_module: Any = importlib.import_module("httpx2")
    except ImportError:
        http_module = httpx
    http = http_module.AsyncClient(limits=http_module.Limits(**_limits(streams)), timeout=60.0)
    client = anthropic.AsyncAnthropic(api_key=TOKEN, base_url=url, max_retries=0, http_client=http)

    async def turn() -> int:
        count = 0
        stream = await client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            messages=[{"role": "user", "content": "How are my accounts?"}],
            stream=True,
        )
        async with stream:
            async for _ in stream:
                count += 1
        return count

    return turn, http.aclose


_CLIENTS = {"silvia": _silvia, "hand": _hand, "hand-keep": _hand_keep, "anthropic": _anthropic}


async def client_run(side: str, url: str, warm_url: str, streams: int) -> dict[str, object]:
    """One side's run in this (fresh) process: warm up, baseline, the streams, the figures."""
    make = _CLIENTS[side.removesuffix("-raw")]
    warm, close_warm = make(warm_url, 1)
    count, _, error = await _timed(warm)
    if error:
        raise SystemExit(f"{side}: the warm-up turn failed: {error}")
    await close_warm()
    turn, close = make(url, streams)
    gc.collect()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu, wall = time.process_time(), time.perf_counter()
    results = await asyncio.gather(*(_timed(turn) for _ in range(streams)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    await close()
    return {
        "cpu": cpu,
        "wall": wall,
        "baseline_kib": baseline,
        "peak_kib": peak,
        "events": [got for got, _, _ in results],
        "seconds": [seconds for _, seconds, _ in results],
        "errors": sorted({error for _, _, error in results if error})[:3],
        "warm_events": count,
    }


# --- the parent ----------------------------------------------------------------------


class Servers:
    """The reference server and the raw server, each in its own process, as needed."""

    def __init__(self, args: argparse.Namespace, sides: list[str]) -> None:
        pace_args = ["--events", str(args.events), "--rate", str(args.rate)]
        self.reference: _servers.Child | None = None
        self.raw: _servers.Child | None = None
        try:
            if any(side in ON_REFERENCE for side in sides):
                self.reference = _servers.Child([__file__, "--serve-reference", *pace_args])
            if any(side not in ON_REFERENCE for side in sides):
                self.raw = _servers.Child([__file__, "--serve-raw", *pace_args])
        except BaseException:
            self.stop()
            raise

    def urls(self, side: str) -> tuple[str, str, _servers.Child]:
        """The paced URL, the warm-up URL, and the server, for `side`."""
        if side in ON_REFERENCE:
            assert self.reference is not None
            paced_url, fast_url = self.reference.first_line.split()
            return paced_url, fast_url, self.reference
        assert self.raw is not None
        return self.raw.first_line, self.raw.first_line + FAST, self.raw

    def stop(self) -> None:
        for child in (self.reference, self.raw):
            if child is not None:
                child.stop()


def run_side(
    servers: Servers, side: str, streams: int, timeout: float
) -> tuple[dict[str, Any], float]:
    """One run of `side` in a fresh process; its figures and the server's CPU seconds."""
    url, warm_url, server = servers.urls(side)
    command = [sys.executable, __file__, "--client", side, "--url", url, "--warm-url", warm_url]
    command += ["--streams", str(streams)]
    before = float(server.ask("cpu"))
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    server_cpu = float(server.ask("cpu")) - before
    if done.returncode != 0:
        raise SystemExit(f"{side}: the client process failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1]), server_cpu


def _turn_seconds(result: dict[str, Any]) -> float:
    seconds: list[float] = result["seconds"]
    return statistics.median(seconds)


def _lost(result: dict[str, Any], events: int) -> int:
    return sum(abs(events - got) for got in result["events"])


def measure(args: argparse.Namespace, sides: list[str]) -> None:
    nominal = (args.events - 4) / args.rate  # a pause before each delta
    print(
        f"{args.streams} concurrent turns of {args.events} events at {args.rate:g} events/s "
        f"(a {nominal:.1f} s turn), each side in a fresh client process, {args.rounds} rounds; "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}"
    )
    timeout = nominal * 10 + 120
    servers = Servers(args, sides)
    runs: dict[str, list[tuple[dict[str, Any], float]]] = {side: [] for side in sides}
    try:
        for number in range(args.rounds):
            shift = number % len(sides)
            for side in sides[shift:] + sides[:shift]:
                runs[side].append(run_side(servers, side, args.streams, timeout))
    finally:
        servers.stop()
    events = args.streams * args.events
    for side in sides:
        results = [result for result, _ in runs[side]]
        cpu = statistics.median(result["cpu"] for result in results)
        per_stream = statistics.median(
            (result["peak_kib"] - result["baseline_kib"]) / args.streams for result in results
        )
        turn = statistics.median(_turn_seconds(result) for result in results)
        slowest = max(max(result["seconds"]) for result in results)
        server_share = statistics.median(
            server_cpu / result["wall"] for result, server_cpu in runs[side]
        )
        lost = sum(_lost(result, args.events) for result in results)
        print(
            f"  {side:11} CPU {cpu:6.2f} s ({cpu / events * 1e6:5.1f} us an event, "
            f"{cpu / statistics.median(r['wall'] for r in results):4.0%} of a core)  "
            f"peak RSS {per_stream:6.1f} KiB a stream (baseline "
            f"{statistics.median(r['baseline_kib'] for r in results) / 1024:.0f} MiB)  "
            f"turn median {turn:5.2f} s, slowest {slowest:5.2f} s  "
            f"server CPU {server_share:4.0%}  events lost {lost}"
        )
        for error in sorted({e for result in results for e in result["errors"]}):
            print(f"      {error}")
    for ours, theirs in (("silvia", "hand"), ("silvia-raw", "hand-raw")):
        if ours in runs and theirs in runs:
            ratio = statistics.median(
                a["cpu"] / b["cpu"] for (a, _), (b, _) in zip(runs[ours], runs[theirs], strict=True)
            )
            print(
                f"  {ours} / {theirs} CPU seconds: {ratio:.2f}x  (goal <= {GOAL}x)  "
                f"{'PASS' if ratio <= GOAL else 'MISS'}"
            )
    if "silvia" in runs and "hand-keep" in runs:
        ratio = statistics.median(
            (a["peak_kib"] - a["baseline_kib"]) / max(b["peak_kib"] - b["baseline_kib"], 1)
            for (a, _), (b, _) in zip(runs["silvia"], runs["hand-keep"], strict=True)
        )
        print(
            f"  silvia / hand-keep peak RSS a stream: {ratio:.2f}x  (goal <= {MEMORY_GOAL}x)  "
            f"{'PASS' if ratio <= MEMORY_GOAL else 'MISS'}"
        )
    # The Anthropic side beside silvia on the same server (the raw one), and beside the
    # hand loop on the reference server.
    for ours, theirs in (("silvia-raw", "anthropic"), ("hand-raw", "anthropic")):
        if ours in runs and theirs in runs:
            ratio = statistics.median(
                a["cpu"] / b["cpu"] for (a, _), (b, _) in zip(runs[ours], runs[theirs], strict=True)
            )
            print(f"  {ours} / {theirs} CPU seconds: {ratio:.2f}x  (no goal)")
    print(f"load average after the run: {os.getloadavg()[0]:.2f}")


def find(args: argparse.Namespace) -> None:
    """Rising streams, the hand loop: the largest count whose median turn stays within 10%."""
    nominal = (args.events - 4) / args.rate
    print(
        f"What the reference server sustains at {args.rate:g} events/s a turn of {args.events} "
        f"events (a {nominal:.1f} s turn), the hand loop as the client, one run per count; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    servers = Servers(args, ["hand"])
    timeout = nominal * 10 + 120
    sustained = 0
    try:
        base, _ = run_side(servers, "hand", 10, timeout)
        unloaded = _turn_seconds(base)
        print(f"  {10:5} streams: turn median {unloaded:5.2f} s (the reference)")
        capacity: list[float] = []
        misses = 0
        for streams in _ramp(args.max_streams):
            result, server_cpu = run_side(servers, "hand", streams, timeout)
            turn = _turn_seconds(result)
            lost = _lost(result, args.events)
            rate = args.events * streams / result["wall"]
            share = server_cpu / result["wall"]
            capacity.append(rate / share / args.rate)  # streams a whole core would serve
            print(
                f"  {streams:5} streams: turn median {turn:5.2f} s ({turn / unloaded:.2f}x), "
                f"slowest {max(result['seconds']):5.2f} s, events lost {lost}; {rate:,.0f} "
                f"events/s; CPU: server {share:4.0%}, client {result['cpu'] / result['wall']:4.0%}"
                " of a core"
            )
            if turn > 1.1 * unloaded or lost:
                misses += 1
                if misses == 2:  # two counts in a row beyond 10%: the ramp ends
                    break
            else:
                misses = 0
                sustained = streams
    finally:
        servers.stop()
    within = f"{sustained}" if sustained else "fewer than 50"
    print(
        f"sustained: {within} concurrent streams within 10% of the pace (server and client "
        f"on this machine's {os.cpu_count()} cores); the server alone, on a core of its own, "
        f"would serve about {statistics.median(capacity):,.0f} at its CPU cost per event"
    )
    print(f"load average after the run: {os.getloadavg()[0]:.2f}")


def _ramp(most: int) -> Iterator[int]:
    """50, 100, ..., 400, then 600, 800, ..., up to `most`."""
    streams = 50
    while streams <= most:
        yield streams
        streams += 50 if streams < 400 else 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=200, help="concurrent turns")
    parser.add_argument("--events", type=int, default=200, help="events a turn")
    parser.add_argument("--rate", type=float, default=50.0, help="events a second, a turn")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--sides",
        type=lambda text: text.split(","),
        default=["silvia", "hand", "hand-keep", "anthropic", "silvia-raw"],
        help=f"comma-separated, of {', '.join(SIDES)} (default all but hand-raw)",
    )
    parser.add_argument("--find", action="store_true", help="find what the server sustains")
    parser.add_argument("--max-streams", type=int, default=1000, help="--find goes up to this")
    parser.add_argument("--serve-reference", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-raw", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--warm-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.streams <= 5000 or not 1 <= args.max_streams <= 5000:
        parser.error("--streams and --max-streams: 1 to 5,000")
    if not 10 <= args.events <= 100_000 or not 0 < args.rate <= 10_000:
        parser.error("--events 10 to 100,000; --rate above 0, at most 10,000")
    if not 1 <= args.rounds <= 50:
        parser.error("--rounds 1 to 50")
    if unknown := [side for side in args.sides if side not in SIDES]:
        parser.error(f"unknown sides {unknown}; pick from {', '.join(SIDES)}")

    if args.serve_reference:
        serve_reference(args.events, args.rate)
    elif args.serve_raw:
        serve_raw(args.events, args.rate)
    elif args.client:
        _servers.raise_file_limit()
        figures = asyncio.run(client_run(args.client, args.url, args.warm_url, args.streams))
        print(json.dumps(figures))
    elif args.find:
        find(args)
    else:
        measure(args, args.sides)


if __name__ == "__main__":
    main()
