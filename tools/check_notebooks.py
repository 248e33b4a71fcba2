"""Run every example notebook and check its saved outputs are what a run produces now.

    python tools/check_notebooks.py             # examples/*.ipynb; exit 1 on any difference
    python tools/check_notebooks.py --update    # run them and save the new outputs
    python tools/check_notebooks.py path.ipynb  # only these

Each notebook runs top to bottom in a fresh kernel on this interpreter (cwd: the
notebook's folder), against the embedded reference server: `SILVIA_BASE_URL`
and `SILVIA_TOKEN` are removed from the kernel's environment, and so is
`SILVIA_WEB_URL`, which would make the saved account links absolute. A cell that
raises fails the check. Then every code cell's outputs are compared with the
saved ones: stream text (consecutive pieces of one stream joined), and the
`text/plain`, `text/html` and `text/markdown` of results and displays, in
order. Execution counts and metadata are ignored.

Needs `nbclient`, `nbformat` and `ipykernel` (the `notebook` extra).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMPARED = ("text/plain", "text/html", "text/markdown")
KERNEL = "silvia-notebook-check"
TIMEOUT = 300  # seconds a cell may run: a hang fails the check instead of CI


def normalized(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The outputs that are compared, in order, in a form that compares."""
    out: list[dict[str, Any]] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = _text(output.get("text", ""))
            if out and out[-1].get("stream") == output.get("name"):
                out[-1]["text"] += text
            else:
                out.append({"stream": output.get("name"), "text": text})
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            out.append({mime: _text(data[mime]) for mime in COMPARED if mime in data})
        elif kind == "error":
            out.append({"error": output.get("ename"), "value": output.get("evalue")})
    return out


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def _kernel_dir(parent: Path) -> Path:
    """A kernelspec for this interpreter, so the kernel is this venv's whatever else is set up."""
    spec = parent / "kernels" / KERNEL
    spec.mkdir(parents=True)
    # ERROR: not the warning that a local kernel talks TCP without encryption.
    argv = [
        sys.executable,
        "-m",
        "ipykernel_launcher",
        "--log-level=ERROR",
        "-f",
        "{connection_file}",
    ]
    kernel = {"argv": argv, "display_name": "silvia-client check", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    return parent


def execute(path: Path) -> Any:
    """The notebook at `path`, run in a fresh kernel (raises if a cell fails)."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=TIMEOUT,
        kernel_name=KERNEL,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return notebook


def differences(saved: Any, fresh: Any) -> list[str]:
    """Where the fresh run's outputs differ from the saved ones, as readable lines."""
    problems: list[str] = []
    saved_cells = [c for c in saved.cells if c.cell_type == "code"]
    fresh_cells = [c for c in fresh.cells if c.cell_type == "code"]
    for number, (old, new) in enumerate(zip(saved_cells, fresh_cells, strict=True), start=1):
        before, after = normalized(old.get("outputs", [])), normalized(new.get("outputs", []))
        if before == after:
            continue
        old_lines = json.dumps(before, indent=1).splitlines()
        new_lines = json.dumps(after, indent=1).splitlines()
        diff = difflib.unified_diff(old_lines, new_lines, "saved", "fresh", lineterm="", n=1)
        problems.append(f"code cell {number}: outputs differ\n" + "\n".join(diff))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: examples/*.ipynb")
    parser.add_argument("--update", action="store_true", help="save the fresh outputs")
    args = parser.parse_args(argv)
    try:
        import nbformat
        from nbclient.exceptions import CellExecutionError
    except ImportError as error:
        print(f"check_notebooks: {error.name} is missing: pip install -e '.[notebook]'")
        return 2

    paths = args.notebooks or sorted((ROOT / "examples").glob("*.ipynb"))
    if not paths:
        print("check_notebooks: no notebooks found")
        return 1
    for name in ("SILVIA_BASE_URL", "SILVIA_TOKEN", "SILVIA_WEB_URL"):
        os.environ.pop(name, None)
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        jupyter_path = [str(_kernel_dir(Path(scratch))), os.environ.get("JUPYTER_PATH", "")]
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, jupyter_path))
        for path in paths:
            try:
                fresh = execute(path)
            except CellExecutionError as error:
                print(f"FAIL {path}: a cell raised\n{error}")
                failed += 1
                continue
            saved = nbformat.read(path, as_version=4)
            if args.update:
                # The fresh outputs into the saved notebook: its metadata stays as it was
                # (not this interpreter's version), so only outputs show in a diff.
                fresh_cells = [c for c in fresh.cells if c.cell_type == "code"]
                saved_cells = [c for c in saved.cells if c.cell_type == "code"]
                for old, new in zip(saved_cells, fresh_cells, strict=True):
                    old.outputs = new.outputs
                    old.execution_count = new.execution_count
                nbformat.write(saved, path)
                print(f"saved {path}")
                continue
            problems = differences(saved, fresh)
            if problems:
                failed += 1
                print(f"FAIL {path}: saved outputs are not what a run produces now")
                print("\n".join(problems))
                print("(run `python tools/check_notebooks.py --update` and review the diff)")
            else:
                print(f"ok   {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
