"""Argument types (argparse `type=`): a bad value is a usage line and status 2, not a traceback.

NaN and the infinities are refused wherever seconds are expected. `UsageError`
is for what argparse cannot see (the environment, a combination of options):
`main` prints it as `silvia COMMAND: message`, status 2.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


class UsageError(Exception):
    """A usage error found after parsing: one line on stderr, exit status 2."""


def whole(low: int, high: int, refusal: str = "") -> Callable[[str], int]:
    """A whole number from `low` to `high`; else `refusal` (default: "use LOW to HIGH")."""

    def parse(value: str) -> int:
        try:
            number = int(value, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(refusal or f"use {low} to {high}")
        return number

    return parse


def seconds(*, positive: bool = False, at_most: float | None = None) -> Callable[[str], float]:
    """Seconds: at least 0 (more than 0 when `positive`), and at most `at_most` when given."""

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if not math.isfinite(number):
            raise argparse.ArgumentTypeError(f"not a finite number: {value!r}")
        if not (number > 0 if positive else number >= 0) or (
            at_most is not None and number > at_most
        ):
            low = "more than 0" if positive else "0 or more"
            high = f" and at most {at_most:g}" if at_most is not None else ""
            raise argparse.ArgumentTypeError(f"use {low}{high} seconds")
        return number

    return parse
