"""Types as a user's editor sees them: pyright on the package, the examples and a typed script.

With pyright (the `types` extra; else skipped): `--verifytypes` scores the installed wheel's
public types 100%, all documented; strict mode finds nothing in `examples/` nor in
`tests/typed_user.py`, which then runs on the reference server.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

import silvia_client

from . import typed_user

ROOT = Path(__file__).resolve().parent.parent

needs_pyright = pytest.mark.skipif(
    importlib.util.find_spec("pyright") is None,
    reason="pyright is not installed (the `types` extra: pip install -e '.[types]')",
)

# Names of the root's `__all__` the typed script need not use, each with why.
NOT_USER_NAMES = {
    "__version__": "a string, nothing to type",
    "DEFAULT_WIRE": "the wire's shape, for a server that differs: not a user's daily name",
    "EventNames": "the same",
    "WireFormat": "the same",
}


def pyright(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # pyright asks the `python` on PATH for its import paths: this one first.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pyright", *args],
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=False,
    )


def installed_from_a_wheel() -> bool:
    """Whether the package comes from site-packages: from a source tree pyright scores it as
    first-party code, with unknowns a user never meets (issue 21: the wheel's score)."""
    package = Path(silvia_client.__file__).resolve().parent
    return any(package.parent == Path(path).resolve() for path in site.getsitepackages())


@needs_pyright
@pytest.mark.skipif(
    not installed_from_a_wheel(),
    reason="verifytypes scores a wheel installed in site-packages (as .ci/run installs one)",
)
def test_verifytypes_scores_the_package_100_percent(tmp_path: Path) -> None:
    # From an empty directory, so that no project configuration applies.
    result = pyright(
        "--verifytypes", "silvia_client", "--ignoreexternal", "--outputjson", cwd=tmp_path
    )
    report = json.loads(result.stdout)["typeCompleteness"]
    misses = [
        f"{symbol['name']}: {diagnostic['message']}"
        for symbol in report["symbols"]
        for diagnostic in symbol["diagnostics"]
        if diagnostic["severity"] == "error"
    ]
    assert report["completenessScore"] == 1, "\n".join(misses)
    assert report["missingFunctionDocStringCount"] == 0, "\n".join(misses)
    assert report["missingClassDocStringCount"] == 0, "\n".join(misses)
    assert report["exportedSymbolCounts"]["withUnknownType"] == 0


@needs_pyright
def test_pyright_strict_on_the_examples_and_the_typed_script() -> None:
    result = pyright("--outputjson", cwd=ROOT)
    report = json.loads(result.stdout)
    checked = report["summary"]["filesAnalyzed"]
    problems = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
    ]
    assert problems == []
    examples = list((ROOT / "examples").glob("*.py"))
    assert checked >= len(examples) + 1  # [tool.pyright] still covers them all


def test_the_typed_script_uses_every_public_name_of_the_root() -> None:
    source = (ROOT / "tests" / "typed_user.py").read_text(encoding="utf-8")
    used = {
        alias.asname or alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "silvia_client"
        for alias in node.names
    }
    missing = set(silvia_client.__all__) - used - NOT_USER_NAMES.keys()
    assert missing == set(), "add them to tests/typed_user.py, typed as a user would use them"


def test_the_typed_script_runs() -> None:
    out = typed_user.main()
    kinds = " ".join(line.split(" ")[0] for line in out["rows"][4:])
    assert kinds == "web tax card mortgage market analysis account accounts portfolio"
    assert out["local"] == [
        *("ConfigurationError is a ValueError: True", "ClientClosedError", "EventLoopChangedError"),
        *("InvalidAccountIdError", "RecordingFormatError", "ScriptFormatError"),
    ]
    assert out["caught"] == [
        "ok complete=True request id given=True",
        "StreamTooLargeError 64",
        "APIConnectionError",
    ]
    assert out["stream"][1].startswith("complete=True ")
    assert out["options"][0] == "send: complete=True"
    assert out["options"][1] != "text_stream: 0 characters"
    assert out["recording"][0].startswith("replayed: ['account /accounts/")
    assert out["async"][2] == "2 messages, then True"
    # The provider is typed and read, never shown.
    assert not any("manual" in line or "plaid" in line for lines in out.values() for line in lines)
