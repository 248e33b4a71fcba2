"""Targets per second through `parse_citation_target`, against a naive pydantic parser, in one run.

    python benchmarks/bench_parse.py [--targets N] [--rounds R] [--seed S] [--by-kind]

Both sides read the same mixed corpus of wire targets (a seeded
`random.Random`, so every run sees the same values): about 60% valid targets of
all nine kinds, 40% invalid ones (unknown or non-string kinds, fields of the
wrong type, bad URLs, `accounts` lists with one bad entry, values that are not
objects at all), some with unknown extra fields.

* ours: `silvia_client.citations.parse_citation_target(value)`.
* naive: what a user writes with pydantic alone: nine `BaseModel`s mirroring
  the kinds (camelCase aliases, strict types, the same URL, ticker, account id
  and provider rules), a `TypeAdapter` over
  `Annotated[Union[...], Field(discriminator="kind")]`, and
  `adapter.validate_python(value)` inside `try/except ValidationError`, giving
  None for an invalid value.

Before timing, the script checks that the two sides agree, value by value, on
which targets are valid (so both do the same work), and prints the count.
Rounds alternate the sides; each side's best round (the least disturbed one)
gives its rate, the median is printed too. Goal: ours >= 2 x naive. The exit
status is 0 whether or not the goal is met, and 1 if the sides disagree.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from silvia_client.citations import parse_citation_target

# --------------------------------------------------------------------------- the naive parser

PROVIDERS = ("plaid", "manual", "snaptrade")

# The SDK's URL rule as one pattern: http(s) (any case), "://", an optional
# userinfo ending at the authority's last "@", then a host that is not empty
# and does not start with ":"; no ASCII whitespace or control character
# anywhere. (Pydantic's `HttpUrl` would normalise the URL and accept more.)
_C = r"[^\x00-\x20\x7f]"
_AUTH = r"[^\x00-\x20\x7f/?#]"
_HOST = r"[^\x00-\x20\x7f/?#@]"
HTTP_URL = rf"^(?i:https?)://(?:{_AUTH}*@)?[^\x00-\x20\x7f/?#@:]{_HOST}*(?:[/?#]{_C}*)?$"

HttpStr = Annotated[str, StringConstraints(pattern=HTTP_URL)]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]


def _provider_or_none(value: object) -> object:
    # The contract keeps the account when the provider is unknown: null it, do not fail.
    return value if isinstance(value, str) and value in PROVIDERS else None


Provider = Annotated[
    Union[Literal["plaid", "manual", "snaptrade"], None],  # noqa: UP007
    BeforeValidator(_provider_or_none),
]

_CONFIG = ConfigDict(strict=True, frozen=True, extra="ignore")


class Web(BaseModel):
    model_config = _CONFIG
    kind: Literal["web"]
    url: HttpStr


class TaxReference(BaseModel):
    model_config = _CONFIG
    kind: Literal["tax_reference"]
    url: HttpStr | None = None


class CardDocument(BaseModel):
    model_config = _CONFIG
    kind: Literal["card_document"]
    url: HttpStr | None = None


class MortgageReference(BaseModel):
    model_config = _CONFIG
    kind: Literal["mortgage_reference"]
    url: HttpStr | None = None


class MarketData(BaseModel):
    model_config = _CONFIG
    kind: Literal["market_data"]
    ticker: NonEmpty


class Analysis(BaseModel):
    model_config = _CONFIG
    kind: Literal["analysis"]


class AccountRefModel(BaseModel):
    model_config = _CONFIG
    account_id: NonEmpty = Field(alias="accountId")
    provider: Provider = None


class Account(AccountRefModel):
    kind: Literal["account"]


class Accounts(BaseModel):
    model_config = _CONFIG
    kind: Literal["accounts"]
    accounts: Annotated[list[AccountRefModel], Field(min_length=1)]


class Portfolio(BaseModel):
    model_config = _CONFIG
    kind: Literal["portfolio"]


NaiveTarget = Annotated[
    Union[  # noqa: UP007
        Web,
        TaxReference,
        CardDocument,
        MortgageReference,
        MarketData,
        Analysis,
        Account,
        Accounts,
        Portfolio,
    ],
    Field(discriminator="kind"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(NaiveTarget)


def naive_parse(value: object) -> BaseModel | None:
    try:
        return _ADAPTER.validate_python(value)  # type: ignore[no-any-return]
    except ValidationError:
        return None


# --------------------------------------------------------------------------- the corpus


def build_corpus(count: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    letters = string.ascii_letters + string.digits

    def word(lo: int = 3, hi: int = 12) -> str:
        return "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))

    def url() -> str:
        scheme = rng.choice(["https", "https", "https", "http", "HTTPS"])
        host = rng.choice(["www.irs.gov", "www.ecfr.gov", "www.consumerfinance.gov", "example.com"])
        path = "/".join(word() for _ in range(rng.randint(0, 4)))
        query = f"?q={word()}" if rng.random() < 0.2 else ""
        return f"{scheme}://{host}/{path}{query}"

    def account_id() -> str:
        return rng.choice(
            [
                "".join(rng.choice(letters) for _ in range(rng.randint(20, 40))),
                f"{word(8, 8)}-{word(4, 4)}-{word(4, 4)}-{word(12, 12)}",
            ]
        )

    def provider() -> object:
        return rng.choice([*PROVIDERS, *PROVIDERS, None, "coinbase", 7])  # unknown: kept, null

    def ref() -> dict[str, Any]:
        entry: dict[str, Any] = {"accountId": account_id()}
        if rng.random() < 0.9:
            entry["provider"] = provider()
        return entry

    def valid() -> dict[str, Any]:
        kind = rng.choice(
            [
                "web",
                "tax_reference",
                "card_document",
                "mortgage_reference",
                "market_data",
                "analysis",
                "account",
                "accounts",
                "portfolio",
            ]
        )
        value: dict[str, Any] = {"kind": kind}
        if kind == "web":
            value["url"] = url()
        elif kind in ("tax_reference", "card_document", "mortgage_reference"):
            choice = rng.random()
            if choice < 0.5:
                value["url"] = url()
            elif choice < 0.9:
                value["url"] = None
        elif kind == "market_data":
            value["ticker"] = rng.choice(["AAPL", "MSFT", "BRK.B", "VTI", "NVDA", word(1, 5)])
        elif kind == "account":
            value.update(ref())
        elif kind == "accounts":
            value["accounts"] = [ref() for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.15:
            value["futureField"] = {"nested": [word(), rng.random()]}
        return value

    def wrong_type() -> object:
        return rng.choice([None, 0, 1.5, True, [], {}, ["x"], {"a": 1}])

    def invalid() -> Any:
        case = rng.randrange(8)
        if case == 0:  # unknown kind, or a kind that is not a string
            return {"kind": rng.choice(["hologram", "Web", "", "account_v2", 3, None, ["web"]])}
        if case == 1:  # no kind at all, or not an object
            return rng.choice([{"url": url()}, None, "web", 42, [valid()], [], 3.5])
        if case == 2:  # a bad URL
            bad = rng.choice(
                [
                    "javascript:alert(1)",
                    "data:text/html,<b>x</b>",
                    "/relative/path",
                    "example.com/x",
                    "https://",
                    "http:///x",
                    "https://exa mple.com",
                    url() + " ",
                    "ftp://example.com/x",
                    "silvia://tax-authority/x",
                ]
            )
            return {"kind": rng.choice(["web", "tax_reference", "card_document"]), "url": bad}
        if case == 3:  # a field of the wrong type
            kind, key = rng.choice(
                [
                    ("web", "url"),
                    ("mortgage_reference", "url"),
                    ("market_data", "ticker"),
                    ("account", "accountId"),
                    ("accounts", "accounts"),
                ]
            )
            return {"kind": kind, key: wrong_type()}
        if case == 4:  # an empty ticker or account id
            return rng.choice(
                [{"kind": "market_data", "ticker": ""}, {"kind": "account", "accountId": ""}]
            )
        if case == 5:  # a required field missing
            return {"kind": rng.choice(["web", "market_data", "account", "accounts"])}
        if case == 6:  # accounts with one bad entry, anywhere
            entries: list[Any] = [ref() for _ in range(rng.randint(1, 5))]
            bad_entry = rng.choice(
                [{"accountId": ""}, {"accountId": 7}, {"provider": "plaid"}, "acct", None]
            )
            entries.insert(rng.randint(0, len(entries)), bad_entry)
            return {"kind": "accounts", "accounts": entries}
        return {"kind": "accounts", "accounts": []}  # an empty list

    return [valid() if rng.random() < 0.6 else invalid() for _ in range(count)]


# --------------------------------------------------------------------------- timing


def check_agreement(corpus: list[Any]) -> int:
    """How many values both sides classify alike; prints the first disagreements."""
    agree = 0
    shown = 0
    for value in corpus:
        if (parse_citation_target(value) is None) == (naive_parse(value) is None):
            agree += 1
        elif shown < 5:
            shown += 1
            print(f"  disagree: {value!r}", file=sys.stderr)
    return agree


def time_side(parse: Callable[[object], object], corpus: list[Any]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for value in corpus:
            parse(value)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=50_000, help="corpus size")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per side, alternating")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument(
        "--by-kind", action="store_true", help="also print both rates for each kind, valid/invalid"
    )
    args = parser.parse_args(argv)

    corpus = build_corpus(args.targets, args.seed)
    valid = sum(parse_citation_target(v) is not None for v in corpus)
    share = valid / len(corpus)
    print(f"corpus: {len(corpus)} targets, {valid} valid ({share:.0%}), seed {args.seed}")

    agree = check_agreement(corpus)
    print(f"agreement on valid/invalid: {agree} of {len(corpus)}")
    if agree != len(corpus):
        print("the two parsers do not apply the same rules: the comparison is not fair")
        return 1

    sides: dict[str, Callable[[object], object]] = {
        "ours": parse_citation_target,
        "naive": naive_parse,
    }
    for parse in sides.values():  # warm up (pydantic builds its validators lazily)
        for value in corpus[:2000]:
            parse(value)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(args.rounds):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(time_side(sides[name], corpus))

    rates: dict[str, float] = {}
    for name, samples in times.items():
        best = len(corpus) / min(samples)
        median = len(corpus) / statistics.median(samples)
        rates[name] = best
        print(f"{name:>5}: {best:>12,.0f} targets/s best, {median:>12,.0f} median", end="")
        print(f" ({args.rounds} rounds)")
    ratio = rates["ours"] / rates["naive"]
    verdict = "met" if ratio >= 2 else "NOT met"
    print(f"ratio ours/naive: {ratio:.2f}x (goal >= 2x: {verdict})")
    if args.by_kind:
        by_kind(corpus, sides, args.rounds)
    return 0


def by_kind(corpus: list[Any], sides: dict[str, Callable[[object], object]], rounds: int) -> None:
    """Where the time goes: both rates for each (valid?, kind) group of the corpus."""
    groups: dict[tuple[bool, str], list[Any]] = {}
    for value in corpus:
        kind = value.get("kind") if isinstance(value, dict) else "(not an object)"
        key = (parse_citation_target(value) is not None, kind if isinstance(kind, str) else "?")
        groups.setdefault(key, []).append(value)
    print(f"{'group':<34}{'count':>7}{'ours/s':>13}{'naive/s':>13}{'ratio':>7}")
    for (ok, kind), values in sorted(groups.items()):
        best = {
            name: min(time_side(parse, values) for _ in range(rounds))
            for name, parse in sides.items()
        }
        ours, naive = len(values) / best["ours"], len(values) / best["naive"]
        label = f"{'valid' if ok else 'invalid'} {kind!r}"
        print(f"{label:<34}{len(values):>7}{ours:>13,.0f}{naive:>13,.0f}{ours / naive:>7.2f}")


if __name__ == "__main__":
    sys.exit(main())
