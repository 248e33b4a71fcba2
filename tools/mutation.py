"""Mutation testing of the parsers, the turn builder and the client's decisions: would the tests
notice a bug?

    pip install -e '.[test,mutation]'
    python tools/mutation.py                  # every group below
    python tools/mutation.py citations sse    # only these groups
    python tools/mutation.py --list           # the groups, their modules and tests

What it runs: for each group, a copy of `silvia_client/`, `tests/`, `docs/` and
`pyproject.toml` in `build/mutation/<group>/` (made anew each run), with a
`[tool.mutmut]` section naming the group's modules and test files, then
`mutmut run` there. mutmut changes one thing at a time inside each function of
those modules (an operator, a constant, a string, an argument dropped) and runs
the group's tests that call that function against each change, fastest first,
stopping at the first failure. A mutant the tests notice is killed; one they do
not is a survivor, printed with its diff. A group that names functions
(`Group.functions`) runs and scores only theirs, for a module too big to run whole.
After a run, `mutmut show NAME` and `mutmut browse` in `build/mutation/<group>/`
show any mutant.

The tests run under the `mutation` hypothesis profile (`tests/conftest.py`):
fewer examples, the same ones every run (so scores compare), no example database.
A few tests cannot pass under mutmut, which calls each mutated function through
a wrapper of its own (a warning's `stacklevel` then points into the wrapper), or
in the process it forks (polars' thread pool, started by the first run, is not in
the fork: a polars query there waits forever), and a few only notice code run at
import, which mutmut's forks never run again (`TurnSoFar`'s fields):
they are deselected (`Group.blind`) and run afterwards, without mutmut, against
each survivor of their group, applied to the copy.

mutmut runs the tests once in its own process, then forks it for each mutant, so
what that run built and cached is not built again under a mutant: the events'
table, one `EventDecoder` per wire format shared through `event_decoder` (an
`lru_cache`), is built mutated only where a test builds its own
(`tests/client/test_events.py`).

Scores, per module: killed / total, where total leaves out the mutants listed in
`EQUIVALENT` (`tools/mutation_equivalent.py`: changes with no observable
difference, each with its reason). A listed mutant that no longer exists or is
killed is reported as stale.

How long: about eight minutes for all groups (7.5 min on 2 idle cores);
each group prints its own time. Not run in CI.

What it cannot see: mutmut mutates code inside functions only. Module-level
values are never mutated: the http(s) URL pattern in `citations/_targets.py`, the
tables of parsers, the limits in `_wire.py`, `_PREVIEW_CHARS` in `chat/_turn.py`;
nor decorated functions (`event_decoder`, an `lru_cache`). Explicit tests guard
those: `NOT_HTTP_URLS` in `tests/citations/test_links.py` (`javascript://`,
`httpx://`, `wss://`, `https:\\\\host`, ...), which a widened scheme fails; the
previews of 60 and 61 characters in `tests/client/test_turn.py`; one decoder per
wire format in `tests/client/test_events.py`.

Exit status: 0 when every mutant is killed or listed as equivalent, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mutation_equivalent import EQUIVALENT  # beside this script: on sys.path when it runs

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "mutation"
PACKAGE = "silvia_client"
HYPOTHESIS_PROFILE = "mutation"  # registered in tests/conftest.py; also read by tests/citations
PROFILE = (f"--hypothesis-profile={HYPOTHESIS_PROFILE}",)


@dataclass(frozen=True)
class Group:
    """Modules mutated together, and the tests that may kill their mutants."""

    modules: tuple[str, ...]  # paths under silvia_client/
    tests: tuple[str, ...]  # test files (or folders) mutmut chooses from, per function
    blind: Mapping[str, str] = field(default_factory=dict)  # test id -> why mutmut can't run it
    # Only these functions' mutants are run and scored (mutmut still mutates the whole
    # module), named as mutmut names them: `x_name`, or `xǁClassǁmethod`. None: all.
    functions: tuple[str, ...] = ()


# The views' tests, for the `_repr_html_` and `_repr_markdown_` of turns and messages.
VIEWS = (
    "tests/display/test_html.py",
    "tests/display/test_markdown.py",
)

POLARS = {
    "tests/records/test_records.py::test_the_records_make_a_polars_frame_as_they_are": (
        "polars' thread pool does not survive mutmut's fork: the query waits forever"
    ),
}

GROUPS: dict[str, Group] = {
    "citations": Group(
        modules=(
            "citations/__init__.py",
            "citations/_accounts.py",
            "citations/_links.py",
            "citations/_targets.py",
        ),
        tests=("tests/citations", "tests/test_public_names.py", "tests/client/test_turn.py"),
        blind={
            "tests/citations/test_links.py::test_base_url_is_a_deprecated_alias_of_web_url": (
                "checks the warning's stacklevel, which mutmut's wrapper frame shifts"
            ),
        },
    ),
    "rows": Group(
        modules=("citations/_rows.py",),
        tests=(
            "tests/citations",
            "tests/client/test_events.py",
            "tests/client/test_turn.py",
            "tests/client/test_sessions.py",
        ),
    ),
    "sse": Group(
        modules=("_sse.py",),
        tests=(
            "tests/test_sse.py",  # the SSE decoder and JSON as the wire carries it
            "tests/test_fast_json.py",
            "tests/client/test_chat_stream.py",
            "tests/client/test_limits.py",
        ),
    ),
    "events": Group(
        modules=("chat/events.py",),
        tests=(
            "tests/client/test_events.py",  # and to_dict / to_json
            "tests/test_fast_json.py",  # the fast readers against the plain ones
            "tests/client/test_chat_stream.py",
            "tests/client/test_turn.py",
        ),
    ),
    "turn": Group(
        modules=("chat/_turn.py",),
        tests=(
            "tests/client/test_turn.py",
            "tests/records",
            *VIEWS,
        ),
        blind={
            **POLARS,
            "tests/client/test_turn.py::"
            "test_each_copied_field_defaults_as_a_turns_and_reads_its_own_list": (
                "`TurnSoFar`'s fields are built at import: mutated, they show only afresh"
            ),
        },
    ),
    "sessions": Group(
        modules=("sessions/_history.py", "_async/_sessions.py"),
        tests=(
            "tests/client/test_sessions.py",
            "tests/client/test_turn.py",
            "tests/client/test_chat_stream.py",
            "tests/client/test_errors.py",
            "tests/client/test_limits.py",
            "tests/client/test_retries.py",
            "tests/records",
            *VIEWS,
        ),
        blind=POLARS,
    ),
    "retries": Group(
        modules=("_retries.py",),
        tests=("tests/client/test_retries.py",),
    ),
    "deadline": Group(
        modules=("_deadline.py",),
        tests=(
            "tests/client/test_watchdog.py",
            "tests/client/test_deadline.py",
            "tests/client/test_retries.py",
            "tests/client/test_limits.py",  # a Halt at a size limit
            # The argument table and `RequestOptions`, in the same module:
            "tests/client/test_config.py",
            "tests/client/test_chat_stream.py",
            "tests/client/test_errors.py",
            "tests/client/test_privacy.py",  # the token's and the base URL's checks, plain http
        ),
    ),
    "body": Group(
        modules=("_async/_body.py",),
        tests=(
            "tests/client/test_body_reads.py",
            "tests/client/test_limits.py",
            "tests/client/test_chat_stream.py",
        ),
    ),
    # The client's own arguments, read before the argument table; the rest of `_base.py`
    # is the I/O's, which a whole-module run would test against these few files.
    "base": Group(
        modules=("_base.py",),
        functions=("x_token_from", "x_base_url_from", "x_is_local"),
        tests=(
            "tests/client/test_config.py",
            "tests/client/test_privacy.py",
        ),
    ),
}

# --------------------------------------------------------------------------- running


def mutmut() -> str:
    found = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which("mutmut")
    if found is None:
        sys.exit("mutmut is not installed: pip install -e '.[mutation]'")
    return found


def toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join('"' + value.replace("\\", "\\\\") + '"' for value in values) + "]"


def prepare(name: str, group: Group) -> Path:
    """A fresh copy of the package and tests, configured for this group."""
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "artifacts")
    shutil.copytree(ROOT / PACKAGE, work / PACKAGE, ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    shutil.copytree(ROOT / "docs", work / "docs", ignore=ignore)  # the argument table's page
    pytest_args = ["-p", "no:cacheprovider", f"--hypothesis-profile={HYPOTHESIS_PROFILE}"]
    for test in group.blind:
        pytest_args += ["--deselect", test]
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    config += (
        "\n[tool.mutmut]\n"
        f'source_paths = ["{PACKAGE}"]\n'
        f"only_mutate = {toml_list([f'{PACKAGE}/{module}' for module in group.modules])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(group.tests)}\n"
        f"pytest_add_cli_args = {toml_list(pytest_args)}\n"
        "use_git_change_detection = false\n"
        'also_copy = ["docs"]\n'  # mutmut runs in mutants/, which holds only what it copies
    )
    (work / "pyproject.toml").write_text(config, encoding="utf-8")
    return work


def environment() -> dict[str, str]:
    env = dict(os.environ, HYPOTHESIS_PROFILE=HYPOTHESIS_PROFILE)
    env.pop("SILVIA_WEB_URL", None)
    return env


def dotted(module: str) -> str:
    return f"{PACKAGE}/{module}".removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def selected(mutant: str, group: Group) -> bool:
    function = mutant.rsplit(".", 1)[-1].partition("__mutmut_")[0]
    return not group.functions or function in group.functions


def run_mutmut(work: Path, jobs: int, group: Group) -> None:
    log = work / "mutmut.log"
    # mutmut runs the mutants whose names match (fnmatch), and the tests of the functions
    # whose names match: `x_name*` matches both the function and its mutants.
    only = [f"{dotted(m)}.{f}*" for m in group.modules for f in group.functions]
    with log.open("w", encoding="utf-8") as out:
        status = subprocess.run(
            [mutmut(), "run", "--max-children", str(jobs), *only],
            cwd=work,
            env=environment(),
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        ).returncode
    if status != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        sys.exit(f"mutmut run failed ({status}) in {work}; the end of {log}:\n{tail}")


def statuses(work: Path) -> dict[str, str]:
    """Every mutant of the run and what became of it (killed, survived, no tests, ...)."""
    listed = subprocess.run(
        [mutmut(), "results", "--all", "true"],
        cwd=work,
        env=environment(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.findall(r"^\s+(\S+): (.+)$", listed, flags=re.MULTILINE)
    return {mutant: status.strip() for mutant, status in found}


def diff(work: Path, mutant: str) -> str:
    shown = subprocess.run(
        [mutmut(), "show", mutant], cwd=work, capture_output=True, text=True, check=False
    ).stdout
    return "\n".join(line for line in shown.splitlines()[1:] if line.strip())


def killed_afresh(work: Path, mutant: str, tests: Sequence[str]) -> bool:
    """Apply `mutant` to the copy, run `tests` there without mutmut, then undo it."""
    module = mutant.rsplit(".", 1)[0]
    path = module.replace(".", "/")
    source = Path(path, "__init__.py") if (work / path).is_dir() else Path(path + ".py")
    subprocess.run([mutmut(), "apply", mutant], cwd=work, capture_output=True, check=True)
    try:
        status = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                *PROFILE,
                *tests,
            ],
            cwd=work,  # `-m` puts the copy first on sys.path: its silvia_client is imported
            env=environment(),
            capture_output=True,
            check=False,
        ).returncode
    finally:
        shutil.copy2(ROOT / source, work / source)
    return status != 0


# --------------------------------------------------------------------------- scoring


def module_of(mutant: str, group: Group) -> str:
    name = mutant.rsplit(".", 1)[0]
    return next((module for module in group.modules if dotted(module) == name), name)


def report(name: str, group: Group, work: Path, started: float) -> bool:
    """Print the group's scores and survivors; True when nothing survived."""
    results = {m: s for m, s in statuses(work).items() if selected(m, group)}
    for mutant, status in results.items():
        if status != "survived":
            continue
        if group.blind and killed_afresh(work, mutant, tuple(group.blind)):
            results[mutant] = "killed (by a test mutmut cannot run)"
    minutes = (time.monotonic() - started) / 60  # the re-checks without mutmut included
    print(f"\n== {name}: {len(results)} mutants in {minutes:.1f} min")
    clean = True
    for module in group.modules:
        mine = {m: s for m, s in results.items() if module_of(m, group) == module}
        scored = {m: s for m, s in mine.items() if m not in EQUIVALENT}
        killed = [m for m, s in scored.items() if s.startswith("killed") or s == "timeout"]
        equivalent = len(mine) - len(scored)
        note = f" ({equivalent} equivalent, not counted)" if equivalent else ""
        print(f"{PACKAGE}/{module}: {len(killed)} / {len(scored)} killed{note}")
        for mutant, status in sorted(scored.items()):
            if status.startswith("killed") or status == "timeout":
                continue
            clean = False
            print(f"  {status}: {mutant}")
            print("    " + diff(work, mutant).replace("\n", "\n    "))
    for mutant in sorted(EQUIVALENT):
        outcome = results.get(mutant, "no such mutant")
        ours = module_of(mutant, group) in group.modules and selected(mutant, group)
        if ours and outcome != "survived":
            clean = False
            print(f"  stale EQUIVALENT entry ({outcome}): {mutant}")
    return clean


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "groups", nargs="*", metavar="GROUP", help=f"groups to run (default: {', '.join(GROUPS)})"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 2,
        help="mutants tested at once (default: one per core)",
    )
    parser.add_argument("--list", action="store_true", help="print the groups and exit")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.groups) - set(GROUPS))
    if unknown:
        parser.error(f"no such group: {', '.join(unknown)} (groups: {', '.join(GROUPS)})")
    if args.list:
        for name, group in GROUPS.items():
            print(f"{name}: {', '.join(group.modules)}\n    tests: {', '.join(group.tests)}")
        return 0
    clean = True
    started = time.monotonic()
    for name in args.groups or GROUPS:
        group = GROUPS[name]
        group_started = time.monotonic()
        work = prepare(name, group)
        run_mutmut(work, args.jobs, group)
        clean = report(name, group, work, group_started) and clean
    print(f"\nall in {(time.monotonic() - started) / 60:.1f} min")
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
