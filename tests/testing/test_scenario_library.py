"""The built-in scenarios (names, `silvia serve --list`, library files, the doc's table
covered, no vendor named, what each fault does to a turn), then the doc's target rules
("What the server cites") one at a time, read off `expected_turn` of a small scenario.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
    parse_citation_target,
)
from silvia_client.cli import main
from silvia_client.testing import (
    BROKEN_SCENARIOS,
    DEFAULT_SCENARIO,
    SCENARIOS,
    Checkpoint,
    Cite,
    ExaArticle,
    ExecutePython,
    ExecuteSql,
    ExpectedTurn,
    Say,
    Scenario,
    ScriptError,
    ScriptItem,
    SearchWeb,
    WebResult,
    expected_turn,
    humanize_citation_url,
    label_slug,
    read_credit_card_document,
    read_mortgage_authority,
    read_tax_authority,
    scenarios,
)
from silvia_client.testing._library import read_library

TABLE_SOURCES = [
    r"silvia://your-account/[a-z0-9-]+", r"silvia://your-portfolio", r"silvia://analysis",
    r"silvia://market-data/finnhub/[A-Z]+", r"silvia://market-data/finnhub",
    r"silvia://tax-authority/.+", r"silvia://credit-card-corpus/.+", r"silvia://mortgage-code/.+",
    r"silvia://search/search_web", r"https://.+",
]  # fmt: skip


def without_providers(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_providers(v) for k, v in value.items() if k != "provider"}
    if isinstance(value, (list, tuple)):
        return [without_providers(item) for item in value]
    return value


def test_the_library_is_well_named_listed_and_read_covers_the_doc_and_names_no_vendor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A custom scenario is checked when built (a script citing what it never wrote, too:
    # `play`, below).
    with pytest.raises(ValueError, match="name"):
        Scenario("has space", "d", script=())
    with pytest.raises(ValueError, match="one-line"):
        Scenario("two-lines", "a\nb", script=())
    library = scenarios()
    assert len({s.name for s in library}) == len(library) == len(SCENARIOS)
    assert library[0].name == DEFAULT_SCENARIO == "demo"
    with pytest.raises(TypeError):
        SCENARIOS["mine"] = SCENARIOS["demo"]  # type: ignore[index]
    # A line each: its name, then its description (so one line, not blank).
    assert main(["serve", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    playable = {**SCENARIOS, **BROKEN_SCENARIOS}
    assert len(lines) == len(playable)
    for line, (name, scenario) in zip(lines, playable.items(), strict=True):
        assert line.split(maxsplit=1) == [name, scenario.description]
    assert main(["serve", "--scenario", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    # A library file that does not fit is refused naming the file and the scenario.
    misfits: list[tuple[dict[str, object], str]] = [
        ({"script": [{"say": "Hi", "colour": "red"}]}, "unexpected keyword argument 'colour'"),
        ({"script": [{"tool": "execute_sql"}]}, "missing 1 required positional argument: 'rows'"),
        ({"script": [{"text": "Hi"}]}, "an item with none of `say`, `cite`, `tool`"),
        ({"script": [{"tool": "read_everything", "path": "p", "text": "t"}]}, "not a library"),
        ({"script": [{"cite": "silvia://analysis"}]}, "ScriptError"),
        ({"script": "demo"}, "no scenario 'demo' above it"),
        ({"fault": {"kind": "flood"}}, "no fault of kind 'flood'"),
        ({"fault": {"kind": "stall", "minutes": 5}}, "unexpected keyword argument 'minutes'"),
        ({"checkpoint": {"tool_calls": [], "targets": True}}, "unexpected keyword argument"),
    ]
    for misfit, message in misfits:
        text = json.dumps(
            [{"name": "ok", "description": "Fine."}, {"name": "a", "description": "d", **misfit}]
        )
        with pytest.raises(ValueError, match=r"^scenarios/mine\.json, scenario 'a': ") as raised:
            read_library([("mine.json", text)])
        assert message in str(raised.value), misfit
    # Every source pattern and target kind of the doc is covered, and no vendor named.
    readers = ("tax_reference", "card_document", "mortgage_reference")
    kinds: set[object] = set()
    patterns: set[str] = set()
    for name, scenario in SCENARIOS.items():
        expected = expected_turn(scenario, idle_timeout=1000.0)
        for source, target in expected.final_targets.items():
            kind = None if target is None else target["kind"]
            # Each library reader's both rows: with a URL and with url null.
            kinds.add((kind, target["url"] is None) if target and kind in readers else kind)
            patterns.update(p for p in TABLE_SOURCES if re.fullmatch(p, source))
        # A vendor's name appears only in a target's provider.
        sent = (expected.text, expected.citations, expected.inline_citations, expected.message)
        text = json.dumps(without_providers([*sent, expected.error, expected.unknown_events]))
        assert not any(vendor in text.lower() for vendor in ("plaid", "snaptrade", "manual")), name
    assert patterns == set(TABLE_SOURCES)
    assert kinds == {
        None, "web", "market_data", "analysis", "account", "accounts", "portfolio",
        *((kind, url_is_null) for kind in readers for url_is_null in (True, False)),
    }  # fmt: skip


def kinds(citations: tuple[dict[str, object], ...]) -> list[object]:
    return [c["target"]["kind"] if "target" in c else None for c in citations]  # type: ignore[index]


def test_rule_fault_and_status_scenarios_expect_what_the_doc_implies() -> None:
    for name, inline, summary in [
        ("pooling", ["account", "accounts"], ["accounts", "accounts"]),
        ("untyped-ids-then-none", ["account", None], [None, None]),
        ("untyped-none-then-ids", [None, None], [None, None]),
        ("untyped-web-vs-tax", ["web", None], [None, None]),
        ("checkpoint-legacy", [None, "market_data"], [None, "market_data"]),
        ("checkpoint-current", ["account", "market_data"], ["account", "market_data"]),
        # After an old checkpoint, a fresh write registers the label: untyped, then typed.
        ("checkpoint-fresh-write", [None, "account"], ["account", "account"]),
        ("legacy-prompt", [None, "account"], [None, "account"]),
        ("account-row-without-id", [None], [None]),
        ("account-crypto-source", ["account", None], ["account", None]),
    ]:
        expected = expected_turn(SCENARIOS[name])
        assert kinds(expected.inline_citations) == inline, name
        assert kinds(expected.citations) == summary, name
    # The id scenarios type the valid ids, each with its columns' provider.
    targets = expected_turn(SCENARIOS["account-id-rule"]).final_targets
    typed = {source for source, target in targets.items() if target is not None}
    assert typed == {"silvia://your-account/shortest-id", "silvia://your-account/longest-id"}
    targets = expected_turn(SCENARIOS["account-id-columns"]).final_targets
    providers = {source.rsplit("/", 1)[1]: t["provider"] for source, t in targets.items() if t}
    assert providers == {
        "checking": "plaid",
        "savings": None,
        "brokerage": "snaptrade",
        "house": "manual",
        "car": "manual",
        "money-market": None,
    }
    # The faults and statuses: what each does to a turn.
    demo = expected_turn(SCENARIOS["demo"])
    dropped = expected_turn(SCENARIOS["fault-drop"])
    assert (dropped.fault, dropped.complete) == ("drop", False)
    assert dropped.inline_citations
    assert not dropped.citations
    assert demo.text.startswith(dropped.text)
    assert dropped.text != demo.text
    # A stall ends the view only when longer than the idle timeout.
    stalled = expected_turn(SCENARIOS["fault-stall"], idle_timeout=1.0)
    assert (stalled.fault, stalled.complete) == ("stall", False)
    patient = expected_turn(SCENARIOS["fault-stall"], idle_timeout=1000.0)
    assert (patient.complete, patient.text) == (True, demo.text)
    error = expected_turn(SCENARIOS["fault-error-event"])
    assert error.error == {
        "type": "overloaded_error",
        "message": "The model is overloaded. Try again in a moment.",
    }
    assert not error.complete
    assert error.text
    no_done = expected_turn(SCENARIOS["fault-no-done"])
    assert not no_done.complete
    assert no_done.citations == demo.citations
    # Unknown and malformed events leave the turn whole.
    unknown = expected_turn(SCENARIOS["fault-unknown-event"])
    assert unknown.complete
    assert unknown.unknown_events == (
        ("tool_progress", {"tool": "execute_sql", "status": "running"}),
    )
    for name in ("fault-malformed-json", "fault-malformed-shape"):
        malformed = expected_turn(SCENARIOS[name])
        assert (malformed.fault, malformed.text) == ("malformed_event", demo.text)
    limited = expected_turn(SCENARIOS["status-429"])
    assert (limited.status, limited.retry_after, limited.complete) == (429, 2.0, False)
    assert limited.error == {"type": "rate_limit_error", "message": "Too many requests."}
    for status in (401, 403, 404, 500):
        assert expected_turn(SCENARIOS[f"status-{status}"]).status == status


ID_A = "AAAAaaaa1111bbbb2222"
ID_B = "BBBBbbbb3333cccc4444"
CARDS = "silvia://your-account/credit-card"
CHECKING = "silvia://your-account/checking"
FINNHUB = "import finnhub\nclient = finnhub.Client(api_key=KEY)"
IRA = "https://www.irs.gov/publications/p590a"


def row(label: str = "Checking", /, **columns: object) -> dict[str, object]:
    return {"account_name": label, "balance": "10.00", **columns}


def play(*script: ScriptItem, checkpoint: Checkpoint | None = None) -> ExpectedTurn:
    return expected_turn(Scenario("t", "d", script=script, checkpoint=checkpoint))


def targets(*calls: ScriptItem) -> dict[str, CitationTarget | None]:
    """Each source the calls write, in order, with its final target."""
    return {s: parse_citation_target(t) for s, t in play(*calls).final_targets.items()}


def one(call: ScriptItem) -> CitationTarget | None:
    [(_, target)] = targets(call).items()
    return target


def cited(call: ScriptItem, source: str, *blocks: int) -> dict[str, Any]:
    """The citation of `source` after `call`, as it streams."""
    [citation] = play(call, Say("x"), Cite(source, *blocks)).inline_citations
    return citation


def cards(account_id: str | None) -> ExecuteSql:
    columns = {} if account_id is None else {"source": "plaid", "source_account_id": account_id}
    return ExecuteSql(rows=(row("Credit card", **columns),))


def test_each_tool_call_gives_the_targets_of_the_sources_it_writes() -> None:
    call = ExecuteSql(rows=(row("Checking"), row("Credit card"), row("Checking")))
    assert list(targets(call)) == [CHECKING, CARDS]
    assert cited(call, CHECKING, 0, 2)["title"] == "Checking"  # two rows: two blocks
    assert cited(call, CARDS)["title"] == "Credit card"
    with pytest.raises(ScriptError, match="blocks"):
        cited(call, CARDS, 0, 2)
    for label, slug in [
        ("Credit card", "credit-card"),
        ("  Sapphire  Preferred!", "sapphire-preferred"),
        ("401(k)", "401-k"),
    ]:
        assert label_slug(label) == slug, label
    with pytest.raises(ValueError, match="label"):
        label_slug("!!!")
    with pytest.raises(ValueError, match="account_name"):
        one(ExecuteSql(rows=({"balance": "1.00"},)))
    # One account gives `account`, several `accounts` in row order, one unknown none.
    same = row("Brokerage", source="snaptrade", source_account_id=ID_A)
    assert one(ExecuteSql(rows=(same, same))) == AccountTarget(ID_A, "snaptrade")
    rows = (
        row("Credit card", source="plaid", source_account_id=ID_B),
        row("Credit card", source="plaid", source_account_id=ID_A),
    )
    assert one(ExecuteSql(rows=rows)) == AccountsTarget(
        (AccountRef(ID_B, "plaid"), AccountRef(ID_A, "plaid"))
    )
    missing_ids: list[dict[str, object]] = [{"source_account_id": None}, {}, {"account_id": "12"}]
    for missing in missing_ids:
        rows = (row("Credit card", source_account_id=ID_A), row("Credit card", **missing))
        assert one(ExecuteSql(rows=rows)) is None, missing
    portfolio = ExecuteSql(rows=({"total": "1.00"},), label_column=None)
    assert targets(portfolio) == {"silvia://your-portfolio": PortfolioTarget()}
    crypto = row("Crypto wallet", source="crypto", source_account_id=ID_A, account_id=ID_B)
    assert one(ExecuteSql(rows=(crypto,))) is None  # a crypto wallet names no account
    # Legacy prompt rows without id columns are untyped, but a selected id counts.
    assert targets(ExecuteSql(rows=(row("Checking"), row("Savings", account_id=ID_A)))) == {
        CHECKING: None,
        "silvia://your-account/savings": AccountTarget(ID_A, None),
    }
    # Python, exa, search and the library readers give the targets of their sources.
    assert targets(ExecutePython(FINNHUB, '{"symbol": "aapl", "c": 1.0}')) == {
        "silvia://market-data/finnhub/AAPL": MarketDataTarget("AAPL")
    }
    output = '[{"symbol": "AAPL", "c": 1}, {"ticker": "MSFT", "c": 2}, {"c": 3}]'
    assert targets(ExecutePython(FINNHUB, output)) == {
        "silvia://market-data/finnhub/AAPL": MarketDataTarget("AAPL"),
        "silvia://market-data/finnhub/MSFT": MarketDataTarget("MSFT"),
        "silvia://market-data/finnhub": AnalysisTarget(),
    }
    live = "silvia://market-data/finnhub"
    for output in ["{'c': 227.48}", '{"c": 227.48}', "price 227.48"]:
        assert targets(ExecutePython(FINNHUB, output)) == {live: AnalysisTarget()}, output
        assert cited(ExecutePython(FINNHUB, output), live)["title"] == "Live data"
    # Finnhub named only in the payload still counts.
    assert list(targets(ExecutePython("print(data)", "finnhub quote: 227.48"))) == [live]
    math = ExecutePython("print(x)", '{"symbol": "AAPL"}', title="Math")
    assert targets(math) == {"silvia://analysis": AnalysisTarget()}
    assert cited(math, "silvia://analysis")["title"] == "Math"
    article = ExaArticle("https://example.com/a", "An article", "Body")
    assert targets(ExecutePython("exa.search(...)", "", articles=(article,))) == {
        "https://example.com/a": WebTarget("https://example.com/a")
    }
    results = (WebResult("Page", "text", "https://example.com/p"), WebResult("Sum", "s"))
    assert targets(SearchWeb("q", results)) == {
        "https://example.com/p": WebTarget("https://example.com/p"),
        "silvia://search/search_web": None,  # the search itself has no target
    }
    # The library readers, with and without a source URL (made readable).
    for read, prefix, kind in [
        (read_tax_authority, "silvia://tax-authority/", TaxReferenceTarget),
        (read_credit_card_document, "silvia://credit-card-corpus/", CardDocumentTarget),
        (read_mortgage_authority, "silvia://mortgage-code/", MortgageReferenceTarget),
    ]:
        url = "https://gov.example/b"
        assert targets(read("a/b.md", "text", source_url=url)) == {url: kind(url)}, prefix
        assert targets(read("/a/b.md", "text")) == {prefix + "a/b.md": kind(None)}, prefix
        assert list(targets(read("a/b.md", "t", source_url="ftp://gov.example/b"))) == [
            prefix + "a/b.md"
        ]
    source = "silvia://tax-authority/irs/p590a.md"
    titled = read_tax_authority("irs/p590a.md", "t", title="Publication 590-A")
    assert cited(titled, source)["title"] == "Publication 590-A"
    assert cited(read_tax_authority("irs/p590a.md", "t"), source)["title"] == "p590a.md"
    # A download URL is cited as the page a reader can open.
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
        (IRA, IRA),
    ]:
        assert humanize_citation_url(url) == readable, url
        document = read_mortgage_authority("x.xml", "t", source_url=url)
        assert targets(document) == {readable: MortgageReferenceTarget(readable)}, url


def test_one_meaning_per_source_per_turn_a_checkpoints_registry_and_the_citation_fields() -> None:
    # A later call writing the same account source pools its accounts.
    assert targets(cards(ID_A), cards(ID_B)) == {
        CARDS: AccountsTarget((AccountRef(ID_A, "plaid"), AccountRef(ID_B, "plaid")))
    }
    # Pooling the same account again keeps one account and learns its provider.
    first = ExecuteSql(rows=(row("Checking", source_account_id=ID_A),))
    again = ExecuteSql(rows=(row("Checking", source="plaid", source_account_id=ID_A),))
    assert targets(first, again) == {CHECKING: AccountTarget(ID_A, "plaid")}
    # A label written with and without ids is untyped, and stays so when a later write agrees.
    without = ExecuteSql(rows=(row("Checking"),))
    for calls in [(first, without), (without, first), (first, without, first)]:
        assert targets(*calls) == {CHECKING: None}
    web = SearchWeb("q", (WebResult("IRA", "text", IRA),))
    tax = read_tax_authority("irs/p590a.md", "text", source_url=IRA)
    assert targets(web, tax) == targets(tax, web) == {IRA: None}
    portfolio = ExecuteSql(rows=({"total": "1"},), label_column=None)
    assert targets(tax, tax, portfolio, portfolio) == {
        IRA: TaxReferenceTarget(IRA),
        "silvia://your-portfolio": PortfolioTarget(),
    }
    # A checkpoint resumes with its registry only if it carries targets.
    final = {"kind": "account", "accountId": ID_A, "provider": "plaid"}
    for carries, streamed in [(False, [None]), (True, [final])]:
        checkpoint = Checkpoint((cards(ID_A),), carries_targets=carries)
        turn = play(Say("a"), Cite(CARDS), checkpoint=checkpoint)
        assert [c.get("target") for c in turn.inline_citations] == streamed, carries
    old = Checkpoint((cards(ID_A),), carries_targets=False)
    turn = play(cards(ID_B), Say("a"), Cite(CARDS), checkpoint=old)
    assert turn.final_targets[CARDS] == {**final, "accountId": ID_B}  # a fresh write registers
    # After an old checkpoint a source streams untyped, then typed by its first fresh write;
    # the summary gives the final target.
    turn = play(Say("a"), Cite(CARDS), cards(ID_A), Say("b"), Cite(CARDS), checkpoint=old)
    assert [c.get("target") for c in turn.inline_citations] == [None, final]
    assert [c.get("target") for c in turn.citations] == [final, final]
    assert turn.final_targets == {CARDS: final}
    # The citation fields follow Anthropic's search_result_location.
    with pytest.raises(ScriptError, match="no tool call"):
        play(Say("a"), Cite(CARDS))  # a turn cites only sources it wrote
    rows = (row("Credit card", account_id=ID_A), row("Credit card", account_id=ID_B))
    turn = play(cards(ID_A), ExecuteSql(rows=rows), Say("x"), Cite(CARDS, 0, 2))
    (citation,) = turn.inline_citations
    assert citation["search_result_index"] == 1  # counted across the turn's calls
    assert (citation["start_block_index"], citation["end_block_index"]) == (0, 2)  # end exclusive
    assert citation["cited_text"] == "\n".join(
        f"account_name: Credit card, balance: 10.00, account_id: {i}" for i in (ID_A, ID_B)
    )
    # The summary deduplicates, inline keeps every citation; the final message has no target.
    turn = play(cards(ID_A), Say("a"), Cite(CARDS), Say("b"), Cite(CARDS), Say("c"))
    assert (len(turn.inline_citations), len(turn.citations)) == (2, 1)
    assert turn.message is not None
    content: list[dict[str, Any]] = turn.message["content"]  # type: ignore[assignment]
    assert [block["text"] for block in content] == ["a", "b", "c"]
    assert [citation["source"] for citation in content[0]["citations"]] == [CARDS]
    assert "citations" not in content[2]
    assert "target" in turn.citations[0]
    assert "target" not in json.dumps(turn.message)
