"""Concurrent turns against the loopback reference server: nothing lost, nothing left open.

    python benchmarks/bench_load.py [--turns N] [--scenario NAME] [--rounds R]
                                    [--server process|thread] [--profile]

One `AsyncSilviaClient`, on an `httpx.AsyncClient` whose limits allow `--turns`
connections, runs `--turns` chat turns at once (`asyncio.gather`) against the
reference server on 127.0.0.1 (`LoopbackServer`). With `--server process` (the
default) the server runs in its own process (this script, started again with
`--serve`), so client and server each have a core and a GIL; with `--server
thread` it runs in a background thread of this process, sharing the GIL with
the client (the rate is then a floor for either alone). Each turn iterates its
stream, counting the events it yields and noting when the first text arrived,
then builds its `Turn`.

Checked, every round:

* zero events lost: every turn yields exactly the events the scenario sends
  (counted off the scenario's own steps), completes, and has the scenario's
  text and citations;
* none left open: once the client is closed, its pool holds no connection and
  the server has no connection open.

Prints, per round, turns/s and events/s (wall time from the first request to
the last `Turn`), the connections the server accepted, and the median (p50) and
99th percentile (p99) of the time from a turn's start (`client.chat.stream`) to
its first text event; then the median round and `PASS` or `MISS` for "zero
lost, none left open". Exits 0 on PASS, 1 on MISS. `--profile` (thread mode
only) runs one more round under cProfile and prints where the time goes
(client and server share the process, so both show).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from silvia_client import AsyncSilviaClient, SilviaError, Turn
from silvia_client.chat import TextEvent
from silvia_client.testing import SCENARIOS, LoopbackServer, ReferenceServer, expected_turn
from silvia_client.testing._steps import Event

TOKEN = "bench-token"


class CountingLoopback(LoopbackServer):
    """`LoopbackServer` counting the connections it accepts."""

    accepted = 0

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.accepted += 1
        await super()._serve_connection(reader, writer)


def serve() -> None:
    """The server process: print the URL, then answer `count` (accepted, open) until `stop`."""
    running = CountingLoopback(ReferenceServer())
    print(running.start(), flush=True)
    for line in sys.stdin:
        if line.strip() == "count":
            print(running.accepted, running.open_connections, flush=True)
        else:
            break
    running.stop()


class ServerProcess:
    """The server in a child process, asked for its counts over a pipe."""

    def __init__(self) -> None:
        self._child = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._child.stdout is not None
        self.url = self._child.stdout.readline().strip()

    def counts(self) -> tuple[int, int]:
        assert self._child.stdin is not None
        assert self._child.stdout is not None
        self._child.stdin.write("count\n")
        self._child.stdin.flush()
        accepted, still_open = self._child.stdout.readline().split()
        return int(accepted), int(still_open)

    def stop(self) -> None:
        assert self._child.stdin is not None
        self._child.stdin.write("stop\n")
        self._child.stdin.close()
        self._child.wait(timeout=30)


class ServerThread:
    """The server in a thread of this process (what the benchmark did first)."""

    def __init__(self) -> None:
        self.loopback = CountingLoopback(ReferenceServer())
        self.url = self.loopback.start()

    def counts(self) -> tuple[int, int]:
        return self.loopback.accepted, self.loopback.open_connections

    def stop(self) -> None:
        self.loopback.stop()


@dataclass(frozen=True)
class Round:
    turns: int
    seconds: float
    events: int
    lost: int  # events missing (or extra), over all turns
    bad_turns: int  # turns that failed, did not complete, or differ from the scenario
    left_open_server: int
    left_open_client: int
    errors: tuple[str, ...]
    connections: int  # accepted by the server during the round
    first_text: tuple[float, ...]  # seconds from each turn's start to its first text event

    @property
    def ok(self) -> bool:
        return (
            self.lost == 0
            and self.bad_turns == 0
            and self.left_open_server == 0
            and self.left_open_client == 0
        )


def _expected_events(scenario: str) -> int:
    steps = SCENARIOS[scenario].steps(session_id="count", wire=ReferenceServer().wire)
    return sum(isinstance(step, Event) for step in steps)


def _pool_connections(http: httpx.AsyncClient) -> int:
    # httpx keeps its pool private; count what is left in it, if it can be seen.
    pool = getattr(getattr(http, "_transport", None), "_pool", None)
    connections = getattr(pool, "connections", None)
    return len(connections) if connections is not None else 0


async def _turn(
    client: AsyncSilviaClient, message: str
) -> tuple[int, Turn | SilviaError, float | None]:
    count = 0
    first_text: float | None = None
    started = time.perf_counter()
    try:
        async with client.chat.stream(message) as stream:
            async for event in stream:
                count += 1
                if first_text is None and isinstance(event, TextEvent):
                    first_text = time.perf_counter() - started
            return count, await stream.until_done(), first_text
    except SilviaError as error:
        return count, error, first_text


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _round(
    url: str, server: ServerProcess | ServerThread, turns: int, scenario: str
) -> Round:
    expected = expected_turn(SCENARIOS[scenario])
    per_turn = _expected_events(scenario)
    limits = httpx.Limits(max_connections=turns, max_keepalive_connections=turns)
    http = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0))
    client = AsyncSilviaClient(
        base_url=url, token=TOKEN, http_client=http, idle_timeout=60.0, max_retries=0
    )
    message = f"/scenario {scenario}"
    accepted_before, _ = server.counts()
    try:
        started = time.perf_counter()
        results = await asyncio.gather(*(_turn(client, message) for _ in range(turns)))
        seconds = time.perf_counter() - started
    finally:
        await http.aclose()

    events = sum(count for count, _, _ in results)
    lost = sum(abs(per_turn - count) for count, _, _ in results)
    errors: list[str] = []
    bad = 0
    for _, outcome, _ in results:
        if isinstance(outcome, SilviaError):
            bad += 1
            errors.append(f"{type(outcome).__name__}: {outcome}")
            continue
        if not (
            outcome.complete
            and outcome.text == expected.text
            and len(outcome.citations) == len(expected.citations)
            and len(outcome.inline_citations) == len(expected.inline_citations)
        ):
            bad += 1
    # The server closes its side as soon as it reads the client's close: give it a moment.
    deadline = time.monotonic() + 10.0
    accepted, still_open = server.counts()
    while still_open and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
        accepted, still_open = server.counts()
    return Round(
        turns=turns,
        seconds=seconds,
        events=events,
        lost=lost,
        bad_turns=bad,
        left_open_server=still_open,
        left_open_client=_pool_connections(http) + (0 if http.is_closed else 1),
        errors=tuple(errors[:5]),
        connections=accepted - accepted_before,
        first_text=tuple(first for _, _, first in results if first is not None),
    )


class _CpuClocks:
    """CPU seconds used by the client (this thread) and the server (its thread), on Linux."""

    def __init__(self, server: ServerProcess | ServerThread) -> None:
        loopback = getattr(server, "loopback", None)
        thread = getattr(loopback, "_thread", None)
        clock = getattr(time, "pthread_getcpuclockid", None)
        # The server's thread, when it is in this process.
        self._clocks = (
            (clock(threading.main_thread().ident), clock(thread.ident))
            if clock is not None and thread is not None and thread.ident is not None
            else None
        )

    def now(self) -> tuple[float, float] | None:
        if self._clocks is None:
            return None
        return time.clock_gettime(self._clocks[0]), time.clock_gettime(self._clocks[1])


def _report(number: int, result: Round, cpu: tuple[float, float] | None) -> None:
    split = "" if cpu is None else f"; CPU: client {cpu[0]:.2f} s, server {cpu[1]:.2f} s"
    first = list(result.first_text) or [float("nan")]
    print(
        f"round {number}: {result.turns} turns in {result.seconds:.3f} s: "
        f"{result.turns / result.seconds:,.0f} turns/s, {result.events / result.seconds:,.0f} "
        f"events/s, {result.connections} connections opened, first text p50 "
        f"{_percentile(first, 0.5) * 1e3:.0f} ms, p99 {_percentile(first, 0.99) * 1e3:.0f} ms; "
        f"{result.events} events, {result.lost} lost, {result.bad_turns} bad turns, "
        f"{result.left_open_server} left open on the server, "
        f"{result.left_open_client} in the client's pool{split}"
    )
    for error in result.errors:
        print(f"    {error}")


def _by_package(profile: cProfile.Profile) -> list[tuple[float, str]]:
    """Own time per package (silvia_client, httpcore, h11, ...), largest first."""
    totals: dict[str, float] = {}
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for (filename, _, name), (_, _, own, _, _) in stats.items():
        if filename == "~":
            package = "(C) " + name.split(" of ")[0].strip("<>").replace("method ", "")
        else:
            parts = filename.replace("\\", "/").split("/")
            package = next(
                (part for part in reversed(parts[:-1]) if part in _PACKAGES),
                "(other Python)",
            )
        totals[package] = totals.get(package, 0.0) + own
    return sorted(((own, package) for package, own in totals.items()), reverse=True)


_PACKAGES = {"silvia_client", "httpcore", "httpx", "h11", "anyio", "asyncio", "json", "pydantic"}


def _profile_round(url: str, running: ServerThread, turns: int, scenario: str) -> None:
    """One round with cProfile on both threads; own time by package, then top functions."""
    client, server = cProfile.Profile(), cProfile.Profile()
    loop = getattr(running.loopback, "_loop", None)
    switched = threading.Event()

    def on_server(action: Callable[[], object]) -> None:
        # cProfile profiles the thread that enables it: enable it on the server's loop.
        switched.clear()
        assert loop is not None

        def run() -> None:
            action()
            switched.set()

        loop.call_soon_threadsafe(run)
        switched.wait(10)

    on_server(server.enable)
    client.enable()
    asyncio.run(_round(url, running, turns, scenario))
    client.disable()
    on_server(server.disable)
    for side, profile in (("client", client), ("server", server)):
        print(f"\n{side} thread, own time by package (profiled, so slower than above):")
        for own, package in _by_package(profile)[:10]:
            print(f"  {own:7.3f} s  {package}")
    print("\nclient thread, top functions by own time:")
    pstats.Stats(client).sort_stats("tottime").print_stats(12)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=500, help="concurrent turns (default 500)")
    parser.add_argument("--scenario", default="demo", choices=sorted(SCENARIOS), metavar="NAME")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best is kept")
    parser.add_argument(
        "--server",
        choices=["process", "thread"],
        default="process",
        help="run the server in its own process (default) or in a thread of this one",
    )
    parser.add_argument("--profile", action="store_true", help="one more round under cProfile")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    if SCENARIOS[args.scenario].fault is not None:
        parser.error("pick a scenario that completes (no fault)")
    if args.profile and args.server != "thread":
        parser.error("--profile needs --server thread")

    per_turn = _expected_events(args.scenario)
    print(
        f"{args.turns} concurrent turns of {args.scenario!r} ({per_turn} events each) "
        f"against the loopback server in a {args.server}, {args.rounds} rounds; "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    results: list[Round] = []
    running = ServerProcess() if args.server == "process" else ServerThread()
    url = running.url
    try:
        clocks = _CpuClocks(running)
        for number in range(1, args.rounds + 1):
            before = clocks.now()
            result = asyncio.run(_round(url, running, args.turns, args.scenario))
            after = clocks.now()
            cpu = (
                None
                if before is None or after is None
                else (after[0] - before[0], after[1] - before[1])
            )
            results.append(result)
            _report(number, result, cpu)
        if args.profile and isinstance(running, ServerThread):
            _profile_round(url, running, args.turns, args.scenario)
    finally:
        running.stop()

    ok = all(result.ok for result in results)
    seconds = statistics.median(result.seconds for result in results)
    first = [first for result in results for first in result.first_text] or [float("nan")]
    print(
        f"\nmedian of {len(results)} rounds: {args.turns / seconds:,.0f} turns/s, "
        f"{statistics.median(r.events / r.seconds for r in results):,.0f} events/s, "
        f"{statistics.median(r.connections for r in results):.0f} connections opened; "
        f"first text over all rounds' turns: p50 {_percentile(first, 0.5) * 1e3:.0f} ms, "
        f"p99 {_percentile(first, 0.99) * 1e3:.0f} ms"
    )
    print(f"{'PASS' if ok else 'MISS'}: zero events lost, no connection left open")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
