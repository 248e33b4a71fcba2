"""Which account a row names (the doc's "Account ids"), and matching targets to accounts."""

from __future__ import annotations

import sqlite3
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
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

from .strategies import PROPERTY

A = "A" * 10 + "-source-1"  # 19 characters, letters, digits and '-'
B = "snap_0123456789abcdef"
C = "3f2a9c1e-7b4d-4e8a-9c2b-1d0e5f6a7b8c"  # a manual uuid
D = "4f2a9c1e-7b4d-4e8a-9c2b-1d0e5f6a7b8c"
E = "plaidAcctE1234567890"

ID_ALPHABET = string.ascii_letters + string.digits + "-_"


def reference_is_account_id(value: object) -> bool:
    """The doc: a string of 16 to 128 letters, digits, - or _, and not all digits."""
    return (
        isinstance(value, str)
        and 16 <= len(value) <= 128
        and all(c in ID_ALPHABET for c in value)
        and not all(c in string.digits for c in value)
    )


# --------------------------------------------------------------------------- the id rule


def test_id_length_boundaries() -> None:
    for case in [(0, False), (1, False), (15, False), (16, True), (128, True), (129, False)]:
        length, ok = case
        value = ("a1-_" * 40)[:length]
        assert is_account_id(value) is ok, case
        assert bool(account_id_candidates({"account_id": value})) is ok, case


def test_all_digits_is_not_an_id() -> None:
    for length in [16, 17, 64, 128]:
        assert not is_account_id("7" * length), length
        assert is_account_id("7" * (length - 1) + "x"), length
        assert is_account_id("-" + "7" * (length - 1)), length
        assert account_id_candidates({"account_id": "7" * length}) == (), length


def test_characters_outside_the_id_alphabet() -> None:
    for value in [
        "a" * 15 + " ",
        "a" * 16 + "\n",
        "\n" + "a" * 16,
        "a" * 8 + "." + "a" * 8,
        "a" * 8 + "/" + "a" * 8,
        "a" * 8 + "é" + "a" * 8,
        "a" * 8 + "\u0660" * 8,  # Arabic-Indic digits are digits, not ASCII ones
        "\uff21" * 16,  # fullwidth letters
        "Credit card ending 1234",
        "Sapphire Preferred",
        "a" * 8 + "\ud800" + "a" * 8,
    ]:
        assert not is_account_id(value), value


def test_non_strings_are_not_ids() -> None:
    for value in [None, 1234567890123456789, 1.5, b"a" * 20, ["a" * 20], True]:
        assert not is_account_id(value), value
        assert account_id_candidates({"account_id": value, "source_account_id": value}) == (), value


@PROPERTY
@given(
    st.one_of(
        st.text(alphabet=ID_ALPHABET, max_size=140),
        st.text(alphabet=string.digits, min_size=14, max_size=130),
        st.text(alphabet=ID_ALPHABET + " .é\n\u0660", min_size=14, max_size=130),
    )
)
def test_id_rule_matches_the_doc(value: str) -> None:
    assert is_account_id(value) is reference_is_account_id(value)


# --------------------------------------------------------------------------- candidates, in order


def test_candidates_follow_the_doc_order() -> None:
    row = {
        # dict order deliberately differs from the doc's order
        "account_id": E,
        "account_uuid": D,
        "manual_account_uuid": C,
        "snaptrade_account_id": B,
        "source_account_id": A,
        "source": "plaid",
        "name": "Checking",
    }
    assert account_id_candidates(row) == (A, B, C, D, E)


def test_candidates_skip_values_that_are_not_ids() -> None:
    row = {
        "source_account_id": "12345678901234567890",  # all digits
        "snaptrade_account_id": "short",
        "manual_account_uuid": None,
        "account_uuid": C,
        "account_id": 42,
    }
    assert account_id_candidates(row) == (C,)


def test_candidates_are_each_given_once() -> None:
    row = {"source": "manual", "source_account_id": C, "manual_account_uuid": C, "account_id": E}
    assert account_id_candidates(row) == (C, E)


def test_rows_without_ids() -> None:
    for row in [
        {},
        {"name": "Checking", "balance": 100},
        {"id": 1, "account_name": "Chase ...1234"},
    ]:
        assert account_id_candidates(row) == (), row
        assert account_ref_from_row(row) is None, row


def test_other_source_means_no_account() -> None:
    for source in ["coinbase", "crypto", "metamask", "Plaid", "", "PLAID"]:
        row = {
            "source": source,
            "source_account_id": A,
            "snaptrade_account_id": B,
            "account_uuid": C,
            "account_id": E,
        }
        assert account_id_candidates(row) == (), source
        assert account_ref_from_row(row) is None, source


# --------------------------------------------------------------------------- the ref a row names


def test_source_account_id_takes_its_provider_from_source() -> None:
    for provider in ["plaid", "manual", "snaptrade"]:
        ref = account_ref_from_row({"source": provider, "source_account_id": A, "account_id": E})
        assert ref == AccountRef(A, provider), provider  # type: ignore[arg-type]


def test_source_not_selected_means_provider_none() -> None:
    assert account_ref_from_row({"source_account_id": A}) == AccountRef(A, None)
    assert account_ref_from_row({"source_account_id": A, "source": None}) == AccountRef(A, None)


