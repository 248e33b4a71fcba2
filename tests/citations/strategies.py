"""Test inputs for citation targets and rows, for any test module to import.

Hypothesis strategies in three families: `json_like` / `target_junk`, arbitrary
JSON-like values and target-shaped dicts whose real keys hold values of the wrong
type; `targets` / `canonical_wire_targets`, valid targets of all nine kinds, as
values and as the exact wire dicts a server sends; `citation_rows`, wire rows
(valid and not) as the stream and history carry them. Then a few fixed values:
account ids, an app origin, `cite` (a row built) and `RaisingDict`; and `every_key`,
to look for a key (`provider`) at any depth of a dump.
"""

from __future__ import annotations

import copy
import string
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    Citation,
    CitationTarget,
    InlineCitation,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
)

from ..depth import PROFILE

# The run's profile (tests/depth.py), no deadline; the never-raises fuzz searches further,
# for what nobody listed.
PROPERTY = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
FUZZ = settings(PROPERTY, max_examples={"dev": 10, "mutation": 500}.get(PROFILE, 300))

# --------------------------------------------------------------------------- constants

MODELS = (Citation, InlineCitation)  # the two row models
URL_KINDS = ("tax_reference", "card_document", "mortgage_reference")
KINDS = ("web", *URL_KINDS, "market_data", "analysis", "account", "accounts", "portfolio")
PROVIDER_NAMES = ("plaid", "manual", "snaptrade")
REAL_KEYS = ("kind", "url", "ticker", "accountId", "provider", "accounts")
SURROGATES = range(0xD800, 0xE000)

# --------------------------------------------------------------------------- text

# Every code point, lone surrogates included (the default excludes category Cs).
any_char = st.characters(exclude_categories=())
any_text = st.text(alphabet=any_char, max_size=24)
# Strings that look like what the server sends, so the junk also hits near misses.
_interesting = [*KINDS, *PROVIDER_NAMES, *REAL_KEYS, "", " ", "Plaid", "coinbase", "https://"]
_interesting += ["http://example.com", "https://example.com/a", "javascript:alert(1)", "\ud800"]
_interesting += ["data:text/html,<script>alert(1)</script>", "https://exa\udc00mple.com"]
_interesting += ["silvia://analysis", "silvia://market-data/finnhub", "/relative/path"]
_interesting_strings = st.sampled_from(_interesting)
texts = st.one_of(any_text, _interesting_strings)


# --------------------------------------------------------------------------- junk

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
_keys = st.one_of(st.sampled_from(REAL_KEYS), any_text)


def _json(size: int, leaves: int) -> st.SearchStrategy[Any]:
    return st.recursive(
        json_scalars,
        lambda children: (
            st.lists(children, max_size=size) | st.dictionaries(_keys, children, max_size=size)
        ),
        max_leaves=leaves,
    )


json_like = _json(5, 16)
_wrong = _json(3, 6)  # values of the wrong type for every field: anything JSON holds


account_ids = st.one_of(
    st.from_regex(r"[A-Za-z0-9_-]{16,40}", fullmatch=True),
    st.text(alphabet=any_char, min_size=1, max_size=24),
)
providers = st.sampled_from((*PROVIDER_NAMES, None))
_providers_or_junk = st.one_of(providers, _wrong)
_wire_ref = st.fixed_dictionaries({"accountId": account_ids, "provider": providers})
_junk_ref = st.fixed_dictionaries(
    {}, optional={"accountId": st.one_of(_wrong, account_ids), "provider": _providers_or_junk}
)

target_junk: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"kind": st.one_of(st.sampled_from(KINDS), _wrong)},
    optional={
        "url": st.one_of(_wrong, st.sampled_from(("https://example.com", None))),
        "ticker": _wrong,
        "accountId": st.one_of(_wrong, account_ids),
        "provider": _providers_or_junk,
        "accounts": st.one_of(_wrong, st.lists(_junk_ref | _wrong, max_size=4)),
    },
)


# --------------------------------------------------------------------------- valid targets

_host = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,12}[a-z0-9])?(\.[a-z]{2,6}){0,2}", fullmatch=True)
_port = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))
_path_chars = string.ascii_letters + string.digits + "/?#=&%-._~!$'()*+,;:@" + "é中😀"
_path = st.text(alphabet=_path_chars, max_size=30).map(lambda p: p if not p else "/" + p)
_scheme = st.sampled_from(("http", "https", "HTTPS", "Http"))

http_urls = st.builds(lambda s, h, p, t: f"{s}://{h}{p}{t}", _scheme, _host, _port, _path)
# A ticker or an account id only has to be a non-empty string: any code point.
tickers = st.one_of(
    st.from_regex(r"[A-Z]{1,5}(\.[A-Z])?", fullmatch=True),
    st.text(alphabet=any_char, min_size=1, max_size=12),
)

account_refs = st.builds(AccountRef, account_ids, providers)

account_bearing_targets: st.SearchStrategy[AccountTarget | AccountsTarget] = st.one_of(
    st.builds(AccountTarget, account_ids, providers),
    st.builds(AccountsTarget, st.lists(account_refs, min_size=1, max_size=6).map(tuple)),
)
targets: st.SearchStrategy[CitationTarget] = st.one_of(
    st.builds(WebTarget, http_urls),
    st.builds(TaxReferenceTarget, st.none() | http_urls),
    st.builds(CardDocumentTarget, st.none() | http_urls),
    st.builds(MortgageReferenceTarget, st.none() | http_urls),
    st.builds(MarketDataTarget, tickers),
    st.just(AnalysisTarget()),
    account_bearing_targets,
    st.just(PortfolioTarget()),
)


