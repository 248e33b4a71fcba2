"""Which account a row names (the doc's "Account ids"), and matching targets to accounts."""

from __future__ import annotations

import sqlite3
import string
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    account_id_candidates,
    account_ref_from_row,
    find_account,
    find_accounts,
    is_account_id,
)

from .strategies import PROPERTY, PROVIDER_NAMES

A = "A" * 10 + "-source-1"  # 19 characters, letters, digits and '-'
B = "snap_0123456789abcdef"
C = "3f2a9c1e-7b4d-4e8a-9c2b-1d0e5f6a7b8c"  # a manual uuid
D = "4f2a9c1e-7b4d-4e8a-9c2b-1d0e5f6a7b8c"
E = "plaidAcctE1234567890"

ID_ALPHABET = string.ascii_letters + string.digits + "-_"
NOT_IDS: list[object] = [
    *("a" * 15 + " ", "a" * 16 + "\n", "\n" + "a" * 16, "a" * 8 + "." + "a" * 8),
    *("a" * 8 + "/" + "a" * 8, "a" * 8 + "é" + "a" * 8, "Credit card ending 1234"),
    "a" * 8 + "\u0660" * 8,  # Arabic-Indic digits are digits, not ASCII ones
    "\uff21" * 16,  # fullwidth letters
    *("a" * 8 + "\ud800" + "a" * 8, "7" * 16, "7" * 128, "a1-_" * 4 + "a" * 113),
    *(None, 1234567890123456789, 1.5, b"a" * 20, ["a" * 20], True),
]


def reference_is_account_id(value: object) -> bool:
    """The doc: a string of 16 to 128 letters, digits, - or _, and not all digits."""
    return (
        isinstance(value, str)
        and 16 <= len(value) <= 128
        and all(c in ID_ALPHABET for c in value)
        and not all(c in string.digits for c in value)
    )


@PROPERTY
@given(
    st.one_of(
        st.text(alphabet=ID_ALPHABET, max_size=140),
        st.text(alphabet=string.digits, min_size=14, max_size=130),
        st.text(alphabet=ID_ALPHABET + " .é\n\u0660", min_size=14, max_size=130),
        st.sampled_from(NOT_IDS),
    )
)
@example("a1-_" * 4)  # 16: the shortest id
@example("a1-_" * 32)  # 128: the longest
@example("a1-_" * 4 + "a" * 113)  # 129
@example("a1-_" * 3 + "abc")  # 15
@example("7" * 63 + "x")
@example("-" + "7" * 15)
def test_id_rule_matches_the_doc(value: Any) -> None:
    assert is_account_id(value) is reference_is_account_id(value)
    candidates = account_id_candidates({"account_id": value, "source_account_id": value})
    assert candidates == ((value,) if reference_is_account_id(value) else ())


EVERY_ID = {"source_account_id": A, "snaptrade_account_id": B, "manual_account_uuid": C}
EVERY_ID |= {"account_uuid": D, "account_id": E}
NOT_ACCOUNTS = ("coinbase", "crypto", "metamask", "Plaid", "", "PLAID")
# (row, its candidates, its ref): the doc's order whatever the dict's, each id once, the
# provider its column implies (`source_account_id`: the row's `source`), non-ids skipped.
ROWS: list[tuple[dict[str, Any], tuple[str, ...], AccountRef | None]] = [
    (
        {"source": "plaid", **dict(reversed(EVERY_ID.items()))},
        (A, B, C, D, E),
        AccountRef(A, "plaid"),
    ),
    *(({**EVERY_ID, "source": source}, (), None) for source in NOT_ACCOUNTS),
    *((row, (), None) for row in ({}, {"name": "Checking"}, {"id": 1, "account_name": "Chase"})),
    (
        {"source": "manual", "source_account_id": C, "manual_account_uuid": C, "account_id": E},
        (C, E),
        AccountRef(C, "manual"),
    ),
    (
        {"source_account_id": "1" * 20, "snaptrade_account_id": "short"}  # all digits; short
        | {"manual_account_uuid": None, "account_uuid": C, "account_id": 42},
        (C,),
        AccountRef(C, "manual"),
    ),
    *(
        ({"source": p, "source_account_id": A, "account_id": E}, (A, E), AccountRef(A, p))  # type: ignore[arg-type]
        for p in PROVIDER_NAMES
    ),
    ({"source_account_id": A}, (A,), AccountRef(A, None)),  # `source` not selected
    ({"source_account_id": A, "source": None}, (A,), AccountRef(A, None)),
    ({"snaptrade_account_id": B, "account_id": E}, (B, E), AccountRef(B, "snaptrade")),
    ({"manual_account_uuid": C, "account_id": E}, (C, E), AccountRef(C, "manual")),
    ({"account_uuid": D, "account_id": E}, (D, E), AccountRef(D, "manual")),
    ({"source": "plaid", "account_id": E}, (E,), AccountRef(E, None)),
    ({"source_account_id": "short", "account_uuid": D}, (D,), AccountRef(D, "manual")),
    ({"source": "snaptrade", **EVERY_ID}, (A, B, C, D, E), AccountRef(A, "snaptrade")),
]


