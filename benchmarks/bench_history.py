"""Reading a session's history against `json.loads` of the same body, in one run.

    python benchmarks/bench_history.py [--messages M] [--citations C] [--repeat R]

The body: M messages (default 5,000), each one stored turn with C citations
(default 10) in `inline_citations` (with `offset`, each with the target its
source had when it streamed) and the same C passages in `citations` (final
targets), as the server stores them: `source`, `title`, `cited_text`,
Anthropic's `type`, `search_result_index`, `start_block_index`,
`end_block_index`, and a `target` of mixed kinds (account, portfolio, market
data, web, tax reference, analysis, none). In about a third of the messages
the account sources were written again by a later tool call, so their later
rows carry the pooled `accounts` target; about one message in ten was saved
before targets existed (no targets). Messages and the session carry fields
the SDK does not model.

Sides, interleaved, best time of each:

* json.loads: `json.loads(body)`, the floor any client pays;
* parse_session: `parse_session(json.loads(body), ...)`, what
  `client.sessions.get` does with the body (JSON included);
* sessions.get: the whole `client.sessions.get(...)` through an
  `httpx.MockTransport` serving the body (HTTP included).

Goal: `parse_session` (JSON included) at most 3 x `json.loads`; `sessions.get`
is reported beside it (with the HTTP client's own cost on top). Exit status 0
whether or not the goal is met.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus

from silvia_client import SilviaClient
from silvia_client.sessions import parse_session

GOAL = 3.0
SESSION_ID = "sess_00000002"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--citations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    body = _corpus.session_body(args.messages, args.citations)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"}, content=body)

    client = SilviaClient(
        base_url="https://silvia.test",
        token="sk-bench",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )

    # Each side returns what it built, so that freeing it is not timed.
    def loads() -> object:
        return json.loads(body)

    def parse() -> object:
        return parse_session(json.loads(body), SESSION_ID)

    def get() -> object:
        return client.sessions.get(SESSION_ID)

    session = client.sessions.get(SESSION_ID)
    rows = sum(len(m.citations) + len(m.inline_citations) for m in session.messages)
    skipped = sum(len(m.citation_errors) + len(m.inline_citation_errors) for m in session.messages)
    assert len(session.messages) == args.messages
    assert skipped == 0
    # Nothing big stays alive between the timed runs: a full collection during
    # one would walk it, and `json.loads`, on both sides, would pay for that.
    del session
    print(
        f"{len(body) / 1e6:.1f} MB body: {args.messages:,} messages, {rows:,} citation rows "
        f"({args.citations} + {args.citations} per message), best of {args.repeat} "
        f"interleaved runs, Python {sys.version.split()[0]}"
    )

    sides: dict[str, Callable[[], object]] = {
        "json.loads(body)": loads,
        "parse_session(json.loads(body))": parse,
        "client.sessions.get (MockTransport)": get,
    }
    best = dict.fromkeys(sides, float("inf"))
    for _ in range(args.repeat):
        for name, run in sides.items():
            gc.collect()
            start = time.perf_counter()
            result = run()
            best[name] = min(best[name], time.perf_counter() - start)
            del result
    floor = best["json.loads(body)"]
    for name, seconds in best.items():
        print(f"  {name:36} {seconds * 1e3:8.1f} ms  {seconds / floor:5.2f}x json.loads")
    ratio = best["parse_session(json.loads(body))"] / floor
    print()
    print(
        f"parse_session / json.loads: {ratio:.2f}x  (goal <= {GOAL}x)  "
        f"{'PASS' if ratio <= GOAL else 'MISS'};  sessions.get / json.loads: "
        f"{best['client.sessions.get (MockTransport)'] / floor:.2f}x"
    )


if __name__ == "__main__":
    main()
