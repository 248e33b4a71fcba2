"""What `import silvia_client` loads, and what it leaves until first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import silvia_client.citations as citations


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout


def test_the_citation_models_load_on_first_use_not_at_import() -> None:
    # pydantic's model machinery is most of an import's cost; like `import pydantic`,
    # the package leaves it until a citation model is first needed.
    out = _run(
        "import sys, silvia_client\n"
        "print('silvia_client.citations._rows' in sys.modules, 'pydantic.main' in sys.modules)\n"
        "from silvia_client import Citation\n"
        "from silvia_client.citations import InlineCitation, load_citations\n"
        "print(Citation.__module__, InlineCitation.__module__, load_citations.__module__)\n"
    )
    assert out.splitlines() == [
        "False False",
        "silvia_client.citations._rows silvia_client.citations._rows silvia_client.citations._rows",
    ]


def test_a_name_neither_module_has_is_an_attribute_error() -> None:
    out = _run(
        "import silvia_client, silvia_client.citations\n"
        "for module in (silvia_client, silvia_client.citations):\n"
        "    try:\n"
        "        module.NoSuchName\n"
        "    except AttributeError as error:\n"
        "        print(type(error).__name__, error)\n"
    )
    assert out.splitlines() == [
        "AttributeError module 'silvia_client' has no attribute 'NoSuchName'",
        "AttributeError module 'silvia_client.citations' has no attribute 'NoSuchName'",
    ]


@pytest.mark.parametrize("name", ["Citation", "InlineCitation", "load_citations"])
def test_a_citation_model_is_read_from_the_rows_module_then_kept(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process the name was loaded long ago: drop it to load it again.
    from silvia_client.citations import _rows

    monkeypatch.delitem(vars(citations), name, raising=False)
    assert getattr(citations, name) is getattr(_rows, name)
    assert vars(citations)[name] is getattr(_rows, name)  # kept: no second lookup


def test_a_name_the_citations_package_lacks_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError) as info:
        citations.NoSuchName  # noqa: B018
    assert str(info.value) == "module 'silvia_client.citations' has no attribute 'NoSuchName'"
    assert "NoSuchName" not in vars(citations)