def test_each_rows_candidates_and_ref() -> None:
    for row, candidates, ref in ROWS:
        assert account_id_candidates(row) == candidates, row
        assert account_ref_from_row(row) == ref, row


def test_sqlite_rows() -> None:
    # No `get`, and a column not selected raises IndexError: the model writes the SQL,
    # and often leaves `source` out.
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE a (source TEXT, source_account_id TEXT, account_id TEXT, name TEXT)")
    wallet = ("coinbase", "wallet-0123456789abcdef", None, "Wallet")
    values = [("plaid", A, None, "Checking"), wallet, ("manual", C, E, "House")]
    conn.executemany("INSERT INTO a VALUES (?, ?, ?, ?)", values)
    rows = conn.execute("SELECT * FROM a ORDER BY rowid").fetchall()
    assert [account_id_candidates(r) for r in rows] == [(A,), (), (C, E)]
    refs = [AccountRef(A, "plaid"), None, AccountRef(C, "manual")]
    assert [account_ref_from_row(r) for r in rows] == refs
    found = find_account(AccountRef(E), rows)
    assert found is not None
    assert found["name"] == "House"
    for columns, ref in [("name, source_account_id", AccountRef(A, None)), ("name", None)]:
        row = conn.execute(f"SELECT {columns} FROM a LIMIT 1").fetchone()
        assert account_ref_from_row(row) == ref, columns
    conn.close()


ACCOUNTS: list[dict[str, Any]] = [
    {"name": "Checking", "source": "plaid", "source_account_id": A},
    {"name": "Brokerage", "snaptrade_account_id": B},
    {"name": "House", "manual_account_uuid": C, "account_id": E},
    {"name": "Wallet", "source": "coinbase", "source_account_id": D},
]


def test_find_account_and_accounts() -> None:
    cases: list[tuple[AccountRef | AccountTarget, str]] = [
        (AccountRef(A, "plaid"), "Checking"),
        (AccountRef(A), "Checking"),
        (AccountRef(B, "snaptrade"), "Brokerage"),
        (AccountRef(C, "manual"), "House"),
        (AccountRef(E), "House"),  # matched through any of the account's ids
        (AccountTarget(A, "plaid"), "Checking"),
    ]
    for ref, name in cases:
        found = find_account(ref, iter(ACCOUNTS))  # a one-shot iterable is enough
        assert found is not None, ref
        assert found["name"] == name, ref
    assert find_account(AccountRef(A), ACCOUNTS) is ACCOUNTS[0]  # the row itself
    for account_id in [D, "nope-nope-nope-nope", "Checking"]:
        assert find_account(AccountRef(account_id), ACCOUNTS) is None, account_id
        assert find_account(AccountRef(account_id), []) is None, account_id
    target = AccountsTarget((AccountRef(C), AccountRef("missing-0123456789"), AccountRef(A)))
    found_all = find_accounts(target, iter(ACCOUNTS))
    assert [None if f is None else f["name"] for f in found_all] == ["House", None, "Checking"]
    assert find_accounts(AccountTarget(B, "snaptrade"), ACCOUNTS) == [ACCOUNTS[1]]
