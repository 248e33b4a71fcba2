"""The built-in scenarios: every row of the doc's source table, every rule, every fault.

Each scenario is only tool results, text and citations; sources and targets
come from the server's rules (`_derive`), never written here. Account ids are
made up but shaped like the real ones (Plaid-style 37-character ids, uuids).

No vendor name appears in any label, title or text: only the rows' `source`
column names one, and that column is never rendered.
"""

from __future__ import annotations

from types import MappingProxyType

from ._derive import PORTFOLIO_SOURCE, SEARCH_WEB_SOURCE
from ._faults import (
    DropMidEvent,
    EchoToken,
    EndWithoutDone,
    HttpError,
    KeepAliveForever,
    SendEndlessLine,
    SendError,
    SendGzipBomb,
    SendMalformed,
    SendOversizedEvent,
    SendUnknown,
    Stall,
    Trickle,
)
from ._scenario import Scenario
from ._script import Checkpoint, Cite, PriorTurn, Say, ScriptItem
from ._tools import (
    ExaArticle,
    ExecutePython,
    ExecuteSql,
    ReadLibraryDocument,
    SearchWeb,
    WebResult,
    read_credit_card_document,
    read_mortgage_authority,
    read_tax_authority,
)

__all__ = ["DEFAULT_SCENARIO", "LEGACY_HISTORY", "SCENARIOS", "scenarios"]

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

DEFAULT_SCENARIO = "demo"

_FINNHUB_QUOTE_CODE = (
    "import json, finnhub\n"
    "client = finnhub.Client(api_key=FINNHUB_KEY)\n"
    "print(json.dumps({'symbol': 'AAPL', **client.quote('AAPL')}))"
)


def _checking_and_cards() -> ExecuteSql:
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


def _aapl_quote() -> ExecutePython:
    return ExecutePython(
        code=_FINNHUB_QUOTE_CODE,
        output='{"symbol": "AAPL", "c": 227.48, "d": 1.92, "dp": 0.85, "pc": 225.56}',
    )


def _savings_search() -> SearchWeb:
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


def _ira_limits() -> ReadLibraryDocument:
    return read_tax_authority(
        "irs/retirement-plans/ira-contribution-limits.md",
        "For 2024, the total contributions you make to all of your traditional and Roth IRAs "
        "cannot be more than $7,000 ($8,000 if you're age 50 or older).",
        source_url=IRA_LIMITS_URL,
        title="IRA contribution limits",
    )


_DEMO_SCRIPT: tuple[ScriptItem, ...] = (
    _checking_and_cards(),
    _aapl_quote(),
    _savings_search(),
    _ira_limits(),
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
        (_checking_and_cards(), Say("You have $4,210.55 in checking."), Cite(CHECKING_SRC)),
    ),
)
"""A turn saved before targets existed: its rows carry no `target` key."""


def _target_table() -> list[Scenario]:
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
                _checking_and_cards(),
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


def _turn_rules() -> list[Scenario]:
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
                _ira_limits(),
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
            checkpoint=Checkpoint((_checking_and_cards(),), carries_targets=False),
            script=(
                _aapl_quote(),
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
            checkpoint=Checkpoint((_checking_and_cards(),), carries_targets=False),
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
            checkpoint=Checkpoint((_checking_and_cards(),), carries_targets=True),
            script=(
                _aapl_quote(),
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
            script=_DEMO_SCRIPT,
        ),
        Scenario(
            "no-citations",
            "A plain answer: no tool calls, no citations.",
            script=(Say("Hello! Ask me about your accounts, a stock, or a tax rule."),),
        ),
    ]


