"""`SilviaError` and `ConfigurationError`: the root of the tree, below every other module.

The ground floor (`citations`) raises these two, and `errors.py`, which draws the
whole tree and is where users import every error from, sits above the turn
(`StreamError.turn` is a `Turn`). So the root lives here, importing nothing, and
`errors.py` re-exports it: the core's imports form no cycle.
"""

from __future__ import annotations

__all__ = ["ConfigurationError", "SilviaError"]


class SilviaError(Exception):
    """The root of every error the SDK raises."""


class ConfigurationError(SilviaError, ValueError):
    """The client was configured in a way that cannot work."""
