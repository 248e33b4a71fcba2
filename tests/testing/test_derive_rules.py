"""The server's target rules, one doc rule at a time ("What the server cites")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from silvia_client.citations._targets import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
)
from silvia_client.testing import (
    Checkpoint,
    Cite,
    ExaArticle,
    ExecutePython,
    ExecuteSql,
    Say,
    ScriptError,
    SearchWeb,
    WebResult,
    humanize_citation_url,
    label_slug,
    read_credit_card_document,
    read_mortgage_authority,
    read_tax_authority,
)
from silvia_client.testing._derive import (
    AccountClaim,
    NoTarget,
    TargetClaim,
    TargetRegistry,
    search_results,
)
from silvia_client.testing._turn import play

ID_A = "AAAAaaaa1111bbbb2222"
ID_B = "BBBBbbbb3333cccc4444"


def _row(label: str = "Checking", /, **columns: object) -> dict[str, object]:
    return {"account_name": label, "balance": "10.00", **columns}


def _target_after(*calls: ExecuteSql | ExecutePython | SearchWeb | object) -> object:
    registry = TargetRegistry()
    for call in calls:
        for result in search_results(call):  # type: ignore[arg-type]
            registry.write(result)
    return {source: registry.target_for(source) for source in registry.sources()}


# -- execute_sql: labels, account / accounts / none ---------------------------


def test_rows_are_grouped_by_label_into_account_sources_titled_by_the_label() -> None:
    results = search_results(
        ExecuteSql(rows=(_row("Checking"), _row("Credit card"), _row("Checking")))
    )
    assert [(r.source, r.title, len(r.content)) for r in results] == [
        ("silvia://your-account/checking", "Checking", 2),
        ("silvia://your-account/credit-card", "Credit card", 1),
    ]


def test_label_slug() -> None:
    for label, slug in [
        ("Credit card", "credit-card"),
        ("  Sapphire  Preferred!", "sapphire-preferred"),
        ("401(k)", "401-k"),
    ]:
        assert label_slug(label) == slug, (label, slug)


def test_a_label_with_nothing_to_slug_is_rejected() -> None:
    with pytest.raises(ValueError, match="label"):
        label_slug("!!!")


def test_every_row_naming_the_same_account_gives_account() -> None:
    rows = (
        _row("Brokerage", source="snaptrade", source_account_id=ID_A),
        _row("Brokerage", source="snaptrade", source_account_id=ID_A),
    )
    (result,) = search_results(ExecuteSql(rows=rows))
    assert result.claim == AccountClaim((AccountRef(ID_A, "snaptrade"),))
    assert _target_after(ExecuteSql(rows=rows)) == {
        "silvia://your-account/brokerage": AccountTarget(ID_A, "snaptrade")
    }


def test_a_label_covering_several_accounts_gives_accounts_in_row_order() -> None:
    rows = (
        _row("Credit card", source="plaid", source_account_id=ID_B),
        _row("Credit card", source="plaid", source_account_id=ID_A),
    )
    assert _target_after(ExecuteSql(rows=rows)) == {
        "silvia://your-account/credit-card": AccountsTarget(
            (AccountRef(ID_B, "plaid"), AccountRef(ID_A, "plaid"))
        )
    }


def test_one_row_without_an_account_id_leaves_the_label_untyped() -> None:
    cases: list[dict[str, object]] = [{"source_account_id": None}, {}, {"account_id": "12"}]
    for missing in cases:
        rows = (_row("Credit card", source_account_id=ID_A), _row("Credit card", **missing))
        (result,) = search_results(ExecuteSql(rows=rows))
        assert result.claim == AccountClaim(None), missing
        assert _target_after(ExecuteSql(rows=rows)) == {
            "silvia://your-account/credit-card": None
        }, missing


def test_a_portfolio_wide_result_is_the_portfolio() -> None:
    (result,) = search_results(ExecuteSql(rows=({"total": "1.00"},), label_column=None))
    assert (result.source, result.claim) == (
        "silvia://your-portfolio",
        TargetClaim(PortfolioTarget()),
    )


def test_a_row_without_its_label_column_is_a_script_error() -> None:
    with pytest.raises(ValueError, match="account_name"):
        search_results(ExecuteSql(rows=({"balance": "1.00"},)))


def test_no_vendor_name_reaches_the_text_from_a_column_or_its_name() -> None:
    rows = (
        _row(source="plaid", source_account_id=ID_A),
        _row(snaptrade_account_id=ID_A),
        _row(manual_account_uuid=ID_A),
    )
    (result,) = search_results(ExecuteSql(rows=rows))
    for line in result.content:
        assert not any(vendor in line for vendor in ("plaid", "snaptrade", "manual"))
        assert f"account_id: {ID_A}" in line  # the id itself may show: it is the user's own


# -- account ids: column order, provider, the id rule -------------------------


def test_id_columns_in_the_docs_order() -> None:
    cases: list[tuple[dict[str, object], AccountRef]] = [
        ({"source_account_id": ID_A, "source": "plaid"}, AccountRef(ID_A, "plaid")),
        ({"source_account_id": ID_A, "source": "manual"}, AccountRef(ID_A, "manual")),
        ({"source_account_id": ID_A}, AccountRef(ID_A, None)),
        ({"snaptrade_account_id": ID_A}, AccountRef(ID_A, "snaptrade")),
        ({"manual_account_uuid": ID_A}, AccountRef(ID_A, "manual")),
        ({"account_uuid": ID_A}, AccountRef(ID_A, "manual")),
        ({"account_id": ID_A}, AccountRef(ID_A, None)),
        # Earlier columns win over later ones.
        (
            {"account_id": ID_B, "source_account_id": ID_A, "source": "plaid"},
            AccountRef(ID_A, "plaid"),
        ),
        ({"account_id": ID_B, "snaptrade_account_id": ID_A}, AccountRef(ID_A, "snaptrade")),
        ({"account_uuid": ID_B, "manual_account_uuid": ID_A}, AccountRef(ID_A, "manual")),
        ({"account_id": ID_B, "account_uuid": ID_A}, AccountRef(ID_A, "manual")),
        # A column holding a non-id is passed over for the next one.
        ({"source_account_id": "1042", "account_id": ID_B}, AccountRef(ID_B, None)),
    ]
    for case in cases:
        columns, expected = case
        (result,) = search_results(ExecuteSql(rows=(_row(**columns),)))
        assert result.claim == AccountClaim((expected,)), case


def test_values_that_are_not_ids_name_no_account() -> None:
    for value in [
        42,
        "1234567890123456789",  # all digits: a row number
        "a" * 15,
        "a" * 129,
        "acct 1234 5678 9012",
        "acct.1234.5678.9012",
        "Checking account!!",
    ]:
        (result,) = search_results(ExecuteSql(rows=(_row(account_id=value),)))
        assert result.claim == AccountClaim(None), value


def test_values_that_are_ids() -> None:
    for value in ["a" * 16, "a" * 128, "0123456789abcdef", "A-b_C-d_E-f_G-h_"]:
        (result,) = search_results(ExecuteSql(rows=(_row(account_id=value),)))
        assert result.claim == AccountClaim((AccountRef(value, None),)), value


def test_a_crypto_wallet_source_names_no_account_even_with_an_id() -> None:
    rows = (_row("Crypto wallet", source="crypto", source_account_id=ID_A, account_id=ID_B),)
    assert _target_after(ExecuteSql(rows=rows)) == {"silvia://your-account/crypto-wallet": None}


def test_legacy_prompt_rows_without_id_columns_are_untyped_but_a_selected_id_counts() -> None:
    rows = (_row("Checking"), _row("Savings", account_id=ID_A))
    assert _target_after(ExecuteSql(rows=rows)) == {
        "silvia://your-account/checking": None,
        "silvia://your-account/savings": AccountTarget(ID_A, None),
    }


# -- execute_python -------------------------------------------------------------


FINNHUB = "import finnhub\nclient = finnhub.Client(api_key=KEY)"


def test_a_finnhub_payload_with_its_ticker_is_market_data() -> None:
    (result,) = search_results(ExecutePython(FINNHUB, '{"symbol": "aapl", "c": 1.0}'))
    assert result.source == "silvia://market-data/finnhub/AAPL"
    assert result.claim == TargetClaim(MarketDataTarget("AAPL"))


def test_several_payloads_with_tickers_give_one_source_each() -> None:
    output = '[{"symbol": "AAPL", "c": 1}, {"ticker": "MSFT", "c": 2}, {"c": 3}]'
    results = search_results(ExecutePython(FINNHUB, output))
    assert [(r.source, r.claim) for r in results] == [
        ("silvia://market-data/finnhub/AAPL", TargetClaim(MarketDataTarget("AAPL"))),
        ("silvia://market-data/finnhub/MSFT", TargetClaim(MarketDataTarget("MSFT"))),
        ("silvia://market-data/finnhub", TargetClaim(AnalysisTarget())),
    ]


def test_a_finnhub_payload_without_its_ticker_is_live_data_analysis() -> None:
    for output in ["{'c': 227.48}", '{"c": 227.48}', "price 227.48"]:
        (result,) = search_results(ExecutePython(FINNHUB, output))
        assert (result.source, result.title) == ("silvia://market-data/finnhub", "Live data"), (
            output
        )
        assert result.claim == TargetClaim(AnalysisTarget()), output


def test_finnhub_named_only_in_the_payload_still_counts() -> None:
    (result,) = search_results(ExecutePython("print(data)", "finnhub quote: 227.48"))
    assert result.source == "silvia://market-data/finnhub"


def test_output_without_finnhub_is_analysis_even_with_a_ticker_field() -> None:
    (result,) = search_results(ExecutePython("print(x)", '{"symbol": "AAPL"}', title="Math"))
    assert (result.source, result.title) == ("silvia://analysis", "Math")
    assert result.claim == TargetClaim(AnalysisTarget())


def test_an_exa_article_is_cited_by_its_url_as_web() -> None:
    article = ExaArticle("https://example.com/a", "An article", "Body")
    results = search_results(ExecutePython("exa.search(...)", "", articles=(article,)))
    assert [(r.source, r.claim) for r in results] == [
        ("https://example.com/a", TargetClaim(WebTarget("https://example.com/a")))
    ]


# -- the three library readers --------------------------------------------------


def test_library_reads_with_and_without_a_source_url() -> None:
    cases: list[tuple[Any, str, Any]] = [
        (read_tax_authority, "silvia://tax-authority/", TaxReferenceTarget),
        (read_credit_card_document, "silvia://credit-card-corpus/", CardDocumentTarget),
        (read_mortgage_authority, "silvia://mortgage-code/", MortgageReferenceTarget),
    ]
    for case in cases:
        read, prefix, kind = case
        (with_url,) = search_results(read("a/b.md", "text", source_url="https://gov.example/b"))
        assert (with_url.source, with_url.claim) == (
            "https://gov.example/b",
            TargetClaim(kind("https://gov.example/b")),
        ), case
        (without,) = search_results(read("/a/b.md", "text"))
        assert (without.source, without.claim) == (prefix + "a/b.md", TargetClaim(kind(None))), case
        (not_http,) = search_results(read("a/b.md", "text", source_url="ftp://gov.example/b"))
        assert not_http.source == prefix + "a/b.md", case


def test_library_title_comes_from_the_sidecar_or_the_file_name() -> None:
    (titled,) = search_results(read_tax_authority("irs/p590a.md", "t", title="Publication 590-A"))
    (untitled,) = search_results(read_tax_authority("irs/p590a.md", "t"))
    assert (titled.title, untitled.title) == ("Publication 590-A", "p590a.md")


def test_download_urls_are_made_readable() -> None:
    for url, readable in [
        (
            "https://www.ecfr.gov/api/versioner/v1/full/2024-06-01/title-12.xml?part=1026",
            "https://www.ecfr.gov/current/title-12/part-1026",
        ),
        (
            "https://www.ecfr.gov/api/versioner/v1/full/2024-06-01/title-26.xml?part=1&section=1.408-2",
            "https://www.ecfr.gov/current/title-26/section-1.408-2",
        ),
        (
            "https://uscode.house.gov/download/releasepoints/us/pl/118/78/xml_usc26@118-78.zip",
            "https://uscode.house.gov/view.xhtml?path=/prelim@title26&edition=prelim",
        ),
        ("https://www.irs.gov/publications/p590a", "https://www.irs.gov/publications/p590a"),
    ]:
        assert humanize_citation_url(url) == readable, (url, readable)
        (result,) = search_results(read_mortgage_authority("x.xml", "t", source_url=url))
        assert result.claim == TargetClaim(MortgageReferenceTarget(readable)), (url, readable)


# -- search_web -----------------------------------------------------------------


def test_search_web_result_urls_are_web_and_the_search_source_has_no_target() -> None:
    results = search_results(
        SearchWeb("q", (WebResult("Page", "text", "https://example.com/p"), WebResult("Sum", "s")))
    )
    assert [(r.source, r.claim) for r in results] == [
        ("https://example.com/p", TargetClaim(WebTarget("https://example.com/p"))),
        ("silvia://search/search_web", NoTarget()),
    ]


# -- one meaning per source per turn -------------------------------------------


def test_a_later_call_writing_the_same_account_source_pools_its_accounts() -> None:
    first = ExecuteSql(rows=(_row("Credit card", source="plaid", source_account_id=ID_A),))
    second = ExecuteSql(rows=(_row("Credit card", source="plaid", source_account_id=ID_B),))
    assert _target_after(first, second) == {
        "silvia://your-account/credit-card": AccountsTarget(
            (AccountRef(ID_A, "plaid"), AccountRef(ID_B, "plaid"))
        )
    }


def test_pooling_the_same_account_again_keeps_one_account_and_learns_its_provider() -> None:
    first = ExecuteSql(rows=(_row("Checking", source_account_id=ID_A),))
    second = ExecuteSql(rows=(_row("Checking", source="plaid", source_account_id=ID_A),))
    assert _target_after(first, second) == {
        "silvia://your-account/checking": AccountTarget(ID_A, "plaid")
    }


def test_a_label_written_with_and_without_ids_is_untyped() -> None:
    for order in ["ids first", "ids last"]:
        with_ids = ExecuteSql(rows=(_row("Checking", source_account_id=ID_A),))
        without = ExecuteSql(rows=(_row("Checking"),))
        calls = (with_ids, without) if order == "ids first" else (without, with_ids)
        assert _target_after(*calls) == {"silvia://your-account/checking": None}, order


def test_untyped_stays_untyped_even_when_a_later_write_agrees_with_the_first() -> None:
    with_ids = ExecuteSql(rows=(_row("Checking", source_account_id=ID_A),))
    without = ExecuteSql(rows=(_row("Checking"),))
    assert _target_after(with_ids, without, with_ids) == {"silvia://your-account/checking": None}


def test_a_url_cited_as_web_and_as_a_tax_document_is_untyped() -> None:
    url = "https://www.irs.gov/publications/p590a"
    web = SearchWeb("q", (WebResult("IRA", "text", url),))
    tax = read_tax_authority("irs/p590a.md", "text", source_url=url)
    assert _target_after(web, tax) == {url: None}
    assert _target_after(tax, web) == {url: None}


def test_the_same_target_written_twice_stays_typed() -> None:
    url = "https://www.irs.gov/publications/p590a"
    tax = read_tax_authority("irs/p590a.md", "text", source_url=url)
    portfolio = ExecuteSql(rows=({"total": "1"},), label_column=None)
    assert _target_after(tax, tax, portfolio, portfolio) == {
        url: TaxReferenceTarget(url),
        "silvia://your-portfolio": PortfolioTarget(),
    }


# -- a played turn: targets at the moment each citation streams ----------------


def _cards(account_id: str | None) -> ExecuteSql:
    columns = {} if account_id is None else {"source": "plaid", "source_account_id": account_id}
    return ExecuteSql(rows=(_row("Credit card", **columns),))


CARDS = "silvia://your-account/credit-card"


def _kinds(citations: tuple[dict[str, object], ...]) -> list[object]:
    return [c.get("target", {}).get("kind") for c in citations]  # type: ignore[attr-defined]


def test_a_citation_streams_the_target_its_source_has_at_that_moment() -> None:
    turn = play((_cards(ID_A), Say("a"), Cite(CARDS), _cards(ID_B), Say("b"), Cite(CARDS)))
    assert _kinds(turn.inline_citations) == ["account", "accounts"]
    # The summary gives every citation its final target.
    assert _kinds(turn.summary) == ["accounts", "accounts"]


def test_after_a_disagreement_citations_stream_untyped_and_the_summary_is_untyped() -> None:
    turn = play((_cards(ID_A), Say("a"), Cite(CARDS), _cards(None), Say("b"), Cite(CARDS)))
    assert _kinds(turn.inline_citations) == ["account", None]
    assert _kinds(turn.summary) == [None, None]
    assert all("target" not in c for c in turn.summary)


def test_an_old_checkpoint_resumes_with_an_empty_registry() -> None:
    checkpoint = Checkpoint((_cards(ID_A),), carries_targets=False)
    turn = play((Say("a"), Cite(CARDS)), checkpoint)
    assert _kinds(turn.inline_citations) == [None]
    assert turn.final_targets == {CARDS: None}


def test_a_current_checkpoint_carries_its_registry() -> None:
    checkpoint = Checkpoint((_cards(ID_A),), carries_targets=True)
    turn = play((Say("a"), Cite(CARDS)), checkpoint)
    assert _kinds(turn.inline_citations) == ["account"]


def test_after_an_old_checkpoint_a_fresh_write_registers_normally() -> None:
    checkpoint = Checkpoint((_cards(ID_A),), carries_targets=False)
    turn = play((_cards(ID_B), Say("a"), Cite(CARDS)), checkpoint)
    assert turn.final_targets[CARDS] == {
        "kind": "account",
        "accountId": ID_B,
        "provider": "plaid",
    }


def test_after_an_old_checkpoint_a_source_streams_untyped_then_typed() -> None:
    # The registry starts empty, so the checkpoint's label is not in it: citing it
    # streams untyped, and a fresh write is its first write, which types it. The
    # stream keeps each citation's target then; the summary gives the final one.
    checkpoint = Checkpoint((_cards(ID_A),), carries_targets=False)
    turn = play((Say("a"), Cite(CARDS), _cards(ID_A), Say("b"), Cite(CARDS)), checkpoint)
    final = {"kind": "account", "accountId": ID_A, "provider": "plaid"}
    assert [c.get("target") for c in turn.inline_citations] == [None, final]
    assert [c.get("target") for c in turn.summary] == [final, final]
    assert turn.final_targets == {CARDS: final}


def test_a_turn_cites_only_sources_it_wrote() -> None:
    with pytest.raises(ScriptError, match="no tool call"):
        play((Say("a"), Cite(CARDS)))


def test_citation_fields_follow_anthropics_search_result_location() -> None:
    rows = (_row("Credit card", account_id=ID_A), _row("Credit card", account_id=ID_B))
    turn = play((_cards(ID_A), ExecuteSql(rows=rows), Say("x"), Cite(CARDS, 0, 2)))
    (citation,) = turn.inline_citations
    assert citation["search_result_index"] == 1  # counted across the turn's calls
    assert (citation["start_block_index"], citation["end_block_index"]) == (0, 2)  # end exclusive
    assert citation["cited_text"] == "\n".join(
        f"account_name: Credit card, balance: 10.00, account_id: {i}" for i in (ID_A, ID_B)
    )
    with pytest.raises(ScriptError, match="blocks"):
        play((ExecuteSql(rows=rows), Say("x"), Cite(CARDS, 1, 3)))


def test_the_summary_deduplicates_while_inline_keeps_every_citation() -> None:
    turn = play((_cards(ID_A), Say("a"), Cite(CARDS), Say("b"), Cite(CARDS)))
    assert len(turn.inline_citations) == 2
    assert len(turn.summary) == 1


def test_the_final_message_carries_no_target() -> None:
    turn = play((_cards(ID_A), Say("a"), Cite(CARDS), Say("b")))
    content: list[dict[str, Any]] = turn.message["content"]  # type: ignore[assignment]
    assert [block["text"] for block in content] == ["a", "b"]
    assert [citation["source"] for citation in content[0]["citations"]] == [CARDS]
    assert "citations" not in content[1]
    assert "target" in turn.summary[0]
    assert "target" not in json.dumps(turn.message)
