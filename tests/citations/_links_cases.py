"""Account ids, an app origin and a citation builder shared by the `test_links_*` modules."""

from __future__ import annotations

from typing import Any

from silvia_client.citations import Citation

ID = "acc_9f8e7d6c5b4a3210"
DOT_SEGMENTS = (".", "..")  # ids whose path would be a dot segment: no link
ID2 = "acc_0123456789abcdef"
BASE = "https://app.example.com"


def _citation(target: Any = None, **fields: Any) -> Citation:
    row: dict[str, Any] = {"source": "silvia://your-account/checking", **fields}
    if target is not None:
        row["target"] = target
    return Citation.model_validate(row)
