"""Accumulation is O(1) per event: a turn of 2N events against one of N, in one run.

    python benchmarks/bench_accumulate.py [--events N] [--repeat R] [--chunk-size B]
                                          [--mix heavy,tenth]

Three measurements, each timing the N-event turn and the 2N-event turn, for
each of bench_stream's mixes (`heavy`: a citation every fourth event, with an
account, market data, tax reference or web target; `tenth`: a citation about
every tenth event from a handful of repeating sources, two account sources
whose targets pool from `account` to `accounts` partway through; both with
keep-alives, then summary, message and done):

* stream: the whole path, `client.chat.stream(...).until_done()` over a
  `MockTransport` (SSE parsing, decoding, accumulating, building the `Turn`);
* current_turn each: the stream, reading `stream.current_turn` after every event
  (a UI that redraws from the turn so far; it reads the snapshot, not its text);
* builder: `TurnBuilder.apply` for each already-decoded event, then `build()`:
  accumulation alone, without the parsing that is O(1) per event anyway.

Goal: the 2N turn takes at most 2.3 x as long as the N turn (2 x is linear; a
builder that copied its state per event would be near 4 x). Repetitions of
the two sizes are interleaved; the ratio is the median of the per-round
ratios (the machine is shared: both sizes of a round see the same load), and
the best time of each size is printed beside it. Exit status 0 whether or not
the goal is met.

The same runs are then timed with CPython's cyclic garbage collector off, for
comparison only: a turn keeps every streamed citation (a pydantic model, its
dicts and its target), and past some size the collector starts full
collections, which walk every live object; the 2N turn meets one that the N
turn does not. What is left with the collector off is the SDK's own work.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus

from silvia_client import DEFAULT_WIRE, SilviaClient
from silvia_client._sse import SSEDecoder
from silvia_client.chat import ChatEvent, TurnBuilder, decode_event

GOAL = 2.3

# CPU time of this process, not wall time: the machine is shared, and another
# process's burst would otherwise land in whichever side it fell on. Every side
# runs on this one thread, so its CPU time is what it would take on a quiet machine.
CLOCK = time.process_time


def stream_side(
    events: int, chunk_size: int, mix: str, *, per_event: bool = False
) -> Callable[[], None]:
    turn = _corpus.build_turn(events, mix=mix)
    parts = _corpus.chunks(_corpus.silvia_body(turn), chunk_size)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=_corpus.iter_chunks(parts),
        )

    client = SilviaClient(
        base_url="https://silvia.test",
        token="sk-bench",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    expected_citations = turn.citation_count

    def run() -> None:
        with client.chat.stream("How much is in checking?") as stream:
            if per_event:
                for _ in stream:
                    assert not stream.current_turn.complete or stream.current_turn.session_id
            result = stream.until_done()
        assert result.complete
        assert len(result.inline_citations) == expected_citations

    return run


def builder_side(events: int, mix: str) -> Callable[[], None]:
    body = _corpus.silvia_body(_corpus.build_turn(events, mix=mix))
    decoded: list[ChatEvent] = []
    length = 0
    for sse in SSEDecoder().feed(body):
        event = decode_event(sse.event, sse.data, DEFAULT_WIRE, length)
        text = getattr(event, "text", None)
        if isinstance(text, str):
            length += len(text)
        decoded.append(event)
    assert len(decoded) == events

    def run() -> None:
        builder = TurnBuilder()
        apply = builder.apply
        for event in decoded:
            apply(event)
        assert builder.build().complete

    return run


def rounds_of(
    runs: dict[str, Callable[[], None]], repeat: int, *, collector: bool = True
) -> list[dict[str, float]]:
    for run in runs.values():
        run()  # warm up
    rounds = []
    for _ in range(repeat):
        times = {}
        for name, run in runs.items():
            gc.collect()
            if not collector:
                gc.disable()
            start = CLOCK()
            run()
            times[name] = CLOCK() - start
            gc.enable()
        rounds.append(times)
    return rounds


def report(label: str, rounds: list[dict[str, float]], n: int, *, goal: bool = True) -> None:
    small, large = min(r["n"] for r in rounds), min(r["2n"] for r in rounds)
    ratio = statistics.median(r["2n"] / r["n"] for r in rounds)
    verdict = f"(goal <= {GOAL}x)  {'PASS' if ratio <= GOAL else 'MISS'}" if goal else ""
    print(
        f"  {label:20} {n:>9,} events {small * 1e3:8.1f} ms | {2 * n:>9,} events "
        f"{large * 1e3:8.1f} ms | ratio {ratio:.2f}x  {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--chunk-size", type=int, default=4096, help="0: one chunk per event")
    parser.add_argument(
        "--mix",
        type=lambda text: text.split(","),
        default=["heavy", "tenth"],
        help="comma-separated event mixes (benchmarks/_corpus.py; default heavy,tenth)",
    )
    args = parser.parse_args()
    n = args.events

    print(
        f"turns of {n:,} and {2 * n:,} events, {args.chunk_size or 'one'}"
        f"{'-byte' if args.chunk_size else ' per event'} chunks, {args.repeat} "
        f"interleaved rounds ({3 * args.repeat} for the builder; ratio: median of the "
        f"rounds, times: best), Python {sys.version.split()[0]}"
    )
    for mix in args.mix:
        print(f"mix {mix!r}:")
        stream = {
            "n": stream_side(n, args.chunk_size, mix),
            "2n": stream_side(2 * n, args.chunk_size, mix),
        }
        builder = {"n": builder_side(n, mix), "2n": builder_side(2 * n, mix)}
        per_event = {
            "n": stream_side(n, args.chunk_size, mix, per_event=True),
            "2n": stream_side(2 * n, args.chunk_size, mix, per_event=True),
        }
        # The inputs (bodies, decoded events) are not what is measured: out of the
        # collector's sight, so that its full collections walk only what a run made.
        gc.collect()
        gc.freeze()
        # The builder's runs are short: three times as many rounds.
        report("stream", rounds_of(stream, args.repeat), n)
        report("builder", rounds_of(builder, 3 * args.repeat), n)
        report("current_turn each", rounds_of(per_event, args.repeat), n)
        print("  with the cyclic garbage collector off during each run (for comparison, no goal):")
        report("stream, gc off", rounds_of(stream, args.repeat, collector=False), n, goal=False)
        report(
            "builder, gc off", rounds_of(builder, 3 * args.repeat, collector=False), n, goal=False
        )
        report(
            "current_turn, gc off",
            rounds_of(per_event, args.repeat, collector=False),
            n,
            goal=False,
        )
        del stream, builder, per_event
        gc.unfreeze()


if __name__ == "__main__":
    main()
