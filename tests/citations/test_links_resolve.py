"""`resolve_citation`: each kind's label and links, ids that give no link, no bidi controls."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    Citation,
    InlineCitation,
    MarketDataTarget,
    ResolvedCitation,
    account_href,
    resolve_citation,
)

from ._links_cases import BASE, DOT_SEGMENTS, ID, ID2, _citation
from .strategies import PROPERTY, URL_KINDS, account_ids, citation_rows

# --------------------------------------------------------------------------- resolve_citation


def test_account_gives_one_link_to_its_page() -> None:
    for provider in ["plaid", "manual", "snaptrade", None]:
        wire = {"kind": "account", "accountId": "abc/def ghi", "provider": provider}
        resolved = resolve_citation(_citation(wire, title="Checking"))
        assert [link.href for link in resolved.links] == ["/accounts/abc%2Fdef%20ghi"], provider
        assert resolved.label == "Checking", provider
        assert resolved.links[0].label, provider
        assert resolved.href == "/accounts/abc%2Fdef%20ghi", provider


@PROPERTY
@given(
    st.lists(
        account_ids.filter(lambda s: s.isascii() and s not in DOT_SEGMENTS), min_size=1, max_size=30
    )
)
def test_accounts_gives_one_link_per_account_all_of_them(ids: list[str]) -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": i} for i in ids]}
    resolved = resolve_citation(_citation(wire, title="Credit cards"))
    assert [link.href for link in resolved.links] == [account_href(i) for i in ids]
    assert all(isinstance(link.label, str) and link.label for link in resolved.links)


def test_accounts_labels_tell_the_links_apart() -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": ID2}]}
    resolved = resolve_citation(_citation(wire, title="Credit card"))
    labels = [link.label for link in resolved.links]
    assert len(set(labels)) == 2


def test_url_kinds_link_to_their_url() -> None:
    for kind in ["web", *URL_KINDS]:
        url = "https://www.example.gov/doc?id=1#s2"
        resolved = resolve_citation(_citation({"kind": kind, "url": url}, title="Doc"))
        assert [link.href for link in resolved.links] == [url], kind
        assert resolved.links[0].label == resolved.label == "Doc", kind


def test_document_kinds_without_url_have_no_link() -> None:
    for kind in URL_KINDS:
        citation = _citation({"kind": kind, "url": None}, title="IRC §1")
        resolved = resolve_citation(citation)
        assert resolved.links == (), kind
        assert resolved.href is None, kind
        assert resolved.label == "IRC §1", kind


def test_target_url_wins_over_an_http_source() -> None:
    citation = Citation.model_validate(
        {
            "source": "https://source.example/a",
            "target": {"kind": "card_document", "url": "https://issuer.example/terms"},
        }
    )
    assert [link.href for link in resolve_citation(citation).links] == [
        "https://issuer.example/terms"
    ]


def test_market_data_is_labelled_by_its_ticker() -> None:
    for title in [None, "Apple", ""]:
        citation = Citation.model_validate(
            {
                "source": "silvia://market-data/finnhub/AAPL",
                "title": title,
                "target": {"kind": "market_data", "ticker": "AAPL"},
            }
        )
        resolved = resolve_citation(citation)
        assert resolved.label == "AAPL", title
        assert resolved.links == (), title  # neither an http(s) URL nor an account


def test_analysis_label_depends_on_its_source() -> None:
    for title in [None, "Finnhub quote", ""]:
        for source, label in [
            ("silvia://market-data/finnhub", "Live data"),
            ("silvia://analysis", "Analysis"),
            ("silvia://market-data/finnhub/AAPL", "Analysis"),
            ("silvia://market-data/finnhub/", "Analysis"),
            ("https://example.com/page", "Analysis"),
        ]:
            citation = Citation.model_validate(
                {"source": source, "title": title, "target": {"kind": "analysis"}}
            )
            assert resolve_citation(citation).label == label, (title, source, label)


def test_without_a_usable_target_the_label_is_title_then_source() -> None:
    for title, source, label in [
        ("Checking", "silvia://your-account/checking", "Checking"),
        (None, "silvia://your-account/checking", "silvia://your-account/checking"),
        ("", "https://example.com/a", "https://example.com/a"),
    ]:
        for target in [None, {"kind": "telepathy"}, {"kind": "web", "url": "x"}]:
            citation = Citation.model_validate({"source": source, "title": title, "target": target})
            assert citation.target is None, (title, source, label, target)
            assert resolve_citation(citation).label == label, (title, source, label, target)


def test_with_no_title_or_source_to_show_the_label_is_source() -> None:
    for title in [None, "", " ", "\u202e"]:
        for source in ["", "\t", "\u2066\u2069"]:
            assert resolve_citation(Citation(source=source, title=title)).label == "Source", (
                title,
                source,
            )


def test_a_portfolio_without_a_title_is_labelled_portfolio() -> None:
    for title in [None, ""]:
        wire = {
            "source": "silvia://your-portfolio",
            "title": title,
            "target": {"kind": "portfolio"},
        }
        assert resolve_citation(Citation.model_validate(wire)) == ResolvedCitation("Portfolio"), (
            title
        )


def test_a_portfolio_with_a_title_is_labelled_by_its_title() -> None:
    wire = {
        "source": "silvia://your-portfolio",
        "title": "Holdings",
        "target": {"kind": "portfolio"},
    }
    assert resolve_citation(Citation.model_validate(wire)).label == "Holdings"


# --------------------------------------------------------------------------- ids without a link


def test_lone_surrogate_id_gives_no_link_and_no_exception() -> None:
    for model in [Citation, InlineCitation]:
        for web in ["", BASE]:
            account = model.model_validate(
                {"source": "s", "target": {"kind": "account", "accountId": "a\ud800b"}}
            )
            assert resolve_citation(account, web_url=web).links == (), (model, web)
            accounts = model.model_validate(
                {
                    "source": "s",
                    "target": {
                        "kind": "accounts",
                        "accounts": [
                            {"accountId": ID},
                            {"accountId": "\udc00"},
                            {"accountId": ID2},
                        ],
                    },
                }
            )
            hrefs = [link.href for link in resolve_citation(accounts, web_url=web).links]
            assert hrefs == [f"{web}/accounts/{ID}", f"{web}/accounts/{ID2}"], (model, web)


def test_dot_segment_id_gives_no_link_and_keeps_its_target() -> None:
    for account_id in DOT_SEGMENTS:
        for model in [Citation, InlineCitation]:
            for web in ["", BASE, BASE + "/app/"]:
                account = model.model_validate(
                    {
                        "source": "silvia://your-account/dots",
                        "title": "Dots",
                        "target": {"kind": "account", "accountId": account_id, "provider": "plaid"},
                    }
                )
                assert account.target == AccountTarget(account_id, "plaid"), (
                    account_id,
                    model,
                    web,
                )  # the target as sent
                resolved = resolve_citation(account, web_url=web)
                assert (resolved.label, resolved.links) == ("Dots", ()), (account_id, model, web)
                refs = [{"accountId": ID}, {"accountId": account_id}, {"accountId": ID2}]
                accounts = model.model_validate(
                    {
                        "source": "s",
                        "title": "Cards",
                        "target": {"kind": "accounts", "accounts": refs},
                    }
                )
                assert accounts.target == AccountsTarget(
                    (AccountRef(ID), AccountRef(account_id), AccountRef(ID2))
                ), (account_id, model, web)
                origin = web.rstrip("/").removesuffix("/app")
                links = resolve_citation(accounts, web_url=web).links
                assert [(link.href, link.label) for link in links] == [
                    (f"{origin}/accounts/{ID}", "Cards (1 of 3)"),
                    (f"{origin}/accounts/{ID2}", "Cards (3 of 3)"),
                ], (account_id, model, web)


# --------------------------------------------------------------------------- bidi controls

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_labels_hold_no_bidi_controls() -> None:
    for control in BIDI_CONTROLS:
        title = Citation.model_validate(
            {
                "source": "silvia://your-account/cards",
                "title": f"Cards{control} (gpj.exe",
                "target": {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": ID2}]},
            }
        )
        resolved = resolve_citation(title)
        assert resolved.label == "Cards (gpj.exe", control
        assert [link.label for link in resolved.links] == [
            "Cards (gpj.exe (1 of 2)",
            "Cards (gpj.exe (2 of 2)",
        ], control
        assert [link.href for link in resolved.links] == [account_href(ID), account_href(ID2)], (
            control
        )
        ticker = Citation.model_validate(
            {"source": "s", "target": {"kind": "market_data", "ticker": f"AA{control}PL"}}
        )
        assert resolve_citation(ticker).label == "AAPL", control
        assert ticker.target == MarketDataTarget(f"AA{control}PL"), control  # the target as sent
        source = Citation(source=f"silvia://x{control}y")
        assert resolve_citation(source).label == "silvia://xy", control


def test_a_title_of_only_bidi_controls_falls_back_to_the_source() -> None:
    citation = Citation(source="https://example.com/a", title=BIDI_CONTROLS)
    assert resolve_citation(citation).label == "https://example.com/a"
    ticker = Citation.model_validate(
        {"source": "s", "title": "T", "target": {"kind": "market_data", "ticker": "\u202e"}}
    )
    assert resolve_citation(ticker).label == "T"


def test_bidi_marks_stay_in_labels() -> None:
    # Marks open no scope: they order text as a letter of their direction does.
    title = "\u05e9\u05dc\u05d5\u05dd\u200f (RLM) \u200e (LRM) \u061c (ALM)"
    assert resolve_citation(Citation(source="s", title=title)).label == title


def test_account_links_come_from_hand_built_targets_too() -> None:
    target = AccountsTarget((AccountRef(ID, "plaid"), AccountRef(ID2)))
    citation = Citation(source="s").model_copy(update={"target": target})
    assert [link.href for link in resolve_citation(citation).links] == [
        account_href(ID),
        account_href(ID2),
    ]
    single = Citation(source="s").model_copy(update={"target": AccountTarget(ID, "manual")})
    assert [link.href for link in resolve_citation(single).links] == [account_href(ID)]


def test_market_data_hand_built() -> None:
    citation = Citation(source="s").model_copy(update={"target": MarketDataTarget("MSFT")})
    assert resolve_citation(citation).label == "MSFT"


def _is_link(href: str, web: str) -> bool:
    parts = urlsplit(href)
    if parts.scheme in ("http", "https") and parts.netloc:
        return True
    return not web and href.startswith("/accounts/")


@PROPERTY
@given(st.sampled_from([Citation, InlineCitation]), citation_rows(), st.sampled_from(["", BASE]))
def test_resolve_never_raises_for_citations_from_wire_rows(
    model: type[Citation], row: dict[str, Any], web: str
) -> None:
    citation = model.model_validate(row)
    resolved = resolve_citation(citation, web_url=web)
    assert isinstance(resolved.label, str)
    assert not set(BIDI_CONTROLS) & set(resolved.label)
    for link in resolved.links:
        assert isinstance(link.label, str)
        assert _is_link(link.href, web), link.href
        assert not link.href.lower().startswith(("javascript:", "data:"))
        if link.href.startswith(web + "/accounts/"):
            assert urlsplit(link.href).path.removeprefix("/accounts/") not in ("", ".", "..")
        else:
            # not an account page: it must be the target's URL or the legacy source
            assert link.href in (getattr(citation.target, "url", None), citation.source)
