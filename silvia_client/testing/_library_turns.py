"""The scenarios of the turn's rules: the registry, legacy prompts, checkpoints, legacy rows."""

from __future__ import annotations

from ._library_data import (
    AAPL_SRC,
    CARD_ONE,
    CARD_TWO,
    CARDS_SRC,
    CHECKING,
    CHECKING_SRC,
    DEMO_SCRIPT,
    IRA_LIMITS_URL,
    LEGACY_HISTORY,
    SAVINGS,
    SAVINGS_SRC,
    aapl_quote,
    checking_and_cards,
    ira_limits,
)
from ._scenario import Scenario
from ._script import Checkpoint, Cite, Say
from ._tools import (
    ExecuteSql,
    SearchWeb,
    WebResult,
)


def turn_rules() -> list[Scenario]:
    """The registry's rules, legacy prompts, checkpoints and legacy rows."""
    card_one = {
        "account_name": "Credit card",
        "balance": "-1312.40",
        "source": "plaid",
        "source_account_id": CARD_ONE,
    }
    card_two = {
        "account_name": "Credit card",
        "balance": "-287.09",
        "source": "plaid",
        "source_account_id": CARD_TWO,
    }
    card_without_id = {"account_name": "Credit card", "balance": "-287.09"}
    return [
        Scenario(
            "pooling",
            "Two `execute_sql` calls write one label with different cards: pooled into `accounts`.",
            script=(
                ExecuteSql(rows=(card_one,)),
                Say("Your first card owes $1,312.40"),
                Cite(CARDS_SRC),
                ExecuteSql(rows=(card_two,)),
                Say(" and the second $287.09."),
                Cite(CARDS_SRC),
            ),
        ),
        Scenario(
            "untyped-ids-then-none",
            "A label written with ids, then again without: typed at first, untyped from then on.",
            script=(
                ExecuteSql(rows=(card_one,)),
                Say("Your card owes $1,312.40"),
                Cite(CARDS_SRC),
                ExecuteSql(rows=(card_without_id,)),
                Say(", and $287.09 on the other."),
                Cite(CARDS_SRC),
            ),
        ),
        Scenario(
            "untyped-none-then-ids",
            "A label written without ids, then with: untyped for the whole turn.",
            script=(
                ExecuteSql(rows=(card_without_id,)),
                Say("One card owes $287.09"),
                Cite(CARDS_SRC),
                ExecuteSql(rows=(card_one,)),
                Say(" and the other $1,312.40."),
                Cite(CARDS_SRC),
            ),
        ),
        Scenario(
            "untyped-web-vs-tax",
            "One URL written as a web page and as a tax document: untyped from then on.",
            script=(
                SearchWeb(
                    query="IRA contribution limit 2024",
                    results=(
                        WebResult(
                            title="IRA contribution limits",
                            text="The 2024 limit is $7,000.",
                            url=IRA_LIMITS_URL,
                        ),
                    ),
                ),
                Say("The 2024 IRA limit is $7,000"),
                Cite(IRA_LIMITS_URL),
                ira_limits(),
                Say(", or $8,000 from age 50."),
                Cite(IRA_LIMITS_URL),
            ),
        ),
        Scenario(
            "legacy-prompt",
            "Legacy prompt: no id columns selected, so untyped, except where `account_id` was.",
            script=(
                ExecuteSql(
                    rows=(
                        {"account_name": "Checking", "balance": "4210.55"},
                        {"account_name": "Savings", "balance": "15000.00", "account_id": SAVINGS},
                    )
                ),
                Say("Checking holds $4,210.55"),
                Cite(CHECKING_SRC),
                Say(" and savings $15,000."),
                Cite(SAVINGS_SRC),
            ),
        ),
        Scenario(
            "checkpoint-legacy",
            "Resumed from a checkpoint written before targets: its sources stream untyped.",
            checkpoint=Checkpoint((checking_and_cards(),), carries_targets=False),
            script=(
                aapl_quote(),
                Say("Checking holds $4,210.55"),
                Cite(CHECKING_SRC),
                Say(" and Apple is at $227.48."),
                Cite(AAPL_SRC),
            ),
        ),
        Scenario(
            "checkpoint-fresh-write",
            "Resumed from a checkpoint written before targets, then the label written again: "
            "untyped, then typed.",
            checkpoint=Checkpoint((checking_and_cards(),), carries_targets=False),
            script=(
                Say("Checking held $4,210.55"),
                Cite(CHECKING_SRC),
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Checking",
                            "balance": "4310.55",
                            "source": "plaid",
                            "source_account_id": CHECKING,
                        },
                    )
                ),
                Say(" and holds $4,310.55 now."),
                Cite(CHECKING_SRC),
            ),
        ),
        Scenario(
            "checkpoint-current",
            "Resumed from a checkpoint that carries its registry: its sources keep their targets.",
            checkpoint=Checkpoint((checking_and_cards(),), carries_targets=True),
            script=(
                aapl_quote(),
                Say("Checking holds $4,210.55"),
                Cite(CHECKING_SRC),
                Say(" and Apple is at $227.48."),
                Cite(AAPL_SRC),
            ),
        ),
        Scenario(
            "legacy-session",
            "A session holding rows saved before targets existed (no `target`), then a typed turn.",
            history=LEGACY_HISTORY,
            script=DEMO_SCRIPT,
        ),
        Scenario(
            "no-citations",
            "A plain answer: no tool calls, no citations.",
            script=(Say("Hello! Ask me about your accounts, a stock, or a tax rule."),),
        ),
    ]