# Canonical wire dicts, written out by hand rather than through `to_wire()`:
# exactly the shape `types/chat.ts` gives, every field present.
canonical_wire_targets: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.fixed_dictionaries({"kind": st.just("web"), "url": http_urls}),
    *(
        st.fixed_dictionaries({"kind": st.just(kind), "url": st.none() | http_urls})
        for kind in URL_KINDS
    ),
    st.fixed_dictionaries({"kind": st.just("market_data"), "ticker": tickers}),
    st.fixed_dictionaries({"kind": st.just("analysis")}),  # fresh dicts: tests may mutate them
    st.fixed_dictionaries(
        {"kind": st.just("account"), "accountId": account_ids, "provider": providers}
    ),
    st.fixed_dictionaries(
        {"kind": st.just("accounts"), "accounts": st.lists(_wire_ref, min_size=1, max_size=6)}
    ),
    st.fixed_dictionaries({"kind": st.just("portfolio")}),
)

# Keys no kind of target uses, for "unknown extra fields are ignored".
extra_fields = st.dictionaries(
    any_text.filter(lambda k: k not in REAL_KEYS), json_like, min_size=1, max_size=4
)


@st.composite
def mutated_wire_targets(draw: st.DrawFn) -> dict[str, Any]:
    """A valid wire target with one field (possibly inside `accounts`) replaced or removed."""
    wire: dict[str, Any] = copy.deepcopy(draw(canonical_wire_targets))
    holder: dict[str, Any] = wire
    if wire["kind"] == "accounts" and draw(st.booleans()):
        entries = wire["accounts"]
        holder = entries[draw(st.integers(0, len(entries) - 1))]
    key = draw(st.sampled_from(sorted({*holder, *REAL_KEYS})))
    if draw(st.booleans()):
        holder.pop(key, None)
    else:
        holder[key] = draw(_wrong)
    return wire


# Everything the never-raises property feeds the parser.
any_target_value = st.one_of(json_like, target_junk, mutated_wire_targets(), canonical_wire_targets)


# --------------------------------------------------------------------------- citation rows

_silvia = ["your-account/checking", "your-portfolio", "market-data/finnhub", "analysis"]
_silvia += ["market-data/finnhub/AAPL", "tax-authority/irc/1", "search/search_web"]
sources = st.one_of(
    st.sampled_from(
        ["javascript:alert(1)", "data:text/html,x", ""] + [f"silvia://{p}" for p in _silvia]
    ),
    http_urls,
    any_text,
)
_anthropic_extras = st.fixed_dictionaries(
    {},
    optional={
        "type": st.just("search_result_location"),
        "search_result_index": st.integers(0, 50),
        "start_block_index": st.integers(0, 50),
        "end_block_index": st.integers(0, 50),
    },
)


@st.composite
def citation_rows(
    draw: st.DrawFn, *, target: st.SearchStrategy[Any] | None = None
) -> dict[str, Any]:
    """A well-formed wire row (`title`/`cited_text` strings or null), its `target` drawn from
    `target` (default: valid, malformed, junk, or none, as rows saved before targets)."""
    row: dict[str, Any] = {"source": draw(sources)}
    row.update(draw(_anthropic_extras))
    for name in ("title", "cited_text"):
        if draw(st.booleans()):
            row[name] = draw(st.none() | texts)
    strategy = target if target is not None else st.one_of(any_target_value, st.just(...))
    value = draw(strategy)
    if value is not ...:
        row["target"] = value
    return row


# Rows that are never a citation: not an object, no `source`, or a `source` that is not a string.
bad_citation_rows = st.one_of(
    json_scalars,
    st.lists(json_like, max_size=3),
    st.dictionaries(any_text.filter(lambda k: k != "source"), json_like, max_size=4),  # no source
    st.fixed_dictionaries(
        {"source": json_like.filter(lambda v: not isinstance(v, str))},
        optional={"target": any_target_value},
    ),
)


# --------------------------------------------------------------------------- fixed values

ID = "acc_9f8e7d6c5b4a3210"
ID2 = "acc_0123456789abcdef"
DOT_SEGMENTS = (".", "..")  # ids whose path would be a dot segment: no link
BASE = "https://app.example.com"


def cite(target: Any = None, **fields: Any) -> Citation:
    row: dict[str, Any] = {"source": "silvia://your-account/checking", **fields}
    if target is not None:
        row["target"] = target
    return Citation.model_validate(row)


class RaisingDict(dict):  # type: ignore[type-arg]
    """A dict whose every read raises (get, [], items, keys, iteration, len, contains)."""

    def _boom(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("hostile mapping")

    get = __getitem__ = items = keys = values = __iter__ = __len__ = __contains__ = _boom


def every_key(value: Any) -> Iterator[Any]:
    """Every key of every dict in `value` (dicts, lists, tuples), at any depth."""
    if isinstance(value, dict):
        yield from value
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from every_key(item)
