"""The example notebook, saved as a run reproduces it, and the check that says so.

`tools/check_notebooks.py` (CI's) on notebooks built in memory and, with the `notebook`
extra, end to end: the tour, copied outside the repository, runs as saved; a stale
output and a raising cell fail.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "examples" / "citations_tour.ipynb"
NEEDS_THE_EXTRA = "needs the notebook extra: pip install -e '.[notebook]'"

UNREPEATABLE = {
    "a random session id": re.compile(r"sess_[0-9a-f]{32}"),
    "a random message id": re.compile(r"msg_[0-9a-f]{24}"),
    "a clock time": re.compile(r"20\d\d-\d\d-\d\dT(?!00:00:00\.000Z)"),
    "a memory address": re.compile(r" at 0x[0-9a-f]{6,}"),
}


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_notebooks", ROOT / "tools" / "check_notebooks.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKER = _load_checker()  # it imports the notebook extra only when it runs one


def test_the_tour_is_saved_with_its_outputs_and_nothing_a_rerun_would_change() -> None:
    notebook = json.loads(TOUR.read_text(encoding="utf-8"))
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert [cell["execution_count"] for cell in code] == list(range(1, len(code) + 1))
    kinds = [o["output_type"] for cell in code for o in cell["outputs"]]
    assert "error" not in kinds
    shown = [o.get("data", {}) for cell in code for o in cell["outputs"]]
    html = [data["text/html"] for data in shown if "text/html" in data]
    assert len(html) == 4, "the turn, a citation, the session and the live turn display as HTML"
    assert all("silvia-" in "".join(page) for page in html)
    text = json.dumps([cell.get("outputs", []) for cell in notebook["cells"]])
    for what, pattern in UNREPEATABLE.items():
        assert not pattern.search(text), f"the saved outputs hold {what}"
    for vendor in ("plaid", "snaptrade"):
        assert vendor not in text.lower()


# The comparison ---------------------------------------------------------------------------


def _notebook(*outputs: list[dict[str, Any]], count: int = 1) -> Any:
    nbformat = pytest.importorskip("nbformat", reason=NEEDS_THE_EXTRA)
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    cells = []
    for cell_outputs in outputs:
        cell = new_code_cell("x", execution_count=count)
        cell.outputs = [new_output(**output) for output in cell_outputs]
        cells.append(cell)
    return nbformat.from_dict(new_notebook(cells=cells))


def _stream(text: str, name: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def _result(**data: str) -> dict[str, Any]:
    mime = {key.replace("_", "/"): value for key, value in data.items()}
    return {"output_type": "execute_result", "data": mime, "execution_count": 1}


def test_stream_pieces_counts_and_metadata_are_no_difference_a_changed_output_is() -> None:
    saved = _notebook([_stream("Hello, "), _stream("world"), _result(text_plain="1")], count=1)
    fresh = _notebook([_stream("Hello, world"), _result(text_plain="1")], count=7)
    fresh.metadata["language_info"] = {"name": "python", "version": "3.13.0"}
    fresh.cells[0].metadata["execution"] = {"iopub.status.busy": "2025-01-01T00:00:00Z"}
    assert CHECKER.differences(saved, fresh) == []
    for before, after in [
        ([_result(text_html="<b>1</b>", text_plain="1")], [_result(text_html="<b>2</b>")]),
        ([_result(text_markdown="**1**")], [_result(text_markdown="**2**")]),
        (
            [_result(text_plain="Turn(session_id='a')")],
            [_result(text_plain="Turn(session_id='b')")],
        ),
        ([_stream("out")], [_stream("out", name="stderr")]),
        ([_stream("out")], []),
    ]:
        problems = CHECKER.differences(_notebook([], before), _notebook([], after))
        assert len(problems) == 1, (before, after)
        assert problems[0].startswith("code cell 2: outputs differ")


# End to end (needs the `notebook` extra) --------------------------------------------------


@pytest.fixture
def kernel_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("nbclient", "nbformat", "ipykernel"):
        pytest.importorskip(module, reason=NEEDS_THE_EXTRA)
    # The check clears these and points JUPYTER_PATH at its kernel: undone after the test.
    for name in ("SILVIA_BASE_URL", "SILVIA_TOKEN", "JUPYTER_PATH", "JUPYTER_PLATFORM_DIRS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("kernel_ready")
def test_the_check_fails_on_stale_outputs_and_on_a_raising_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    # Small notebooks, each its own kernel: the tour's own run is the test below.
    stale, raising = tmp_path / "stale.ipynb", tmp_path / "raising.ipynb"
    printed = new_code_cell("print('a newer view')", execution_count=1)
    printed.outputs = [new_output("stream", name="stdout", text="an older view\n")]
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1", execution_count=1), printed]), stale)
    nbformat.write(
        new_notebook(cells=[new_code_cell("print('ok')"), new_code_cell("1 / 0")]), raising
    )

    assert CHECKER.main([str(stale), str(raising)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {stale}: saved outputs are not what a run produces now" in out
    assert "code cell 2: outputs differ" in out
    assert any(line.startswith("-") and "an older view" in line for line in out.splitlines())
    assert f"FAIL {raising}: a cell raised" in out
    assert "ZeroDivisionError" in out


@pytest.mark.usefixtures("kernel_ready")
def test_the_tour_runs_as_saved_outside_the_repository_its_live_cell_updated_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run as the check runs it, from a copy in a folder outside the repository (the
    # kernel's working directory is the notebook's). nbclient applies each
    # `update_display_data` to the output it names: one output, however many updates;
    # counted here as they arrive.
    import nbformat
    from nbclient import NotebookClient

    class Counting(NotebookClient):
        updates: list[int] = []  # noqa: RUF012 (one list for the one run)

        def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
            if msg["msg_type"] == "update_display_data":
                self.updates.append(cell_index)
            return super().process_message(msg, cell, cell_index)

    elsewhere = tmp_path / "copy" / TOUR.name
    elsewhere.parent.mkdir()
    shutil.copy(TOUR, elsewhere)
    notebook = nbformat.read(elsewhere, as_version=4)
    cells = enumerate(notebook.cells)
    [index] = [i for i, c in cells if c.cell_type == "code" and "display.live(" in c.source]
    monkeypatch.setenv("JUPYTER_PATH", str(CHECKER._kernel_dir(tmp_path)))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    client = Counting(
        notebook,
        timeout=CHECKER.TIMEOUT,
        kernel_name=CHECKER.KERNEL,
        resources={"metadata": {"path": str(elsewhere.parent)}},
    )
    client.execute()
    assert CHECKER.differences(nbformat.read(TOUR, as_version=4), notebook) == []
    outputs = notebook.cells[index].outputs
    assert [o.output_type for o in outputs] == ["display_data"]
    assert Counting.updates, "the live output was updated"
    assert set(Counting.updates) == {index}
    shown = "".join(outputs[0].data["text/html"])
    assert "Sources" in shown  # the final view, with its sources
    assert "Streaming…" not in shown
