"""Memory a session keeps per citation row, measured with `tracemalloc`.

    python benchmarks/bench_row_memory.py [--messages M] [--citations C] [--mix typed]

Reads bench_history's `typed` body (5,000 messages of 10 + 10 rows: 100,000
rows) through `client.sessions.get` over an `httpx.MockTransport`, with
`tracemalloc` started just before the call; once the call is over and only the
`Session` is left, the memory still allocated, divided by the rows it keeps, is
the figure (the rows' strings included: they are the row's). Goal: at most
1 KB per kept row on public APIs. Run it with `PYTHONPATH` at another tree to
compare (`benchmarks/ablation.py` makes the trees).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus

from silvia_client import SilviaClient

GOAL = 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--citations", type=int, default=10)
    parser.add_argument("--mix", default="typed")
    args = parser.parse_args()
    body = _corpus.session_body(args.messages, args.citations, mix=args.mix)
    headers = {"content-type": "application/json"}
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, headers=headers, content=body)
    )
    client = SilviaClient(
        base_url="https://silvia.test",
        token="sk-bench",
        http_client=httpx.Client(transport=transport),
        # The body (2.4 million JSON values) is past the default count cap (64 MiB // 32):
        # the limits guard against a hostile server, and this one is the benchmark's.
        max_response_bytes=256 * 1024 * 1024,
    )
    gc.collect()
    tracemalloc.start()
    session = client.sessions.get("sess_bench")
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows = sum(len(m.citations) + len(m.inline_citations) for m in session.messages)
    per_row = kept / rows
    print(
        f"Python {sys.version.split()[0]}, {len(body) / 1e6:.1f} MB body, {rows:,} rows: "
        f"{kept / 2**20:.1f} MiB kept ({per_row:,.0f} bytes per row), peak {peak / 2**20:.1f} MiB"
        f"  (goal <= {GOAL} bytes per row)  {'PASS' if per_row <= GOAL else 'MISS'}"
    )


if __name__ == "__main__":
    main()