def _faults() -> list[Scenario]:
    return [
        Scenario(
            "fault-drop",
            "The connection drops in the middle of an event, after a citation has streamed.",
            script=_DEMO_SCRIPT,
            fault=DropMidEvent(after_events=12),
        ),
        Scenario(
            "fault-stall",
            "The stream stalls for 300 s mid-turn, longer than any client idle timeout.",
            script=_DEMO_SCRIPT,
            fault=Stall(seconds=300.0, after_events=12),
        ),
        Scenario(
            "fault-malformed-json",
            "A `citation` event whose data is not valid JSON, mid-turn.",
            script=_DEMO_SCRIPT,
            fault=SendMalformed(after_events=12),
        ),
        Scenario(
            "fault-malformed-shape",
            "A `text` event whose data is valid JSON of the wrong shape, mid-turn.",
            script=_DEMO_SCRIPT,
            fault=SendMalformed(event="text", data='{"text": 42}', after_events=12),
        ),
        Scenario(
            "fault-unknown-event",
            "An event name the contract does not define, mid-turn; the turn still completes.",
            script=_DEMO_SCRIPT,
            fault=SendUnknown(after_events=12),
        ),
        Scenario(
            "fault-error-event",
            "An in-band `error` event after some text; the stream ends there, without `done`.",
            script=_DEMO_SCRIPT,
            fault=SendError(after_events=12),
        ),
        Scenario(
            "fault-no-done",
            "The whole turn, then the stream ends cleanly without `done`.",
            script=_DEMO_SCRIPT,
            fault=EndWithoutDone(),
        ),
        *_hostile(),
        Scenario(
            "status-401",
            "401 with a JSON error body: the token is not accepted.",
            fault=HttpError(401, "authentication_error", "Invalid bearer token."),
        ),
        Scenario(
            "status-403",
            "403 with a JSON error body: the token may not do this.",
            fault=HttpError(403, "permission_error", "This token may not use chat."),
        ),
        Scenario(
            "status-404",
            "404 with a JSON error body: no such session.",
            fault=HttpError(404, "not_found_error", "Session not found."),
        ),
        Scenario(
            "status-429",
            "429 with `Retry-After: 2` and a JSON error body.",
            fault=HttpError(
                429, "rate_limit_error", "Too many requests.", headers=(("retry-after", "2"),)
            ),
        ),
        Scenario(
            "status-500",
            "500 with a JSON error body.",
            fault=HttpError(500, "api_error", "Internal server error."),
        ),
    ]


def _hostile() -> list[Scenario]:
    """A hostile server: each is what a client's limits, deadline or scrubber is for."""
    return [
        Scenario(
            "fault-endless-line",
            "After a citation, a `data:` line that never ends: only `max_event_bytes` stops it.",
            script=_DEMO_SCRIPT,
            fault=SendEndlessLine(after_events=12),
        ),
        Scenario(
            "fault-oversized-event",
            "After a citation, a well-formed 64 MiB `text` event, then the end without `done`.",
            script=_DEMO_SCRIPT,
            fault=SendOversizedEvent(after_events=12),
        ),
        Scenario(
            "fault-gzip-bomb",
            "A gzip body that inflates to 1 GiB after a citation; by header, the session body too.",
            script=_DEMO_SCRIPT,
            fault=SendGzipBomb(after_events=12),
        ),
        Scenario(
            "fault-trickle",
            "After a citation, a byte every 2 s forever: no idle timeout fires, a deadline must.",
            script=_DEMO_SCRIPT,
            fault=Trickle(after_events=12),
        ),
        Scenario(
            "fault-keep-alive-forever",
            "After a citation, a keep-alive every second forever: only a deadline ends the turn.",
            script=_DEMO_SCRIPT,
            fault=KeepAliveForever(after_events=12),
        ),
        Scenario(
            "fault-echo-token",
            "After a citation, an `error` event whose message holds the request's bearer token.",
            script=_DEMO_SCRIPT,
            fault=EchoToken(after_events=12),
        ),
        Scenario(
            "fault-echo-token-401",
            "401 whose JSON error message holds the request's bearer token.",
            fault=EchoToken(
                status=401,
                error_type="authentication_error",
                message="Invalid bearer token: {token}",
            ),
        ),
    ]


def scenarios() -> tuple[Scenario, ...]:
    """A fresh copy of the built-in library, default first."""
    demo = Scenario(
        DEFAULT_SCENARIO,
        "The `silvia demo` turn: two accounts, a ticker, a web page and a tax document.",
        script=_DEMO_SCRIPT,
    )
    return (demo, *_target_table(), *_turn_rules(), *_faults())


SCENARIOS: MappingProxyType[str, Scenario] = MappingProxyType(
    {scenario.name: scenario for scenario in scenarios()}
)
"""The built-in scenarios by name, read-only (each server keeps its own copy to register into)."""
