"""Matching a citation's account refs to the user's own accounts.

An `account` target names one account and an `accounts` target several (the
citation covers all of them). Each ref carries the account's id as the server
read it from the SQL row: a Plaid account id, a manual account's uuid, a
SnapTrade id. `account_id_candidates(row)` lists every id one of your account
records can be matched by, by the server's own rule; `find_account(ref,
accounts)` returns the record a ref points at, and `find_accounts(target,
accounts)` one per ref (None where none matches).
"""

from __future__ import annotations

import os

from silvia_client import SilviaClient
from silvia_client.citations import (
    AccountsTarget,
    AccountTarget,
    account_id_candidates,
    find_account,
    find_accounts,
)
from silvia_client.testing import ReferenceServer

# The user's accounts as your app stores them. These are the reference server's
# made-up accounts; against a real server, load the signed-in user's instead.
MY_ACCOUNTS: list[dict[str, object]] = [
    {
        "name": "Everyday Checking",
        "source": "plaid",
        "source_account_id": "vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D",
    },
    {
        "name": "Sapphire Preferred",
        "source": "plaid",
        "source_account_id": "qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5",
    },
    {
        "name": "Freedom Unlimited",
        "source": "plaid",
        "source_account_id": "Lm9WJ8NbnGUxPoEr4QzYDaRkKvXq1Ts7HcfB2",
    },
    {"name": "Rollover IRA", "snaptrade_account_id": "c2d7e4a1-9b3f-4e6a-8d5c-1f0b7a9e3c26"},
    {"name": "House", "manual_account_uuid": "0f8e7d6c-5b4a-4392-8a1b-c0d9e8f7a6b5"},
]


def main() -> None:
    print("Ids each of my accounts can be matched by:")
    for account in MY_ACCOUNTS:
        print(f"  {account['name']}: {', '.join(account_id_candidates(account))}")

    # The server at SILVIA_BASE_URL (token: SILVIA_TOKEN), else the embedded reference server.
    real_server = bool(os.environ.get("SILVIA_BASE_URL"))
    silvia = SilviaClient() if real_server else ReferenceServer().client()
    with silvia, silvia.chat.stream("Where do my checking and cards stand?") as stream:
        turn = stream.until_done()

    print("\nAccounts the answer cites:")
    for citation in turn.citations:
        target = citation.target
        if isinstance(target, AccountTarget):
            match = find_account(target, MY_ACCOUNTS)
            print(f"  {citation.title}: {match['name'] if match else 'not one of mine'}")
        elif isinstance(target, AccountsTarget):
            matches = find_accounts(target, MY_ACCOUNTS)
            names = [str(m["name"]) if m else "not one of mine" for m in matches]
            print(f"  {citation.title}: all of {', '.join(names)}")
    if real_server:
        print("(a real server's accounts are not these samples: replace MY_ACCOUNTS)")


if __name__ == "__main__":
    main()
