"""The scenarios of the doc's source table: one per row (or pair of rows)."""

from __future__ import annotations

from ._derive import PORTFOLIO_SOURCE, SEARCH_WEB_SOURCE
from ._library_data import (
    AAPL_SRC,
    ANALYSIS_SRC,
    BROKERAGE,
    BROKERAGE_SRC,
    CAR,
    CARD_ONE,
    CARDS_SRC,
    CHECKING,
    CHECKING_SRC,
    HOUSE,
    LIVE_SRC,
    MONEY_MARKET,
    MSFT_SRC,
    SAVINGS,
    SAVINGS_SRC,
    checking_and_cards,
)
from ._scenario import Scenario
from ._script import Cite, Say
from ._tools import (
    ExaArticle,
    ExecutePython,
    ExecuteSql,
    SearchWeb,
    WebResult,
    read_credit_card_document,
    read_mortgage_authority,
    read_tax_authority,
)


def target_table() -> list[Scenario]:
    """One scenario per row (or pair of rows) of the doc's source table."""
    return [
        Scenario(
            "account",
            "Every row behind a label names the same account: an `account` target.",
            script=(
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Brokerage",
                            "symbol": "VTI",
                            "value": "18250.00",
                            "source": "snaptrade",
                            "source_account_id": BROKERAGE,
                        },
                        {
                            "account_name": "Brokerage",
                            "symbol": "BND",
                            "value": "6120.00",
                            "source": "snaptrade",
                            "source_account_id": BROKERAGE,
                        },
                    )
                ),
                Say("Your brokerage account holds $24,370 in two funds."),
                Cite(BROKERAGE_SRC, 0, 2),
            ),
        ),
        Scenario(
            "accounts",
            "One label covering two credit cards: an `accounts` target listing both.",
            script=(
                checking_and_cards(),
                Say("Across your two credit cards you owe $1,599.49."),
                Cite(CARDS_SRC, 0, 2),
            ),
        ),
        Scenario(
            "account-row-without-id",
            "A label where one row lacks an account id: the source stays untyped.",
            script=(
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Credit card",
                            "balance": "-1312.40",
                            "source_account_id": CARD_ONE,
                        },
                        {
                            "account_name": "Credit card",
                            "balance": "-287.09",
                            "source_account_id": None,
                        },
                    )
                ),
                Say("Your credit cards carry $1,599.49."),
                Cite(CARDS_SRC, 0, 2),
            ),
        ),
        Scenario(
            "account-id-columns",
            "Each id column in the doc's order with its provider; the first holding an id wins.",
            script=(
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Checking",
                            "balance": "4210.55",
                            "source": "plaid",
                            "source_account_id": CHECKING,
                        },
                    )
                ),
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Savings",
                            "balance": "15000.00",
                            "source_account_id": SAVINGS,
                        },
                    )
                ),
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Brokerage",
                            "value": "24370.00",
                            "snaptrade_account_id": BROKERAGE,
                            "account_id": MONEY_MARKET,
                        },
                    )
                ),
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "House",
                            "value": "512000.00",
                            "manual_account_uuid": HOUSE,
                            "account_uuid": CAR,
                        },
                    )
                ),
                ExecuteSql(
                    rows=({"account_name": "Car", "value": "21400.00", "account_uuid": CAR},)
                ),
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Money market",
                            "balance": "8300.00",
                            "source_account_id": "1042",
                            "account_id": MONEY_MARKET,
                        },
                    )
                ),
                Say("Checking holds $4,210.55"),
                Cite(CHECKING_SRC),
                Say(", savings $15,000"),
                Cite(SAVINGS_SRC),
                Say(", the brokerage account $24,370"),
                Cite(BROKERAGE_SRC),
                Say(", the house is valued at $512,000"),
                Cite("silvia://your-account/house"),
                Say(", the car at $21,400"),
                Cite("silvia://your-account/car"),
                Say(" and the money market fund holds $8,300."),
                Cite("silvia://your-account/money-market"),
            ),
        ),
        Scenario(
            "account-id-rule",
            "Only 16 to 128 letters, digits, '-' or '_', not all digits, count as an account id.",
            script=(
                ExecuteSql(
                    rows=(
                        {"account_name": "Row number", "balance": "10.00", "account_id": 42},
                        {
                            "account_name": "Short value",
                            "balance": "20.00",
                            "account_id": "acct-1234",
                        },
                        {
                            "account_name": "All digits",
                            "balance": "30.00",
                            "account_id": "12345678901234567890",
                        },
                        {"account_name": "Too long", "balance": "40.00", "account_id": "a" * 129},
                        {
                            "account_name": "Spaced value",
                            "balance": "50.00",
                            "account_id": "acct 1234 5678 9012",
                        },
                        {
                            "account_name": "Shortest id",
                            "balance": "60.00",
                            "account_id": "a1b2c3d4e5f6g7h8",
                        },
                        {
                            "account_name": "Longest id",
                            "balance": "70.00",
                            "account_id": "b" * 127 + "9",
                        },
                    )
                ),
                Say("Balances: $10"),
                Cite("silvia://your-account/row-number"),
                Say(", $20"),
                Cite("silvia://your-account/short-value"),
                Say(", $30"),
                Cite("silvia://your-account/all-digits"),
                Say(", $40"),
                Cite("silvia://your-account/too-long"),
                Say(", $50"),
                Cite("silvia://your-account/spaced-value"),
                Say(", $60"),
                Cite("silvia://your-account/shortest-id"),
                Say(" and $70."),
                Cite("silvia://your-account/longest-id"),
            ),
        ),
        Scenario(
            "account-crypto-source",
            "A row whose `source` is a crypto wallet names no account: untyped.",
            script=(
                ExecuteSql(
                    rows=(
                        {
                            "account_name": "Checking",
                            "balance": "4210.55",
                            "source": "plaid",
                            "source_account_id": CHECKING,
                        },
                        {
                            "account_name": "Crypto wallet",
                            "balance": "2750.00",
                            "source": "crypto",
                            "source_account_id": "0x9f2c4e6a8b1d3f5a7c9e",
                        },
                    )
                ),
                Say("Checking holds $4,210.55"),
                Cite(CHECKING_SRC),
                Say(" and your crypto wallet $2,750."),
                Cite("silvia://your-account/crypto-wallet"),
            ),
        ),
        Scenario(
            "portfolio",
            "A portfolio-wide SQL result: `silvia://your-portfolio` gets a `portfolio` target.",
            script=(
                ExecuteSql(
                    rows=({"total_value": "612450.00", "day_change": "1840.12"},),
                    label_column=None,
                ),
                Say("Your portfolio is worth $612,450, up $1,840 today."),
                Cite(PORTFOLIO_SOURCE),
            ),
        ),
        Scenario(
            "market-data",
            "Finnhub payloads printed with their tickers: `market_data` targets.",
            script=(
                ExecutePython(
                    code="import json, finnhub\nc = finnhub.Client(api_key=KEY)\n"
                    "print(json.dumps([{'symbol': s, **c.quote(s)} for s in ('AAPL', 'MSFT')]))",
                    output='[{"symbol": "AAPL", "c": 227.48, "dp": 0.85}, '
                    '{"symbol": "MSFT", "c": 415.1, "dp": -0.32}]',
                ),
                Say("Apple is at $227.48"),
                Cite(AAPL_SRC),
                Say(" and Microsoft at $415.10."),
                Cite(MSFT_SRC),
            ),
        ),
        Scenario(
            "live-data",
            "A Finnhub payload without its ticker: `silvia://market-data/finnhub`, `analysis`.",
            script=(
                ExecutePython(
                    code="import finnhub\nc = finnhub.Client(api_key=KEY)\nprint(c.quote('AAPL'))",
                    output="{'c': 227.48, 'd': 1.92, 'dp': 0.85, 'pc': 225.56}",
                ),
                Say("The stock last traded at $227.48."),
                Cite(LIVE_SRC),
            ),
        ),
        Scenario(
            "analysis",
            "Python output with no Finnhub (a computation): `silvia://analysis`, `analysis`.",
            script=(
                ExecutePython(
                    code="balance = 18000\nrate = 0.2299 / 12\nprint(round(balance * rate, 2))",
                    output="Monthly interest at 22.99% APR on $18,000: $344.85",
                    title="Interest calculation",
                ),
                Say("At 22.99% APR you would pay about $344.85 in interest a month."),
                Cite(ANALYSIS_SRC),
            ),
        ),
        Scenario(
            "exa-article",
            "An article fetched in `execute_python` is cited by its own URL: a `web` target.",
            script=(
                ExecutePython(
                    code="results = exa.search_and_contents('Roth conversion ladder')",
                    output="",
                    articles=(
                        ExaArticle(
                            url="https://www.nerdwallet.com/article/investing/roth-ira-conversion-ladder",
                            title="How a Roth conversion ladder works",
                            text="A Roth conversion ladder moves money from a traditional IRA "
                            "to a Roth IRA over several years.",
                        ),
                    ),
                ),
                Say("A Roth conversion ladder spreads conversions over several years."),
                Cite("https://www.nerdwallet.com/article/investing/roth-ira-conversion-ladder"),
            ),
        ),
        Scenario(
            "tax-reference",
            "`read_tax_authority`: a government URL, and a library path with url null.",
            script=(
                read_tax_authority(
                    "usc/title-26/section-408.xml",
                    "Sec. 408. Individual retirement accounts.",
                    source_url="https://uscode.house.gov/download/releasepoints/us/pl/118/78/xml_usc26@118-78.zip",
                    title="26 U.S. Code § 408",
                ),
                read_tax_authority(
                    "state/ca/ftb-1001.md",
                    "California generally conforms to federal IRA contribution limits.",
                    title="FTB Publication 1001",
                ),
                Say("Federal law sets the IRA rules"),
                Cite("https://uscode.house.gov/view.xhtml?path=/prelim@title26&edition=prelim"),
                Say(" and California follows them."),
                Cite("silvia://tax-authority/state/ca/ftb-1001.md"),
            ),
        ),
        Scenario(
            "card-document",
            "`read_credit_card_document`: the issuer's page URL, and a library path with url null.",
            script=(
                read_credit_card_document(
                    "chase/sapphire-preferred/benefits.md",
                    "Earn 5x points on travel purchased through the issuer's travel portal.",
                    source_url="https://creditcards.chase.com/rewards-credit-cards/sapphire/preferred",
                    title="Sapphire Preferred benefits",
                ),
                read_credit_card_document(
                    "amex/gold/terms-2023.md",
                    "Annual fee: $250.",
                    title="Gold Card terms (2023)",
                ),
                Say("The card earns 5x on travel booked through the portal"),
                Cite("https://creditcards.chase.com/rewards-credit-cards/sapphire/preferred"),
                Say("; the other card's annual fee is $250."),
                Cite("silvia://credit-card-corpus/amex/gold/terms-2023.md"),
            ),
        ),
        Scenario(
            "mortgage-reference",
            "`read_mortgage_authority`: a regulator's URL, and a library path with url null.",
            script=(
                read_mortgage_authority(
                    "ecfr/title-12/part-1026.xml",
                    "§ 1026.43 Minimum standards for transactions secured by a dwelling.",
                    source_url="https://www.ecfr.gov/api/versioner/v1/full/2024-06-01/title-12.xml?part=1026",
                    title="Regulation Z (Truth in Lending)",
                ),
                read_mortgage_authority(
                    "fannie-mae/selling-guide/b3-6-02.md",
                    "The maximum debt-to-income ratio for non-automated underwriting is 36%.",
                    title="Selling Guide B3-6-02",
                ),
                Say("Lenders must check your ability to repay"),
                Cite("https://www.ecfr.gov/current/title-12/part-1026"),
                Say(", and the agency caps debt-to-income at 36% for non-automated underwriting."),
                Cite("silvia://mortgage-code/fannie-mae/selling-guide/b3-6-02.md"),
            ),
        ),
        Scenario(
            "search-web",
            "`search_web`: a result's URL gets `web`; `silvia://search/search_web` gets no target.",
            script=(
                SearchWeb(
                    query="current 30-year mortgage rate",
                    results=(
                        WebResult(
                            title="Today's mortgage rates",
                            text="The average 30-year fixed rate is 6.12%.",
                            url="https://www.freddiemac.com/pmms",
                        ),
                        WebResult(
                            title="Search summary",
                            text="Rates eased slightly this week.",
                        ),
                    ),
                ),
                Say("The average 30-year fixed rate is 6.12%"),
                Cite("https://www.freddiemac.com/pmms"),
                Say(", and rates eased slightly this week."),
                Cite(SEARCH_WEB_SOURCE),
            ),
        ),
    ]
