"""What a fast path buys: the tree against variants of it, side by side.

    python benchmarks/ablation.py [--variants plain,no_fast_json,text_regex,before]
                                  [--runs N] [--bench stream|history] [-- BENCH ARGS...]

Each variant is a copy of `silvia_client/` under `build/ablation/<bench>/<variant>/`
with one small patch applied (below), or, for `before`, the tree as it was
before the plain core (`git worktree` of `BEFORE`, the commit this rewrite
started from). The benchmark (`bench_stream.py` or `bench_history.py`) then runs
once per variant per round, the variants in turn, each in a fresh interpreter
with `PYTHONPATH` at that variant's tree, `--runs` rounds; every run measures
silvia against its own baselines (the hand loop and the Anthropic SDK, or
`json.loads`) in the same process, so the ratios of different runs compare. The
script prints each variant's ratios per run and their median.

The variants (CONTRIBUTING's rule keeps a fast path only if turning it off costs
15% or more on its benchmark):

* `plain`: the package as it is (with its fast path, `_sse.FAST`).
* `no_fast_json`: the package with `_sse.FAST` off: every event and history body
  read the plain way (`_sse.loads`, then the readers and `model_validate`).
* `text_regex` (not in the package): a `text` event whose data is exactly
  `{"text":"..."}` with no escape is read by a regular expression, before any
  JSON decoding.
* `main`: the tree of the branch `main` (the fast path's "today").
* `before`: every trick of the old core (regex runs in the SSE reader, the text
  shortcut handed down to it, rows built by setting pydantic's slots, the
  shared fields-set, `_prime`, the gc pause, `from_json`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "ablation"
BEFORE = "116cd87"  # main before the plain core
# The variants that are a commit's tree; `main` is where this branch left main.
COMMITS = {"before": BEFORE, "main": "main"}

EVENTS = "silvia_client/chat/events.py"
JSON = "silvia_client/_sse.py"


def _patched(path: Path, anchor: str, new: str) -> Path:
    """`path` with its one `anchor` replaced by `new`; an anchor not found stops the run."""
    text = path.read_text()
    if text.count(anchor) != 1:
        raise SystemExit(f"{path.name}: the patch's anchor {anchor!r} is not there once")
    path.write_text(text.replace(anchor, new))
    return path


def _no_fast_json(tree: Path) -> Path:
    return _patched(tree / JSON, "\nFAST = True", "\nFAST = False")


def _text_regex(tree: Path) -> Path:
    anchor = "        reader = self._readers.get(name)\n        if FAST_PATH"
    path = _patched(
        tree / EVENTS,
        anchor,
        "        if name == 'text':\n"
        "            quick = _QUICK_TEXT.fullmatch(data)\n"
        "            if quick is not None:\n"
        "                return TextEvent(quick[1])\n" + anchor,
    )
    return _patched(
        path,
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport re\n\n"
        '_QUICK_TEXT = re.compile(r\'\\{"text": ?"([^"\\\\\\x00-\\x1f]*)"\\}\')\n',
    )


PATCHES: dict[str, Callable[[Path], Path] | None] = {
    "plain": None,
    "no_fast_json": _no_fast_json,
    "text_regex": _text_regex,
}


def _commit(variant: str) -> str:
    if variant == "main":  # not main's tip, which may hold other branches' work since
        found = subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True
        )
        return found.stdout.strip()
    return COMMITS[variant]


def tree_of(variant: str, bench: str) -> Path:
    """The folder to put on PYTHONPATH for `variant`, made afresh."""
    target = WORK / bench / variant  # by benchmark: two can run at once
    if target.exists():
        if variant in COMMITS:
            subprocess.run(["git", "worktree", "remove", "--force", str(target)], cwd=ROOT)
        shutil.rmtree(target, ignore_errors=True)
    if variant in COMMITS:
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(target), _commit(variant)],
            cwd=ROOT,
            check=True,
        )
        return target
    target.mkdir(parents=True)
    shutil.copytree(ROOT / "silvia_client", target / "silvia_client")
    patch = PATCHES[variant]
    if patch is not None:
        before = {path: path.read_text() for path in (target / EVENTS, target / JSON)}
        patched = patch(target)
        if patched.read_text() == before[patched]:
            raise SystemExit(f"{variant}: the patch no longer applies to {patched}")
    return target


# The stream benchmark's baselines, by the name it prints, and as this script shows them.
BASELINES = {"httpx-sse + json.loads": "hand loop", "anthropic Stream": "Anthropic"}
RATIO = re.compile(r"(iterate|until_done|sessions\.get / json\.loads:)\s+([0-9.]+)x")


def run(variant: str, tree: Path, bench: str, args: list[str]) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    script = ROOT / "benchmarks" / f"bench_{bench}.py"
    out = subprocess.run(
        [sys.executable, str(script), *args], env=env, capture_output=True, text=True, check=True
    ).stdout
    ratios: dict[str, list[float]] = {}
    section = ""
    for line in out.splitlines():
        if line.startswith("mix "):  # "mix 'heavy' (...), 4,096-byte chunks (...):"
            mix = line.split("'")[1]
            chunking = line.split("), ")[1].split(" (")[0].rstrip(":")
            section = f"{mix}, {chunking}"
        if "sessions.get / json.loads" in line:
            for what, value in RATIO.findall(line):
                ratios.setdefault(f"{section} {what.rstrip(':')}", []).append(float(value))
        for baseline, label in BASELINES.items():
            if f"silvia / {baseline}" in line:
                for what, value in RATIO.findall(line):
                    ratios.setdefault(f"{section} {what} / {label}", []).append(float(value))
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="plain,no_fast_json,text_regex,before")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bench", choices=["stream", "history"], default="stream")
    parser.add_argument("bench_args", nargs="*", help="passed to the benchmark, after --")
    args = parser.parse_args()
    variants = args.variants.split(",")
    trees = {variant: tree_of(variant, args.bench) for variant in variants}
    results: dict[str, dict[str, list[float]]] = {variant: {} for variant in variants}
    for round_ in range(args.runs):
        for variant in variants:
            for key, values in run(variant, trees[variant], args.bench, args.bench_args).items():
                results[variant].setdefault(key, []).extend(values)
            print(f"round {round_ + 1}: {variant} done", file=sys.stderr)
    keys = sorted({key for found in results.values() for key in found})
    print(f"{args.bench}, {args.runs} runs each, medians (per-run figures in brackets):")
    for key in keys:
        print(f"  {key}")
        for variant in variants:
            values = results[variant].get(key, [])
            shown = ", ".join(f"{v:.2f}" for v in values)
            median = statistics.median(values) if values else float("nan")
            print(f"    {variant:11} {median:5.2f}x  [{shown}]")


if __name__ == "__main__":
    main()
