"""Which account a row names, and which of the user's accounts a target points at: the doc's
rule ("Account ids"), the id columns in `ACCOUNT_ID_COLUMNS`' order, `source_account_id`
taking its provider from the row's `source`. The reference server derives targets so too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from ._targets import PROVIDERS, AccountProvider, AccountRef, AccountsTarget, AccountTarget

_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,128}")

# (column, provider it implies), in the doc's order.
ACCOUNT_ID_COLUMNS: tuple[tuple[str, AccountProvider | None], ...] = (
    ("source_account_id", None),
    ("snaptrade_account_id", "snaptrade"),
    ("manual_account_uuid", "manual"),
    ("account_uuid", "manual"),
    ("account_id", None),
)

Row = TypeVar("Row", bound=Mapping[str, object])


def is_account_id(value: object) -> bool:
    """True when `value` counts as an account id under the doc's rule."""
    return type(value) is str and _ID_PATTERN.fullmatch(value) is not None and not value.isdigit()


def _column(row: Mapping[str, object], name: str) -> object:
    # DB-API rows offer only `row[name]`.
    try:
        return row[name]
    except (KeyError, IndexError):
        return None


def _refs(row: Mapping[str, object]) -> list[AccountRef]:
    source = _column(row, "source")
    if source is not None and not (type(source) is str and source in PROVIDERS):
        return []  # a crypto wallet or another non-account source names no account
    refs: list[AccountRef] = []
    for column, provider in ACCOUNT_ID_COLUMNS:
        value = _column(row, column)
        if is_account_id(value):
            if column == "source_account_id":
                provider = source  # type: ignore[assignment]
            refs.append(AccountRef(value, provider))  # type: ignore[arg-type]
    return refs


def account_ref_from_row(row: Mapping[str, object]) -> AccountRef | None:
    """The account a row names (the first id column that holds an id), or None."""
    refs = _refs(row)
    return refs[0] if refs else None


def account_id_candidates(row: Mapping[str, object]) -> tuple[str, ...]:
    """Every id a row can be matched by, in the doc's order, each once."""
    return tuple(dict.fromkeys(ref.account_id for ref in _refs(row)))


def find_account(ref: AccountRef | AccountTarget, accounts: Iterable[Row]) -> Row | None:
    """The first of the user's accounts whose ids include the ref's id, or None."""
    for account in accounts:
        if ref.account_id in account_id_candidates(account):
            return account
    return None


def find_accounts(
    target: AccountTarget | AccountsTarget, accounts: Iterable[Row]
) -> list[Row | None]:
    """For each of the target's refs, in order, the user's matching account or None."""
    pool: Sequence[Row] = list(accounts)
    refs = (target.ref,) if isinstance(target, AccountTarget) else target.accounts
    return [find_account(ref, pool) for ref in refs]
