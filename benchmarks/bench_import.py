"""`import silvia_client` against `import httpx, httpx_sse, pydantic`, each in a fresh interpreter.

    python benchmarks/bench_import.py [--repeat R] [--explain]

Each side is `python -c "<import statement>"` run in a new process (this
interpreter, site-packages as a user has them), timed from outside, the sides
alternating for `--repeat` rounds. Bytecode is cached, as it is for an
installed package: the runs get `PYTHONPYCACHEPREFIX` set to a fresh temporary
directory (and `PYTHONDONTWRITEBYTECODE` unset), which warm-up runs fill for
every module of both sides, so no side compiles source while timed and the
working tree gets no `__pycache__`. `--as-is` runs with the environment
unchanged instead (with `PYTHONDONTWRITEBYTECODE=1`, as in some dev shells,
a package not installed from a wheel is compiled from source at every import).

Reported: the median and the best of each, nothing subtracted (interpreter
start-up is in every figure). `import silvia_client` alone loads next to
nothing (its names load on first use, so that pytest loading the package's
plugins stays cheap); the goal is on `from silvia_client import SilviaClient`,
which is what a user writes, and loads the client. Two more, for context
only: the client with the citation models loaded (they are pydantic models,
loaded on first use, as `import pydantic` loads its own model machinery on
first use), and the baseline plus one pydantic model defined.

Goal: `from silvia_client import SilviaClient` at most 1.6 x `import httpx,
httpx_sse, pydantic` (medians). With `--explain`, also print the modules that
`python -X importtime` shows as costing the most for that import, by their
own time and by cumulative time. Exit status 0 whether or not the
goal is met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

GOAL = 1.6

SIDES = {
    "import httpx, httpx_sse, pydantic": "import httpx, httpx_sse, pydantic",
    "import silvia_client": "import silvia_client",
    "from silvia_client import SilviaClient": "from silvia_client import SilviaClient",
    # For context, no goal: the citation rows are pydantic models, which
    # `silvia_client` (like `import pydantic` itself) loads on first use; this
    # is the cost once they are loaded.
    "... + the citation models loaded": (
        "from silvia_client import SilviaClient; import silvia_client; silvia_client.Citation"
    ),
    # For context, no goal: `import pydantic` is lazy (pydantic 2.x loads its
    # model machinery on first use), so the baseline above has none of it.
    "... + one pydantic model defined": (
        "import httpx, httpx_sse, pydantic\n"
        "class M(pydantic.BaseModel):\n"
        "    model_config = pydantic.ConfigDict(defer_build=True)\n"
        "    a: str"
    ),
}
BASELINE = "import httpx, httpx_sse, pydantic"
OURS = "from silvia_client import SilviaClient"


def run_once(statement: str, env: dict[str, str] | None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], check=True, env=env)
    return time.perf_counter() - start


def parse_importtime(stderr: str) -> list[tuple[int, int, str]]:
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        head, cumulative, name = line.split("|")
        self_us = int(head.split(":")[1])
        rows.append((self_us, int(cumulative), name.rstrip()))
    return rows


def importtime_rows(statement: str, env: dict[str, str] | None) -> list[tuple[int, int, str]]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return parse_importtime(result.stderr)


def print_explain(top: int, env: dict[str, str] | None) -> None:
    at_startup = {name for _, _, name in importtime_rows("pass", env)}
    rows = [row for row in importtime_rows(OURS, env) if row[2] not in at_startup]
    # The package's names load on first use, so the client is not imported inside
    # `silvia_client` but after it: add up every top-level import the statement made.
    top_level = min(len(name) - len(name.lstrip()) for _, _, name in rows)
    total = sum(cum for _, cum, name in rows if len(name) - len(name.lstrip()) == top_level)
    print(f"\n-X importtime, {OURS}: {total / 1e3:.1f} ms in all")
    print(f"\ntop {top} by own time (ms, own | cumulative):")
    for self_us, cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"  {self_us / 1e3:6.1f} | {cumulative / 1e3:6.1f}  {name}")
    print(f"\ntop {top} by cumulative time:")
    for self_us, cumulative, name in sorted(rows, key=lambda r: r[1], reverse=True)[:top]:
        print(f"  {self_us / 1e3:6.1f} | {cumulative / 1e3:6.1f}  {name}")
    ours = [r for r in rows if r[2].strip().startswith("silvia_client")]
    print(f"\nsilvia_client's own modules (own time): {sum(r[0] for r in ours) / 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--as-is", action="store_true", help="no bytecode cache set up: the environment as it is"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-pycache-") as cache:
        env = None
        if not args.as_is:
            env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        measure(args, env)


def measure(args: argparse.Namespace, env: dict[str, str] | None) -> None:
    for _ in range(2):  # warm-up: bytecode cache, file system cache
        for statement in SIDES.values():
            run_once(statement, env)
    times: dict[str, list[float]] = {name: [] for name in SIDES}
    for _ in range(args.repeat):
        for name, statement in SIDES.items():
            times[name].append(run_once(statement, env))

    bytecode = "environment as is" if env is None else "bytecode cached (PYTHONPYCACHEPREFIX)"
    print(
        f"fresh interpreter per import, {args.repeat} alternating rounds, {bytecode}, "
        f"Python {sys.version.split()[0]}"
    )
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(
            f"  {name:40} median {median[name] * 1e3:6.1f} ms   best {min(values) * 1e3:6.1f} ms"
            f"   ({median[name] / median[BASELINE]:.2f}x)"
        )
    ratio = median[OURS] / median[BASELINE]
    best_ratio = min(times[OURS]) / min(times[BASELINE])
    print()
    print(
        f"{OURS} / {BASELINE}: median {ratio:.2f}x, "
        f"best {best_ratio:.2f}x  (goal <= {GOAL}x)  {'PASS' if ratio <= GOAL else 'MISS'}"
    )
    if args.explain:
        print_explain(args.top, env)


if __name__ == "__main__":
    main()
