"""A session at a glance: a CSS bar by kind, and the same facts as text beside it.

Sources are counted once per message that cites them, by the kind of their final
target; a legacy row is one with no target.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..citations._final import final_targets
from ._style import KIND_NAMES, kind_class

if TYPE_CHECKING:
    from ..sessions._history import Message


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def glance_html(messages: Sequence[Message]) -> str:
    """The line: a bar by kind, then "N messages · N sources (N rows) · Kind N ... · N legacy"."""
    kinds: Counter[str | None] = Counter()
    rows = legacy = 0
    for message in messages:
        for target in final_targets(message.inline_citations, message.citations).values():
            kinds[None if target is None else target.kind] += 1
        for row in (*message.citations, *message.inline_citations):
            rows += 1
            legacy += row.target is None
    total = sum(kinds.values())
    typed = [(kind, kinds[kind]) for kind in KIND_NAMES if kinds[kind]]
    segments = "".join(
        f'<span class="{kind_class(kind)}" style="flex-grow:{count}"></span>'
        for kind, count in [*typed, (None, kinds[None])]  # untyped sources last, in grey
        if count
    )
    bar = f'<span class="silvia-bar" aria-hidden="true">{segments}</span>' if total else ""
    facts = [
        _plural(len(messages), "message"),
        f"{_plural(total, 'source')} cited ({_plural(rows, 'row')})",
        *(
            f'<span class="silvia-count {kind_class(kind)}">{KIND_NAMES[kind or ""]} {count}</span>'
            for kind, count in typed
        ),
        f'<span class="silvia-count silvia-kind-none">{_plural(legacy, "legacy row")}</span>',
    ]
    return f'<p class="silvia-glance">{bar}<span>{" · ".join(facts)}</span></p>'