def test_provider_by_column() -> None:
    for row, expected in [
        ({"snaptrade_account_id": B, "account_id": E}, AccountRef(B, "snaptrade")),
        ({"manual_account_uuid": C, "account_id": E}, AccountRef(C, "manual")),
        ({"account_uuid": D, "account_id": E}, AccountRef(D, "manual")),
        ({"account_id": E}, AccountRef(E, None)),
        ({"source": "plaid", "account_id": E}, AccountRef(E, None)),
        ({"source_account_id": "1" * 20, "snaptrade_account_id": B}, AccountRef(B, "snaptrade")),
        ({"source_account_id": "short", "account_uuid": D}, AccountRef(D, "manual")),
    ]:
        assert account_ref_from_row(row) == expected, (row, expected)


def test_ref_is_the_first_candidate() -> None:
    row = {"source": "snaptrade", "source_account_id": A, "snaptrade_account_id": B}
    ref = account_ref_from_row(row)
    assert ref is not None
    assert ref.account_id == account_id_candidates(row)[0]


# --------------------------------------------------------------------------- sqlite3.Row


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute(
        "CREATE TABLE account_details (source TEXT, source_account_id TEXT,"
        " account_id TEXT, name TEXT, row_number INTEGER)"
    )
    conn.executemany(
        "INSERT INTO account_details VALUES (?, ?, ?, ?, ?)",
        [
            ("plaid", A, None, "Checking", 1),
            ("snaptrade", B, None, "Brokerage", 2),
            ("coinbase", "wallet-0123456789abcdef", None, "Wallet", 3),
            ("manual", C, E, "House", 4),
        ],
    )
    yield conn
    conn.close()


def test_sqlite_row(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT * FROM account_details ORDER BY row_number").fetchall()
    assert [account_id_candidates(r) for r in rows] == [(A,), (B,), (), (C, E)]
    assert [account_ref_from_row(r) for r in rows] == [
        AccountRef(A, "plaid"),
        AccountRef(B, "snaptrade"),
        None,
        AccountRef(C, "manual"),
    ]


def test_sqlite_row_with_only_some_columns(db: sqlite3.Connection) -> None:
    # The model writes the SQL: `source` is often not selected.
    row = db.execute("SELECT name, source_account_id FROM account_details LIMIT 1").fetchone()
    assert account_ref_from_row(row) == AccountRef(A, None)
    row = db.execute("SELECT name, row_number FROM account_details LIMIT 1").fetchone()
    assert account_id_candidates(row) == ()
    assert account_ref_from_row(row) is None


def test_find_account_in_sqlite_rows(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT * FROM account_details").fetchall()
    found = find_account(AccountRef(E), rows)
    assert found is not None
    assert found["name"] == "House"


# --------------------------------------------------------------------------- matching targets


ACCOUNTS: list[dict[str, Any]] = [
    {"name": "Checking", "source": "plaid", "source_account_id": A},
    {"name": "Brokerage", "snaptrade_account_id": B},
    {"name": "House", "manual_account_uuid": C, "account_id": E},
    {"name": "Wallet", "source": "coinbase", "source_account_id": D},
]


def test_find_account() -> None:
    cases: list[tuple[AccountRef | AccountTarget, str]] = [
        (AccountRef(A, "plaid"), "Checking"),
        (AccountRef(A), "Checking"),
        (AccountRef(B, "snaptrade"), "Brokerage"),
        (AccountRef(C, "manual"), "House"),
        (AccountRef(E), "House"),  # matched through any of the account's ids
        (AccountTarget(A, "plaid"), "Checking"),
    ]
    for case in cases:
        ref, name = case
        found = find_account(ref, ACCOUNTS)
        assert found is not None, case
        assert found["name"] == name, case


def test_find_account_none() -> None:
    for account_id in [D, "nope-nope-nope-nope", "Checking"]:
        assert find_account(AccountRef(account_id), ACCOUNTS) is None, account_id
        assert find_account(AccountRef(account_id), []) is None, account_id


def test_find_account_takes_an_iterator() -> None:
    found = find_account(AccountRef(B), iter(ACCOUNTS))
    assert found is not None
    assert found["name"] == "Brokerage"


def test_find_accounts_lines_up_with_the_refs() -> None:
    target = AccountsTarget((AccountRef(C), AccountRef("missing-0123456789"), AccountRef(A)))
    found = find_accounts(target, iter(ACCOUNTS))  # a one-shot iterable is enough
    assert [None if f is None else f["name"] for f in found] == ["House", None, "Checking"]


def test_find_accounts_for_a_single_account_target() -> None:
    found = find_accounts(AccountTarget(B, "snaptrade"), ACCOUNTS)
    assert len(found) == 1
    assert found[0] is not None
    assert found[0]["name"] == "Brokerage"


def test_find_returns_the_row_itself() -> None:
    found = find_account(AccountRef(A), ACCOUNTS)
    assert found is ACCOUNTS[0]


@PROPERTY
@given(st.lists(st.from_regex(r"[a-z]{4}[0-9a-f]{12}", fullmatch=True), unique=True, max_size=8))
def test_every_candidate_finds_its_row(ids: list[str]) -> None:
    accounts = [{"account_id": i, "name": str(n)} for n, i in enumerate(ids)]
    for n, account_id in enumerate(ids):
        found = find_account(AccountRef(account_id), accounts)
        assert found is not None
        assert found["name"] == str(n)
