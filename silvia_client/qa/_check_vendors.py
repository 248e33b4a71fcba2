"""No vendor names where a user reads them: `no-vendor-names`.

It looks at the answer text, and at every citation's title and quoted text
(`cited_text`): a UI shows the quote as the citation's excerpt. A finding
names the field and the place (offsets, rows), never the text around the name;
the names themselves are `_privacy.VENDOR_NAME`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._facts import Facts
from ._privacy import VENDOR_NAME
from ._rule import Problem

__all__ = ["check_no_vendor_names"]


def check_no_vendor_names(facts: Facts) -> Iterator[Problem]:
    asked = (
        "; the prompt names a vendor too" if VENDOR_NAME.search(facts.observation.prompt) else ""
    )
    offsets = [match.start() for match in VENDOR_NAME.finditer(facts.text)]
    if offsets:
        yield Problem(
            f"a vendor name appears in the answer text ({len(offsets)} time(s)){asked}",
            {"field": "text", "offsets": offsets},
        )
    places: dict[tuple[str, str], list[str]] = {}
    for row in [*facts.streamed, *(facts.summary or ())]:
        for name in ("title", "cited_text"):
            value = row.raw.get(name)
            if isinstance(value, str) and VENDOR_NAME.search(value):
                places.setdefault((row.source, name), []).append(row.where)
    for (source, name), where in places.items():
        yield Problem(
            f"{source}: a vendor name appears in citations' `{name}`{asked}",
            {"field": name, "source": source, "where": where},
        )
