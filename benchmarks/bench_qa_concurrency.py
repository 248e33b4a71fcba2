"""`silvia qa run --concurrency N`: a QA script's wall time with N = 1 and N = 16, side by side.

    python benchmarks/bench_qa_concurrency.py [--prompts 200] [--pace 0.05] [--concurrency 16]

The reference server runs on 127.0.0.1 (`serve_loopback`: a real socket, its
own event loop in a background thread), paced like a real model: `--pace`
seconds between streamed events. The script has `--prompts` prompts cycling
through five scenarios, one in five continuing the prompt before it (so it
must wait for it). Both sides run `arun_script` on an `AsyncObserver` over
that socket, the way `silvia qa run` does: N = 1, then N = `--concurrency`, in
one run. Each side's run is checked: every prompt ran, the exit status is 0,
and both give the same verdicts in the same order.

Prints both wall times, prompts/s, and the speed-up `N=16 / N=1`.
Goal: >= 5x. Exits 0 whether or not the goal is met (1 if a run went wrong).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from silvia_client.qa import AsyncObserver, RunResult, Script, arun_script, parse_script
from silvia_client.testing import ReferenceServer

TOKEN = "bench-token"
SCENARIOS = ("account", "accounts", "market-data", "search-web", "no-citations")
GOAL = 5.0


def script(prompts: int) -> Script:
    return parse_script(
        {
            "name": "bench",
            "prompts": [
                {
                    "id": f"p{n}",
                    "message": "How are my accounts?",
                    "scenario": SCENARIOS[n % len(SCENARIOS)],
                    "continue": n % 5 == 4,
                }
                for n in range(prompts)
            ],
        }
    )


async def timed(url: str, prompts: int, concurrency: int) -> tuple[float, RunResult]:
    qa_script = script(prompts)
    async with AsyncObserver.connect(url, token=TOKEN, timeout=30) as observer:
        started = time.perf_counter()
        run = await arun_script(qa_script, observer=observer, concurrency=concurrency)
        return time.perf_counter() - started, run


def verdicts(run: RunResult) -> list[tuple[str, bool, tuple[str, ...]]]:
    return [(r.prompt.id, r.ran, tuple(o.status for o in r.result.outcomes)) for r in run.prompts]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between events")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    server = ReferenceServer(token=TOKEN, pace=args.pace)
    results: dict[int, tuple[float, RunResult]] = {}
    with server.serve_loopback() as url:
        for concurrency in (1, args.concurrency):
            results[concurrency] = asyncio.run(timed(url, args.prompts, concurrency))
            seconds, run = results[concurrency]
            print(
                f"N={concurrency:>3}: {seconds:8.2f} s  {args.prompts / seconds:7.2f} prompts/s  "
                f"exit status {run.exit_status}, {len(run.ran)} of {len(run.prompts)} ran"
            )
    (one, sequential), (many, concurrent) = results[1], results[args.concurrency]
    sound = (
        sequential.exit_status == concurrent.exit_status == 0
        and len(sequential.ran) == len(concurrent.ran) == args.prompts
        and verdicts(sequential) == verdicts(concurrent)
    )
    ratio = one / many
    print(
        f"speed-up N={args.concurrency} / N=1: {ratio:.1f}x "
        f"(goal >= {GOAL:g}x: {'met' if ratio >= GOAL else 'MISSED'}); "
        f"same verdicts, all passed: {'yes' if sound else 'NO'}"
    )
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
