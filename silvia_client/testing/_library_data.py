"""What the built-in scenarios are made of: the user's made-up accounts, the sources
the scripts cite, the tool results they share, the demo's script and a legacy turn.

Account ids are made up but shaped like the real ones (Plaid-style 37-character
ids, uuids). No vendor name appears in any label, title or text: only the rows'
`source` column names one, and that column is never rendered.
"""

from __future__ import annotations

from ._script import Cite, PriorTurn, Say, ScriptItem
from ._tools import (
    ExecutePython,
    ExecuteSql,
    ReadLibraryDocument,
    SearchWeb,
    WebResult,
    read_tax_authority,
)

# The user's accounts.
CHECKING = "vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D"
SAVINGS = "6PdjjRP6LmugpBy5NgQvUqpRXMWxzktg3rwrk"
CARD_ONE = "qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5"
CARD_TWO = "Lm9WJ8NbnGUxPoEr4QzYDaRkKvXq1Ts7HcfB2"
BROKERAGE = "5b3c9f0e-2a41-4d8e-b6f7-93c1e0a2d4f8"
IRA = "c2d7e4a1-9b3f-4e6a-8d5c-1f0b7a9e3c26"
HOUSE = "0f8e7d6c-5b4a-4392-8a1b-c0d9e8f7a6b5"
CAR = "7a6b5c4d-3e2f-4a1b-9c8d-e7f6a5b4c3d2"
MONEY_MARKET = "mm_2024_Q9xV7wT5sR3pN1kJ"

# Sources the scripts cite. They are what the rules derive; a script citing a
# source its tool calls did not write fails when the scenario is built.
CHECKING_SRC = "silvia://your-account/checking"
SAVINGS_SRC = "silvia://your-account/savings"
CARDS_SRC = "silvia://your-account/credit-card"
BROKERAGE_SRC = "silvia://your-account/brokerage"
AAPL_SRC = "silvia://market-data/finnhub/AAPL"
MSFT_SRC = "silvia://market-data/finnhub/MSFT"
LIVE_SRC = "silvia://market-data/finnhub"
ANALYSIS_SRC = "silvia://analysis"
IRA_LIMITS_URL = "https://www.irs.gov/retirement-plans/ira-contribution-limits"
SAVINGS_ARTICLE_URL = "https://www.bankrate.com/banking/savings/best-high-yield-savings-accounts/"


FINNHUB_QUOTE_CODE = (
    "import json, finnhub\n"
    "client = finnhub.Client(api_key=FINNHUB_KEY)\n"
    "print(json.dumps({'symbol': 'AAPL', **client.quote('AAPL')}))"
)


def checking_and_cards() -> ExecuteSql:
    return ExecuteSql(
        rows=(
            {
                "account_name": "Checking",
                "balance": "4210.55",
                "source": "plaid",
                "source_account_id": CHECKING,
            },
            {
                "account_name": "Credit card",
                "balance": "-1312.40",
                "source": "plaid",
                "source_account_id": CARD_ONE,
            },
            {
                "account_name": "Credit card",
                "balance": "-287.09",
                "source": "plaid",
                "source_account_id": CARD_TWO,
            },
        )
    )


def aapl_quote() -> ExecutePython:
    return ExecutePython(
        code=FINNHUB_QUOTE_CODE,
        output='{"symbol": "AAPL", "c": 227.48, "d": 1.92, "dp": 0.85, "pc": 225.56}',
    )


def savings_search() -> SearchWeb:
    return SearchWeb(
        query="best high-yield savings rates",
        results=(
            WebResult(
                title="Best high-yield savings accounts",
                text="Top high-yield savings accounts pay around 4.30% APY.",
                url=SAVINGS_ARTICLE_URL,
            ),
        ),
    )


def ira_limits() -> ReadLibraryDocument:
    return read_tax_authority(
        "irs/retirement-plans/ira-contribution-limits.md",
        "For 2024, the total contributions you make to all of your traditional and Roth IRAs "
        "cannot be more than $7,000 ($8,000 if you're age 50 or older).",
        source_url=IRA_LIMITS_URL,
        title="IRA contribution limits",
    )


DEMO_SCRIPT: tuple[ScriptItem, ...] = (
    checking_and_cards(),
    aapl_quote(),
    savings_search(),
    ira_limits(),
    Say("You have $4,210.55 in checking"),
    Cite(CHECKING_SRC),
    Say(" and owe $1,599.49 across your two credit cards"),
    Cite(CARDS_SRC, 0, 2),
    Say(". Apple last traded at $227.48"),
    Cite(AAPL_SRC),
    Say(". High-yield savings accounts pay around 4.30% APY"),
    Cite(SAVINGS_ARTICLE_URL),
    Say(", and for 2024 you can put up to $7,000 into your IRAs"),
    Cite(IRA_LIMITS_URL),
    Say("."),
)


LEGACY_HISTORY: tuple[PriorTurn, ...] = (
    PriorTurn(
        "How much is in checking?",
        (checking_and_cards(), Say("You have $4,210.55 in checking."), Cite(CHECKING_SRC)),
    ),
)
"""A turn saved before targets existed: its rows carry no `target` key."""
