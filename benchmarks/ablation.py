"""What a fast path would buy: the plain tree against variants of it, side by side.

    python benchmarks/ablation.py [--variants plain,from_json,text_regex,before]
                                  [--runs N] [--bench stream|history] [-- BENCH ARGS...]

Each variant is a copy of `silvia_client/` under `build/ablation/<variant>/`
with one small patch applied (below), or, for `before`, the tree as it was
before the plain core (`git worktree` of `BEFORE`, the commit this rewrite
started from). The benchmark (`bench_stream.py` or `bench_history.py`) then runs
once per variant per round, the variants in turn, each in a fresh interpreter
with `PYTHONPATH` at that variant's tree, `--runs` rounds; every run measures
silvia against its own baseline (the hand loop, or `json.loads`) in the same
process, so the ratios of different runs compare. The script prints each
variant's ratios per run and their median.

The variants (each a fast path that is not in the package; CONTRIBUTING's rule
keeps one only if turning it off costs 15% or more on its benchmark):

* `plain`: the package as it is.
* `from_json`: events decoded by `pydantic_core.from_json`, falling back to
  `json.loads` where it refuses (lone surrogates, a BOM, deep nesting), as the
  old `_json.loads` did.
* `text_regex`: a `text` event whose data is exactly `{"text":"..."}` with no
  escape is read by a regular expression, without decoding JSON.
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

EVENTS = "silvia_client/chat/events.py"
DECODE = "            return reader(json.loads(data), self._wire, offset)\n"


def _from_json(tree: Path) -> None:
    path = tree / EVENTS
    text = path.read_text()
    text = text.replace(
        DECODE,
        "            try:\n"
        "                value = from_json(data)\n"
        "            except ValueError:\n"
        "                value = json.loads(data)\n"
        "            return reader(value, self._wire, offset)\n",
    )
    text = text.replace("import json\n", "import json\n\nfrom pydantic_core import from_json\n", 1)
    path.write_text(text)


def _text_regex(tree: Path) -> None:
    path = tree / EVENTS
    text = path.read_text()
    text = text.replace(
        "        reader = self._readers.get(name)\n",
        "        if name == 'text':\n"
        "            quick = _QUICK_TEXT.fullmatch(data)\n"
        "            if quick is not None:\n"
        "                return TextEvent(quick[1])\n"
        "        reader = self._readers.get(name)\n",
    )
    text = text.replace(
        "import json\n",
        "import json\nimport re\n\n"
        '_QUICK_TEXT = re.compile(r\'\\{"text": ?"([^"\\\\\\x00-\\x1f]*)"\\}\')\n',
        1,
    )
    path.write_text(text)


PATCHES: dict[str, Callable[[Path], None] | None] = {
    "plain": None,
    "from_json": _from_json,
    "text_regex": _text_regex,
}


def tree_of(variant: str) -> Path:
    """The folder to put on PYTHONPATH for `variant`, made afresh."""
    target = WORK / variant
    if target.exists():
        if variant == "before":
            subprocess.run(["git", "worktree", "remove", "--force", str(target)], cwd=ROOT)
        shutil.rmtree(target, ignore_errors=True)
    if variant == "before":
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(target), BEFORE], cwd=ROOT, check=True
        )
        return target
    target.mkdir(parents=True)
    shutil.copytree(ROOT / "silvia_client", target / "silvia_client")
    patch = PATCHES[variant]
    if patch is not None:
        before = (target / EVENTS).read_text()
        patch(target)
        if (target / EVENTS).read_text() == before:
            raise SystemExit(f"{variant}: the patch no longer applies to {EVENTS}")
    return target


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
        if "silvia / httpx-sse + json.loads" in line or "sessions.get / json.loads" in line:
            for what, value in RATIO.findall(line):
                ratios.setdefault(f"{section} {what.rstrip(':')}", []).append(float(value))
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="plain,from_json,text_regex,before")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bench", choices=["stream", "history"], default="stream")
    parser.add_argument("bench_args", nargs="*", help="passed to the benchmark, after --")
    args = parser.parse_args()
    variants = args.variants.split(",")
    trees = {variant: tree_of(variant) for variant in variants}
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
