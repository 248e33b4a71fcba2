"""`resolve_citation`, `is_http_url`, `encode_uri_component` and `account_href`: labels and links.

The invariant: for any row, every link is an http(s) URL (the target's, or the legacy
source's) or the app's `/accounts/<encodeURIComponent(id)>`, behind `web_url` when
one is given. The hostile lists below (`NOT_HTTP_URLS`, `NOT_LINK_SOURCES`) are kept as
examples of that property: a widened scheme check fails them.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import string
import subprocess
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    CardDocumentTarget,
    Citation,
    InvalidAccountIdError,
    MarketDataTarget,
    MortgageReferenceTarget,
    ResolvedCitation,
    TaxReferenceTarget,
    WebTarget,
    account_href,
    encode_uri_component,
    is_http_url,
    parse_citation_target,
    resolve_citation,
)
from silvia_client.citations._links import web_origin
from silvia_client.errors import ConfigurationError, SilviaError

from .strategies import (
    BASE,
    DOT_SEGMENTS,
    ID,
    ID2,
    MODELS,
    PROPERTY,
    PROVIDER_NAMES,
    SURROGATES,
    URL_KINDS,
    citation_rows,
    cite,
    targets,
)

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Scheme-shaped strings that are not http(s) URLs: each would be a script, another
# protocol, or a backslash form a browser may read as a URL of its own choosing.
NOT_HTTP_URLS = [
    *("javascript://example.com/%0Aalert(1)", "javascript://%0Aalert(document.cookie)"),
    *("JAVASCRIPT://example.com/%0aalert(1)", "JaVaScRiPt://example.com/%0Aalert(1)"),
    *("vbscript://example.com/%0Amsgbox(1)", "data://example.com/,<script>alert(1)</script>"),
    *("httpx://example.com/", "https2://example.com/", "xhttps://example.com/"),
    *("wss://example.com/socket", "ws://example.com/socket", "ftp://example.com/"),
    *("https:\\\\example.com\\", "http:\\\\example.com/path", "https:/\\example.com/"),
    *("https:\\/example.com/", "https:example.com", "https:/example.com", "https//example.com"),
    *(" https://example.com/", "https://example.com/\n", "\x00https://example.com/"),
]
# Sources that are no http(s) URL: a script, a file, protocol-relative, the app's own
# path, the legacy silvia:// scheme, a space in the host, no host at all.
NOT_LINK_SOURCES = [
    *("javascript:alert(1)", "JAVASCRIPT:alert(1)", " javascript:alert(1)", "vbscript:x"),
    *("data:text/html,<script>alert(1)</script>", "file:///etc/passwd", "//evil.example/"),
    *("/accounts/abc", "silvia://your-portfolio", "https://exa mple.com", "https://"),
]
WEBS = ["", BASE, BASE + "/app/"]  # no origin, an origin, one with a path


def _hostile_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for url in NOT_HTTP_URLS:
        rows += [
            {"source": url, "title": "T", "target": {"kind": k, "url": url}}
            for k in ("web", *URL_KINDS)
        ]
        rows.append({"source": url})
    rows += [{"source": source} for source in NOT_LINK_SOURCES]
    rows += [{"source": "s", "target": {"kind": "account", "accountId": i}} for i in DOT_SEGMENTS]
    rows.append(
        {"source": "s", "target": {"kind": "accounts", "accounts": [{"accountId": "\udc00"}]}}
    )
    many = [{"accountId": f"id/{n}"} for n in range(30)]  # a link for each, however many
    rows.append({"source": "s", "title": "Cards", "target": {"kind": "accounts", "accounts": many}})
    return rows


def _hostile(test: Any) -> Any:
    for row in _hostile_rows():
        for model in MODELS:
            test = example(model, row, "")(test)
    return example(Citation, {"source": "https://e.com/x", "title": BIDI_CONTROLS}, BASE)(test)


@PROPERTY
@given(
    st.sampled_from(MODELS),
    st.one_of(citation_rows(), citation_rows(target=targets)),  # wire targets, and hand-built
    st.sampled_from(WEBS),
)
@_hostile
def test_every_link_is_http_or_an_encoded_account_page(
    model: type[Citation], row: dict[str, Any], web: str
) -> None:
    citation = model.model_validate(row)
    resolved = resolve_citation(citation, web_url=web)
    parts = urlsplit(web)
    origin = f"{parts.scheme}://{parts.netloc}" if web else ""
    target = citation.target
    refs = target.accounts if isinstance(target, AccountsTarget) else ()
    ids = [target.account_id] if isinstance(target, AccountTarget) else [r.account_id for r in refs]
    pages = []
    for account_id in ids:
        with contextlib.suppress(InvalidAccountIdError):
            pages.append(origin + account_href(account_id))
    for text in (resolved.label, *(link.label for link in resolved.links)):
        assert text
        assert not set(BIDI_CONTROLS) & set(text), text
    hrefs = [link.href for link in resolved.links]
    assert resolved.href == (hrefs[0] if hrefs else None)
    if ids:  # account pages, each id encoded, never a dot segment
        assert hrefs == pages
        assert all(href.rsplit("/", 1)[1] not in ("", ".", "..") for href in hrefs)
    else:  # the target's URL or the legacy source, http(s)
        for href in hrefs:
            assert is_http_url(href), href
            assert urlsplit(href).scheme.lower() in ("http", "https"), href
            assert href in (getattr(target, "url", None), citation.source), href


def test_not_http_urls_are_no_url_and_no_link_even_hand_built() -> None:
    # Never an http(s) URL: not parsed on the wire, and no link in a hand-built target.
    for url in NOT_HTTP_URLS:
        assert not is_http_url(url), url
        for kind in ("web", *URL_KINDS):
            assert parse_citation_target({"kind": kind, "url": url}) is None, (kind, url)
        for target_type in (
            WebTarget,
            TaxReferenceTarget,
            CardDocumentTarget,
            MortgageReferenceTarget,
        ):
            target = target_type(url)
            citation = Citation(source=url, title="T").model_copy(update={"target": target})
            assert citation.target is target
            assert resolve_citation(citation).links == (), target
    fallback = Citation(source="https://example.com/fallback")  # a target's bad URL wins
    for target in (WebTarget("data:text/html,x"), CardDocumentTarget("javascript:alert(1)")):
        assert resolve_citation(fallback.model_copy(update={"target": target})).links == ()


# --------------------------------------------------------------------------- labels

DOC = "https://www.example.gov/doc?id=1#s2"
SLASHED = {"kind": "account", "accountId": "abc/def ghi"}
SLASHED_HREF = "/accounts/abc%2Fdef%20ghi"
TWO = {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": ID2}]}
SOURCES = ("https://example.com/", "HTTPS://EXAMPLE.COM/", "Http://example.com:8080/a?b#c")
ANALYSIS = ["silvia://analysis", "silvia://market-data/finnhub/AAPL"]
ANALYSIS += ["silvia://market-data/finnhub/", "https://example.com/page"]
# (source, title, wire target, its label, its links as (href, label)).
LABELS: list[tuple[str, str | None, Any, str, list[tuple[str, str]]]] = [
    *(("s", "Doc", {"kind": k, "url": DOC}, "Doc", [(DOC, "Doc")]) for k in ("web", *URL_KINDS)),
    *(("s", "IRC §1", {"kind": k, "url": None}, "IRC §1", []) for k in URL_KINDS),
    *(
        ("s", "Checking", {**SLASHED, "provider": p}, "Checking", [(SLASHED_HREF, "Checking")])
        for p in (*PROVIDER_NAMES, None)
    ),
    (
        *("s", "Credit card", TWO, "Credit card"),
        [(f"/accounts/{ID}", "Credit card (1 of 2)"), (f"/accounts/{ID2}", "Credit card (2 of 2)")],
    ),
    *(("s", t, {"kind": "market_data", "ticker": "AAPL"}, "AAPL", []) for t in (None, "Apple", "")),
    *(("silvia://your-portfolio", t, {"kind": "portfolio"}, "Portfolio", []) for t in (None, "")),
    ("silvia://your-portfolio", "Holdings", {"kind": "portfolio"}, "Holdings", []),
    *(
        (source, title, {"kind": "analysis"}, label, [])
        for title in (None, "Finnhub quote", "")
        for source, label in [("silvia://market-data/finnhub", "Live data")]
        + [(source, "Analysis") for source in ANALYSIS]
    ),
    # http(s) in any case; the target's URL wins over the source's.
    *((url, None, None, url, [(url, url)]) for url in SOURCES),
    *(("s", None, {"kind": "web", "url": url}, "s", [(url, "s")]) for url in SOURCES),
    ("https://source.example/a", "T", {"kind": "card_document", "url": BASE}, "T", [(BASE, "T")]),
    # Without a usable target: the title, then the source, then "Source".
    *(
        (source, title, target, label, [(source, label)] if is_http_url(source) else [])
        for source, title, label in [
            ("silvia://your-account/checking", "Checking", "Checking"),
            ("silvia://your-account/checking", None, "silvia://your-account/checking"),
            ("https://example.com/a", "", "https://example.com/a"),
            ("https://example.com/a", BIDI_CONTROLS, "https://example.com/a"),
        ]
        for target in (None, {"kind": "telepathy"}, {"kind": "web", "url": "x"})
    ),
    *(
        (source, title, None, "Source", [])
        for title in (None, "", " ", "\u202e")
        for source in ("", "\t", "\u2066\u2069")
    ),
]


def test_each_rows_label_and_links() -> None:
    for source, title, target, label, links in LABELS:
        citation = Citation.model_validate({"source": source, "title": title, "target": target})
        resolved = resolve_citation(citation)
        case = (source, title, target)
        assert (resolved.label, [(k.href, k.label) for k in resolved.links]) == (label, links), case
        assert resolved.href == (links[0][0] if links else None), case
        assert (citation.target is None) is (parse_citation_target(target) is None), case
    assert resolve_citation(cite({"kind": "portfolio"})) == ResolvedCitation("Portfolio")
    hand_built = Citation(source="s").model_copy(update={"target": MarketDataTarget("MSFT")})
    assert resolve_citation(hand_built).label == "MSFT"


def test_labels_hold_no_bidi_controls_but_keep_bidi_marks() -> None:
    for control in BIDI_CONTROLS:
        title = cite(TWO, title=f"Cards{control} (gpj.exe")
        resolved = resolve_citation(title)
        assert resolved.label == "Cards (gpj.exe", control
        assert [link.label for link in resolved.links] == [
            "Cards (gpj.exe (1 of 2)",
            "Cards (gpj.exe (2 of 2)",
        ], control
        ticker = cite({"kind": "market_data", "ticker": f"AA{control}PL"})
        assert resolve_citation(ticker).label == "AAPL", control
        assert ticker.target == MarketDataTarget(f"AA{control}PL"), control  # the target as sent
        assert resolve_citation(Citation(source=f"silvia://x{control}y")).label == "silvia://xy"
    ticker = cite({"kind": "market_data", "ticker": "\u202e"}, title="T")
    assert resolve_citation(ticker).label == "T"
    # Marks open no scope: they order text as a letter of their direction does.
    marks = "\u05e9\u05dc\u05d5\u05dd\u200f (RLM) \u200e (LRM) \u061c (ALM)"
    assert resolve_citation(Citation(source="s", title=marks)).label == marks


# --------------------------------------------------------------------------- account links


def test_ids_without_a_link_keep_their_target_and_the_other_links() -> None:
    # Which links, behind any origin, for either model: the property above.
    for bad_id in [*DOT_SEGMENTS, "\udc00"]:
        account = cite({"kind": "account", "accountId": bad_id, "provider": "plaid"}, title="D")
        assert account.target == AccountTarget(bad_id, "plaid"), bad_id  # the target as sent
        assert resolve_citation(account) == ResolvedCitation("D"), bad_id
        refs = [{"accountId": ID}, {"accountId": bad_id}, {"accountId": ID2}]
        accounts = cite({"kind": "accounts", "accounts": refs}, title="Cards")
        expected = AccountsTarget((AccountRef(ID), AccountRef(bad_id), AccountRef(ID2)))
        assert accounts.target == expected, bad_id
        assert [(link.href, link.label) for link in resolve_citation(accounts).links] == [
            (f"/accounts/{ID}", "Cards (1 of 3)"),
            (f"/accounts/{ID2}", "Cards (3 of 3)"),
        ], bad_id


# --------------------------------------------------------------------------- web_url


def test_web_url_defaults_to_silvia_web_url_and_must_be_http(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    citation = cite({"kind": "account", "accountId": ID})
    for web in ["javascript:alert(1)", "data:x", "/relative", "app.example.com", *NOT_HTTP_URLS]:
        with pytest.raises(ConfigurationError, match=r"^web_url must be an absolute http"):
            resolve_citation(citation, web_url=web)
    assert resolve_citation(citation).href == f"/accounts/{ID}"
    assert web_origin(None) == ""  # SILVIA_WEB_URL unset: "", not None
    monkeypatch.setenv("SILVIA_WEB_URL", BASE)
    assert resolve_citation(citation).href == f"{BASE}/accounts/{ID}"
    other = "http://other.example"
    assert resolve_citation(citation, web_url=other).href == f"{other}/accounts/{ID}"
    assert resolve_citation(citation, web_url="").href == f"/accounts/{ID}"  # "": paths
    monkeypatch.setenv("SILVIA_WEB_URL", "")
    assert resolve_citation(citation).href == f"/accounts/{ID}"
    monkeypatch.setenv("SILVIA_WEB_URL", "app.example.com")
    with pytest.raises(ConfigurationError, match=r"^SILVIA_WEB_URL must be an absolute http"):
        resolve_citation(citation)


def test_base_url_warns_that_it_is_deprecated_and_says_what_to_pass() -> None:
    # Not blind under mutmut (the stacklevel is checked apart, below): the messages.
    citation = cite({"kind": "account", "accountId": ID})
    with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
        resolved = resolve_citation(citation, base_url=BASE)
    assert resolved == resolve_citation(citation, web_url=BASE)
    message = (
        "base_url= here is the web app's origin and is deprecated: pass web_url= "
        "(base_url means the API server)"
    )
    assert [(w.category, str(w.message)) for w in caught] == [(DeprecationWarning, message)]
    with pytest.raises(TypeError) as info:
        resolve_citation(citation, web_url=BASE, base_url=BASE)
    assert str(info.value) == "pass web_url= only (base_url= is its deprecated name)"


def test_base_url_is_a_deprecated_alias_of_web_url() -> None:
    # The warning points at the caller's line, and for a view (which calls `web_origin`
    # with the default stacklevel) at the view's caller's.
    def view(**kwargs: Any) -> str:
        return web_origin(None, **kwargs)

    citation = cite({"kind": "account", "accountId": ID})
    with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
        got = (resolve_citation(citation, base_url=BASE), view(base_url=BASE))
    assert got[1] == BASE
    assert [w.filename for w in caught] == [__file__, __file__]


UNRESERVED = frozenset(string.ascii_letters + string.digits + "-_.!~*'()")


def reference_encode(value: str) -> str:
    """encodeURIComponent as ECMA-262 defines it, for a string without lone surrogates."""
    return "".join(
        ch if ch in UNRESERVED else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in value
    )


def _split(astral: str) -> str:
    """An astral character as the two UTF-16 code units JavaScript holds it as."""
    code = ord(astral) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


no_surrogates = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@PROPERTY
@given(no_surrogates, st.characters(min_codepoint=0x10000), no_surrogates)
@example("", "\U0001f600", '/?#[]@:$&+,;=%"<>\\^`{|}')
@example("-_.!~*'() abcXYZ019", "\U0010ffff", "é\u20ac\x00\x7f\ufffd")
@example("a/b", "\U0001f600", "../x?y#z%2e")
@example("...", "\U0001f600", "%2e%2e")
def test_encode_and_account_href_match_the_reference_definition(
    before: str, char: str, after: str
) -> None:
    value = before + char + after
    encoded = encode_uri_component(value)
    assert encoded == reference_encode(value)
    assert encoded.isascii()
    assert set(encoded) <= UNRESERVED | set("%0123456789ABCDEF")
    assert unquote(encoded, errors="strict") == value
    # A pair given as two code points encodes like the astral character it makes.
    assert encode_uri_component(before + _split(char) + after) == encoded
    for text in (before, after):
        if text not in DOT_SEGMENTS:
            assert account_href(text) == "/accounts/" + reference_encode(text)


@PROPERTY
@given(no_surrogates, st.sampled_from(SURROGATES).map(chr), no_surrogates)
@example("", "\ud800", "")
@example("", "\udc00", "\ud800")
@example("a", "\udbff", "")
@example("", "\udfff", "z")
@example("", "\ud800", "\ud800\udc00")  # the second pairs, the first does not
def test_a_lone_surrogate_or_a_dot_segment_is_an_invalid_account_id(
    before: str, unit: str, after: str
) -> None:
    with pytest.raises(InvalidAccountIdError) as info:
        encode_uri_component(before + unit + after)
    # A clear error of the SDK's tree, and a ValueError for callers that catch that.
    assert isinstance(info.value, SilviaError)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        "an account id holds a lone surrogate, which encodeURIComponent rejects"
    )
    with pytest.raises(InvalidAccountIdError):
        account_href(before + unit + after)
    for account_id in DOT_SEGMENTS:
        # `/accounts/..` is the site root to a browser, and urljoin drops the segment.
        with pytest.raises(InvalidAccountIdError) as info:
            account_href(account_id)
        assert str(info.value) == (
            "an account id of '.' or '..' would be a dot segment, which leaves /accounts/"
        )
        assert encode_uri_component(account_id) == account_id  # the escaping itself stays exact


def _corpus(count: int = 4000, seed: int = 20240611) -> list[str]:
    """Strings over every region that matters: ASCII, BMP, astral, surrogates (lone and paired)."""
    rng = random.Random(seed)
    ranges = [(0x20, 0x7E), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    ranges += [(0xD800, 0xDBFF), (0xDC00, 0xDFFF), (0, 0x1F), (0x1F600, 0x1F600)]
    out = ["", "\ud83d\ude00", "\ude00\ud83d", "a\ud83d", "\ude00a", "\ud83d\ud83d\ude00"]
    out += ["\ud83d\ude00\ude00", "\U0010ffff", "".join(map(chr, range(0x80))), ".", "..", "..."]
    while len(out) < count:
        picks = [rng.choice(ranges) for _ in range(rng.randint(0, 16))]
        out.append("".join(chr(rng.randint(low, high)) for low, high in picks))
    return out


_NODE = """
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map((s) => {
  try { return `/accounts/${encodeURIComponent(s)}`; }
  catch (e) { if (e instanceof URIError) return null; throw e; }
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not on PATH")
def test_account_href_matches_javascript() -> None:
    corpus = _corpus()
    node = shutil.which("node")
    assert node is not None
    # json.dumps escapes every non-ASCII code unit, lone surrogates included, and
    # JSON.parse reads "\\ud83d\\ude00" as one astral character, as a server would send it.
    done = subprocess.run(
        [node, "-e", _NODE],
        input=json.dumps(corpus),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected: list[str | None] = json.loads(done.stdout)
    assert len(expected) == len(corpus)
    lone = 0
    mismatches = []
    for value, js in zip(corpus, expected, strict=True):
        try:
            ours: str | None = account_href(value)
        except InvalidAccountIdError:
            ours = None
        if value in DOT_SEGMENTS:  # deliberately no link, where JavaScript would leave the page
            assert ours is None
            continue
        lone += ours is None
        if ours != js:
            mismatches.append((value, ours, js))
    assert not mismatches, mismatches[:10]
    assert 0 < lone < len(corpus)  # both sides of the rule were exercised
