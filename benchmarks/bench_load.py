"""Concurrent turns against the loopback reference server: nothing lost, nothing left open.

    python benchmarks/bench_load.py [--turns N] [--scenario NAME] [--rounds R] [--profile]

One `AsyncSilviaClient`, on an `httpx.AsyncClient` whose limits allow `--turns`
connections, runs `--turns` chat turns at once (`asyncio.gather`) against the
reference server on 127.0.0.1 (`LoopbackServer`: its own event loop in a
background thread of this process). Each turn iterates its stream, counting the
events it yields, then builds its `Turn`.

Checked, every round:

* zero events lost: every turn yields exactly the events the scenario sends
  (counted off the scenario's own steps), completes, and has the scenario's
  text and citations;
* none left open: once the client is closed, its pool holds no connection and
  the server has no connection open.

Prints, per round, turns/s and events/s (wall time from the first request to
the last `Turn`), then the best round and `PASS` or `MISS` for "zero lost, none
left open". Exits 0 on PASS, 1 on MISS. `--profile` runs one more round under
cProfile and prints where the time goes (client and server share the process,
so both show).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from silvia_client import AsyncSilviaClient, SilviaError, Turn
from silvia_client.testing import SCENARIOS, LoopbackServer, ReferenceServer, expected_turn
from silvia_client.testing._steps import Event

TOKEN = "bench-token"


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


async def _turn(client: AsyncSilviaClient, message: str) -> tuple[int, Turn | SilviaError]:
    count = 0
    try:
        async with client.chat.stream(message) as stream:
            async for _ in stream:
                count += 1
            return count, await stream.until_done()
    except SilviaError as error:
        return count, error


async def _round(url: str, loopback: LoopbackServer, turns: int, scenario: str) -> Round:
    expected = expected_turn(SCENARIOS[scenario])
    per_turn = _expected_events(scenario)
    limits = httpx.Limits(max_connections=turns, max_keepalive_connections=turns)
    http = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60.0))
    client = AsyncSilviaClient(
        base_url=url, token=TOKEN, http_client=http, idle_timeout=60.0, max_retries=0
    )
    message = f"/scenario {scenario}"
    try:
        started = time.perf_counter()
        results = await asyncio.gather(*(_turn(client, message) for _ in range(turns)))
        seconds = time.perf_counter() - started
    finally:
        await http.aclose()

    events = sum(count for count, _ in results)
    lost = sum(abs(per_turn - count) for count, _ in results)
    errors: list[str] = []
    bad = 0
    for _, outcome in results:
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
    while loopback.open_connections and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return Round(
        turns=turns,
        seconds=seconds,
        events=events,
        lost=lost,
        bad_turns=bad,
        left_open_server=loopback.open_connections,
        left_open_client=_pool_connections(http) + (0 if http.is_closed else 1),
        errors=tuple(errors[:5]),
    )


class _CpuClocks:
    """CPU seconds used by the client (this thread) and the server (its thread), on Linux."""

    def __init__(self, loopback: LoopbackServer) -> None:
        thread = getattr(loopback, "_thread", None)
        clock = getattr(time, "pthread_getcpuclockid", None)
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
    print(
        f"round {number}: {result.turns} turns in {result.seconds:.3f} s: "
        f"{result.turns / result.seconds:,.0f} turns/s, {result.events / result.seconds:,.0f} "
        f"events/s; {result.events} events, {result.lost} lost, {result.bad_turns} bad turns, "
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


def _profile_round(url: str, loopback: LoopbackServer, turns: int, scenario: str) -> None:
    """One round with cProfile on both threads; own time by package, then top functions."""
    client, server = cProfile.Profile(), cProfile.Profile()
    loop = getattr(loopback, "_loop", None)
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
    asyncio.run(_round(url, loopback, turns, scenario))
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
    parser.add_argument("--profile", action="store_true", help="one more round under cProfile")
    args = parser.parse_args()
    if SCENARIOS[args.scenario].fault is not None:
        parser.error("pick a scenario that completes (no fault)")

    server = ReferenceServer()
    per_turn = _expected_events(args.scenario)
    print(
        f"{args.turns} concurrent turns of {args.scenario!r} ({per_turn} events each) "
        f"against the loopback server, {args.rounds} rounds; Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs"
    )
    results: list[Round] = []
    running = server.serve_loopback()
    url = running.start()
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
        if args.profile:
            _profile_round(url, running, args.turns, args.scenario)
    finally:
        running.stop()

    best = min(results, key=lambda r: r.seconds)
    ok = all(result.ok for result in results)
    print(
        f"\nbest: {best.turns / best.seconds:,.0f} turns/s, {best.events / best.seconds:,.0f} "
        f"events/s ({best.turns} turns, {best.events} events in {best.seconds:.3f} s)"
    )
    print(f"{'PASS' if ok else 'MISS'}: zero events lost, no connection left open")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
