"""Sequential turns through a network with a real round trip: reusing the connection or not.

    python benchmarks/bench_roundtrip.py [--turns 20] [--rtt-ms 20] [--rounds 5]
                                         [--transport plain,tls]

Loopback has no round trip to speak of (tens of microseconds), so on it a new
connection costs little more than a reused one. Here a TCP proxy on
127.0.0.1, in its own process (`_servers.serve_delay_proxy`), stands in for a
network: every chunk reaches the other side half an RTT (`--rtt-ms`, default
20) after it arrived, in each direction, and a new connection's first chunk
from the client waits one RTT more: the TCP handshake, which a proxy in user
space cannot otherwise show. A turn on a reused connection costs one RTT; a
new plain connection two; a new TLS 1.3 connection three (its handshake adds
one).

Behind the proxy, in its own process: uvicorn serving an sse-starlette app
whose `POST /api/claude` answers a short turn (`session`, eight `text`
deltas, a `citation`, `citations_summary`, `done`), plain, and over TLS with a
certificate from a throwaway CA (`trustme`) that the client trusts.

Sides, each `--turns` turns one after the other through one sync
`SilviaClient` (`client.chat.send(...)` each, checked complete), made fresh
for each run, over plain HTTP and over TLS, interleaved for `--rounds` rounds:

* reuse: on an `httpx.Client` with httpx's default pool: one connection
  for the run, whose first turn pays the handshake;
* new connection each: on an
  `httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))`, so that
  every turn opens a connection (and does a TLS handshake).

The proxy counts the connections it accepted, per side per round. Prints
each side's median turns/s, milliseconds a turn and connections per run, and
the median of the per-round ratios reuse / new connection each. Goals: >=
1.7x over plain HTTP, >= 2.5x over TLS. Exit status 0 whether or not a goal
is met.
"""

from __future__ import annotations

import argparse
import os
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _servers

from silvia_client import SilviaClient

TOKEN = "sk-bench"
GOALS = {"plain": 1.7, "tls": 2.5}
SIDES = ("reuse", "new connection each")
_SERVERS = str(Path(__file__).resolve().parent / "_servers.py")


def run_turns(url: str, verify: ssl.SSLContext | bool, reuse: bool, turns: int) -> float:
    """Seconds for `turns` sequential turns through one fresh client."""
    limits = httpx.Limits() if reuse else httpx.Limits(max_keepalive_connections=0)
    expected = "".join(_servers.SHORT_TURN_TEXT)
    with (
        httpx.Client(verify=verify, limits=limits) as http,
        SilviaClient(base_url=url, token=TOKEN, http_client=http, max_retries=0) as client,
    ):
        started = time.perf_counter()
        for _ in range(turns):
            turn = client.chat.send("How much is in checking?")
            if not (turn.complete and turn.text == expected):
                raise SystemExit(f"{url}: a turn did not complete as sent: {turn!r}")
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20, help="sequential turns per run")
    parser.add_argument("--rtt-ms", type=float, default=20.0, help="the round trip, ms")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--transport",
        type=lambda text: text.split(","),
        default=["plain", "tls"],
        help="comma-separated: plain, tls (default both)",
    )
    args = parser.parse_args()
    if not 1 <= args.turns <= 10_000 or not 1 <= args.rounds <= 100:
        parser.error("--turns 1 to 10,000, --rounds 1 to 100")
    if not 0 <= args.rtt_ms <= 1000:
        parser.error("--rtt-ms 0 to 1000")

    print(
        f"{args.turns} sequential turns per run, sync client, through a proxy with a "
        f"{args.rtt_ms:g} ms round trip; {args.rounds} interleaved rounds; Python "
        f"{sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as folder:
        tls = _servers.make_tls(Path(folder))
        children: list[_servers.Child] = []
        urls: dict[str, tuple[str, ssl.SSLContext | bool, _servers.Child]] = {}
        try:
            for transport in args.transport:
                if transport not in GOALS:
                    parser.error(f"unknown transport {transport!r}")
                app_args = ["--cert", tls.cert, "--key", tls.key] if transport == "tls" else []
                app = _servers.Child([_SERVERS, "app", *app_args])
                children.append(app)
                proxy = _servers.Child(
                    [_SERVERS, "proxy", "--upstream", app.first_line, "--rtt-ms", str(args.rtt_ms)]
                )
                children.append(proxy)
                scheme = "https" if transport == "tls" else "http"
                verify: ssl.SSLContext | bool = tls.context if transport == "tls" else True
                urls[transport] = (f"{scheme}://127.0.0.1:{proxy.first_line}", verify, proxy)
            measure(args, urls)
        finally:
            for child in reversed(children):
                child.stop()


def measure(
    args: argparse.Namespace, urls: dict[str, tuple[str, ssl.SSLContext | bool, _servers.Child]]
) -> None:
    for url, verify, proxy in urls.values():  # warm up (and wait for the servers to accept)
        for reuse in (True, False):
            run_turns(url, verify, reuse, 2)
        proxy.ask("count")
    seconds: dict[tuple[str, str], list[float]] = {}
    opened: dict[tuple[str, str], list[int]] = {}
    for number in range(args.rounds):
        for transport, (url, verify, proxy) in urls.items():
            # Alternate which side goes first, so that neither always follows the other.
            order = SIDES if number % 2 == 0 else SIDES[::-1]
            for side in order:
                key = (transport, side)
                seconds.setdefault(key, []).append(
                    run_turns(url, verify, side == "reuse", args.turns)
                )
                opened.setdefault(key, []).append(int(proxy.ask("count")))
    for transport in urls:
        print(f"\n{transport}:")
        for side in SIDES:
            median = statistics.median(seconds[transport, side])
            print(
                f"  {side:20} {args.turns / median:7.1f} turns/s  {median / args.turns * 1e3:6.1f} "
                f"ms a turn  {statistics.median(opened[transport, side]):5.1f} connections "
                f"per {args.turns} turns"
            )
        ratio = statistics.median(
            new / reuse
            for reuse, new in zip(
                seconds[transport, "reuse"], seconds[transport, "new connection each"], strict=True
            )
        )
        goal = GOALS[transport]
        print(
            f"  reuse / new connection each: {ratio:.2f}x  (goal >= {goal}x)  "
            f"{'PASS' if ratio >= goal else 'MISS'}"
        )
    print(f"\nload average after the run: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
