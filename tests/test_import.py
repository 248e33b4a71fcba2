"""What `import silvia_client` loads, and what it leaves until first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import silvia_client
import silvia_client.citations as citations
from silvia_client.citations import _rows


def test_the_models_and_the_views_load_on_first_use_not_at_import() -> None:
    # pydantic's model machinery is most of an import's cost; like `import pydantic`,
    # the package leaves it until a citation model is first needed. The views load
    # only when shown, even where the command line is built; pandas only for `to_pandas`.
    code = (
        "import sys, silvia_client, silvia_client.cli\n"
        "silvia_client.cli.build_parser()\n"
        "print(*(m in sys.modules for m in "
        "('silvia_client.citations._rows', 'pydantic.main', 'silvia_client.display')))\n"
        "from silvia_client.testing import ReferenceServer\n"
        "turn = ReferenceServer().client().chat.send('hi')\n"
        "print(len(turn.citation_records()) > 0, 'pandas' in sys.modules)\n"
        "from silvia_client import Citation\n"
        "from silvia_client.citations import InlineCitation, load_citations\n"
        "print(Citation.__module__, InlineCitation.__module__, load_citations.__module__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.splitlines() == [
        "False False False",
        "True False",
        "silvia_client.citations._rows silvia_client.citations._rows silvia_client.citations._rows",
    ]


def test_a_citation_model_is_read_from_the_rows_module_then_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # In this process the names were loaded long ago: drop them to load them again.
    for name in ("Citation", "InlineCitation", "load_citations"):
        monkeypatch.delitem(vars(citations), name, raising=False)
        assert getattr(citations, name) is getattr(_rows, name)
        assert vars(citations)[name] is getattr(_rows, name)  # kept: no second lookup


def test_a_name_neither_module_has_is_an_attribute_error_naming_it() -> None:
    for module in (silvia_client, citations):
        with pytest.raises(AttributeError) as info:
            module.NoSuchName  # noqa: B018
        assert str(info.value) == f"module {module.__name__!r} has no attribute 'NoSuchName'"
        assert "NoSuchName" not in vars(module)
