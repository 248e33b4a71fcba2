"""What a QA finding may show: never a provider, never a vendor name, never the token.

Every finding passes through here (the checker builds them all): a `provider` value
at any depth becomes `"<redacted>"` (null stays null); a vendor name in a string is
replaced, and a string that *is* a provider value is replaced whole. The token never
gets here: findings are built from what the server sent.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ..citations import PROVIDERS

REDACTED = "<redacted>"
VENDOR = "<vendor>"

VENDOR_NAME = re.compile(r"plaid|snap[\s_-]?trade", re.IGNORECASE)
"""The vendors behind `provider` (the doc's Privacy section), in any case."""


def redact_text(text: str) -> str:
    """`text` with every vendor name replaced."""
    if text.strip().lower() in PROVIDERS:
        return REDACTED
    return VENDOR_NAME.sub(VENDOR, text)


def redact(value: object) -> object:
    """A JSON-like value safe to show: providers and vendor names removed, at any depth."""
    if isinstance(value, dict):
        return {
            redact_text(str(key)): (
                REDACTED if key == "provider" and item is not None else redact(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Decimal):  # a number no float holds: its digits, as text
        return str(value)
    return value
