"""What a QA finding may show: never a provider, never a vendor name, never the token.

Every finding passes through here (`Finding` is only built by the checker,
which redacts its message and evidence), so the rule is kept in one place:

* the value of any `provider` key, at any depth, becomes `"<redacted>"`
  (a null stays null: that the rows did not say is not a secret);
* a string that names a vendor (in any case) has the name replaced, and a
  string that *is* a provider value (`"manual"` too) is replaced whole, so a
  provider the server put somewhere else (a target's `kind`, a dict key) is
  hidden as well;
* the token never gets here: findings are built from what the server sent,
  never from the request.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ..citations import PROVIDERS

__all__ = ["REDACTED", "VENDOR_NAME", "redact", "redact_text"]

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
