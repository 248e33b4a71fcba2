"""Links and labels: `encode_uri_component`, `account_href`, `resolve_citation`."""

from __future__ import annotations

import json
import random
import shutil
import string
import subprocess
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client.citations import (
    AccountRef,
    AccountsTarget,
    AccountTarget,
    CardDocumentTarget,
    Citation,
    InlineCitation,
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

from .strategies import PROPERTY, URL_KINDS, account_ids, citation_rows, lone_surrogate

ID = "acc_9f8e7d6c5b4a3210"
DOT_SEGMENTS = (".", "..")  # ids whose path would be a dot segment: no link
ID2 = "acc_0123456789abcdef"
BASE = "https://app.example.com"

# --------------------------------------------------------------------------- the reference

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
astral = st.characters(min_codepoint=0x10000)


@PROPERTY
@given(no_surrogates)
def test_encode_matches_the_reference_definition(value: str) -> None:
    assert encode_uri_component(value) == reference_encode(value)


@PROPERTY
@given(no_surrogates)
def test_encoded_output_is_ascii_and_decodes_back(value: str) -> None:
    from urllib.parse import unquote

    encoded = encode_uri_component(value)
    assert encoded.isascii()
    assert set(encoded) <= UNRESERVED | set("%0123456789ABCDEF")
    assert unquote(encoded, errors="strict") == value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ""),
        ("abcXYZ019", "abcXYZ019"),
        ("-_.!~*'()", "-_.!~*'()"),
        (" ", "%20"),
        (
            '/?#[]@:$&+,;=%"<>\\^`{|}',
            "%2F%3F%23%5B%5D%40%3A%24%26%2B%2C%3B%3D%25%22%3C%3E%5C%5E%60%7B%7C%7D",
        ),
        ("é", "%C3%A9"),
        ("\u20ac", "%E2%82%AC"),
        ("😀", "%F0%9F%98%80"),
        ("\x00\x7f", "%00%7F"),
        ("\ufffd", "%EF%BF%BD"),
    ],
)
def test_encode_known_values(value: str, expected: str) -> None:
    assert encode_uri_component(value) == expected


@PROPERTY
@given(no_surrogates, astral, no_surrogates)
def test_a_pair_given_as_two_code_points_encodes_like_the_astral_char(
    before: str, char: str, after: str
) -> None:
    joined = before + char + after
    split = before + _split(char) + after
    assert len(split) == len(joined) + 1
    assert encode_uri_component(split) == encode_uri_component(joined)
    assert encode_uri_component(split) == reference_encode(joined)


@st.composite
def with_lone_surrogate(draw: st.DrawFn) -> str:
    """A string holding a surrogate that no neighbour pairs with."""
    before = draw(no_surrogates)
    after = draw(no_surrogates)
    unit = draw(lone_surrogate())
    return before + unit + after


@PROPERTY
@given(with_lone_surrogate())
def test_lone_surrogate_raises_invalid_account_id(value: str) -> None:
    with pytest.raises(InvalidAccountIdError):
        encode_uri_component(value)
    with pytest.raises(InvalidAccountIdError):
        account_href(value)


@pytest.mark.parametrize(
    "units",
    [
        [0xD800],
        [0xDC00],
        [0x61, 0xDBFF],
        [0xDFFF, 0x7A],
        [0xDC00, 0xD800],
        [0xD800, 0xD800, 0xDC00],
    ],
)
def test_lone_surrogate_cases(units: list[int]) -> None:
    value = "".join(map(chr, units))
    with pytest.raises(InvalidAccountIdError) as info:
        encode_uri_component(value)
    # A clear error of the SDK's tree, and a ValueError for callers that catch that.
    assert isinstance(info.value, SilviaError)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        "an account id holds a lone surrogate, which encodeURIComponent rejects"
    )


@PROPERTY
@given(no_surrogates.filter(lambda value: value not in DOT_SEGMENTS))
def test_account_href(value: str) -> None:
    assert account_href(value) == "/accounts/" + reference_encode(value)


def test_account_href_examples() -> None:
    assert account_href(ID) == f"/accounts/{ID}"
    assert account_href("a/b") == "/accounts/a%2Fb"
    assert account_href("../x") == "/accounts/..%2Fx"
    assert account_href("...") == "/accounts/..."
    assert account_href("%2e%2e") == "/accounts/%252e%252e"
    assert account_href("x?y#z") == "/accounts/x%3Fy%23z"


@pytest.mark.parametrize("account_id", DOT_SEGMENTS)
def test_dot_segment_ids_have_no_href(account_id: str) -> None:
    # `/accounts/..` is the site root to a browser, and urljoin drops the segment.
    with pytest.raises(InvalidAccountIdError) as info:
        account_href(account_id)
    assert str(info.value) == (
        "an account id of '.' or '..' would be a dot segment, which leaves /accounts/"
    )
    assert isinstance(info.value, SilviaError)
    assert isinstance(info.value, ValueError)
    assert encode_uri_component(account_id) == account_id  # the escaping itself stays exact


# --------------------------------------------------------------------------- against Node


def _corpus(count: int = 4000, seed: int = 20240611) -> list[str]:
    """Strings over every region that matters: ASCII, BMP, astral, surrogates (lone and paired)."""
    rng = random.Random(seed)
    pools = [
        (string.printable, 6),
        ("-_.!~*'()", 2),
        ([chr(c) for c in range(0x80, 0x800)], 2),
        ([chr(c) for c in range(0x800, 0xD800)], 2),
        ([chr(c) for c in range(0xE000, 0x10000)], 2),
        ([chr(c) for c in (0x10000, 0x1F600, 0x10FFFF, 0x2A6D6)], 1),
        ([chr(c) for c in (0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xD83D, 0xDE00)], 2),
    ]
    weights = [w for _, w in pools]
    out = [
        "",
        "\ud83d\ude00",
        "\ude00\ud83d",
        "a\ud83d",
        "\ude00a",
        "\ud83d\ud83d\ude00",
        "\ud83d\ude00\ude00",
        "\U0010ffff",
        "".join(map(chr, range(0x80))),
        ".",
        "..",
        "...",
    ]
    while len(out) < count:
        length = rng.randint(0, 16)
        chars = []
        for _ in range(length):
            pool = rng.choices(pools, weights)[0][0]
            if rng.random() < 0.1:
                chars.append(chr(rng.randint(0, 0x10FFFF)))
            else:
                chars.append(rng.choice(pool))
        out.append("".join(chars))
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
    assert any(0xD800 <= ord(c) <= 0xDFFF for s in corpus for c in s)
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


# --------------------------------------------------------------------------- resolve_citation


def _citation(target: Any = None, **fields: Any) -> Citation:
    row: dict[str, Any] = {"source": "silvia://your-account/checking", **fields}
    if target is not None:
        row["target"] = target
    return Citation.model_validate(row)


@pytest.mark.parametrize("provider", ["plaid", "manual", "snaptrade", None])
def test_account_gives_one_link_to_its_page(provider: str | None) -> None:
    wire = {"kind": "account", "accountId": "abc/def ghi", "provider": provider}
    resolved = resolve_citation(_citation(wire, title="Checking"))
    assert [link.href for link in resolved.links] == ["/accounts/abc%2Fdef%20ghi"]
    assert resolved.label == "Checking"
    assert resolved.links[0].label
    assert resolved.href == "/accounts/abc%2Fdef%20ghi"


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


@pytest.mark.parametrize("kind", ["web", *URL_KINDS])
def test_url_kinds_link_to_their_url(kind: str) -> None:
    url = "https://www.example.gov/doc?id=1#s2"
    resolved = resolve_citation(_citation({"kind": kind, "url": url}, title="Doc"))
    assert [link.href for link in resolved.links] == [url]
    assert resolved.links[0].label == resolved.label == "Doc"


@pytest.mark.parametrize("kind", URL_KINDS)
def test_document_kinds_without_url_have_no_link(kind: str) -> None:
    citation = _citation({"kind": kind, "url": None}, title="IRC §1")
    resolved = resolve_citation(citation)
    assert resolved.links == ()
    assert resolved.href is None
    assert resolved.label == "IRC §1"


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


@pytest.mark.parametrize("title", [None, "Apple", ""])
def test_market_data_is_labelled_by_its_ticker(title: str | None) -> None:
    citation = Citation.model_validate(
        {
            "source": "silvia://market-data/finnhub/AAPL",
            "title": title,
            "target": {"kind": "market_data", "ticker": "AAPL"},
        }
    )
    resolved = resolve_citation(citation)
    assert resolved.label == "AAPL"
    assert resolved.links == ()  # neither an http(s) URL nor an account


@pytest.mark.parametrize("title", [None, "Finnhub quote", ""])
@pytest.mark.parametrize(
    ("source", "label"),
    [
        ("silvia://market-data/finnhub", "Live data"),
        ("silvia://analysis", "Analysis"),
        ("silvia://market-data/finnhub/AAPL", "Analysis"),
        ("silvia://market-data/finnhub/", "Analysis"),
        ("https://example.com/page", "Analysis"),
    ],
)
def test_analysis_label_depends_on_its_source(source: str, label: str, title: str | None) -> None:
    citation = Citation.model_validate(
        {"source": source, "title": title, "target": {"kind": "analysis"}}
    )
    assert resolve_citation(citation).label == label


@pytest.mark.parametrize(
    ("title", "source", "label"),
    [
        ("Checking", "silvia://your-account/checking", "Checking"),
        (None, "silvia://your-account/checking", "silvia://your-account/checking"),
        ("", "https://example.com/a", "https://example.com/a"),
    ],
)
@pytest.mark.parametrize("target", [None, {"kind": "telepathy"}, {"kind": "web", "url": "x"}])
def test_without_a_usable_target_the_label_is_title_then_source(
    title: str | None, source: str, label: str, target: Any
) -> None:
    citation = Citation.model_validate({"source": source, "title": title, "target": target})
    assert citation.target is None
    assert resolve_citation(citation).label == label


@pytest.mark.parametrize("title", [None, "", " ", "\u202e"])
@pytest.mark.parametrize("source", ["", "\t", "\u2066\u2069"])
def test_with_no_title_or_source_to_show_the_label_is_source(
    title: str | None, source: str
) -> None:
    assert resolve_citation(Citation(source=source, title=title)).label == "Source"


@pytest.mark.parametrize("title", [None, ""])
def test_a_portfolio_without_a_title_is_labelled_portfolio(title: str | None) -> None:
    wire = {"source": "silvia://your-portfolio", "title": title, "target": {"kind": "portfolio"}}
    assert resolve_citation(Citation.model_validate(wire)) == ResolvedCitation("Portfolio")


def test_a_portfolio_with_a_title_is_labelled_by_its_title() -> None:
    wire = {
        "source": "silvia://your-portfolio",
        "title": "Holdings",
        "target": {"kind": "portfolio"},
    }
    assert resolve_citation(Citation.model_validate(wire)).label == "Holdings"


def test_legacy_http_source_is_a_link() -> None:
    resolved = resolve_citation(Citation(source="https://example.com/a", title="A"))
    assert [link.href for link in resolved.links] == ["https://example.com/a"]


@pytest.mark.parametrize(
    "source",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "file:///etc/passwd",
        "//evil.example/",
        "/accounts/abc",
        "silvia://your-portfolio",
        "https://exa mple.com",
        "https://",
    ],
)
@pytest.mark.parametrize("title", [None, "T"])
def test_only_http_sources_become_links(source: str, title: str | None) -> None:
    resolved = resolve_citation(Citation(source=source, title=title))
    assert resolved.links == ()


@pytest.mark.parametrize(
    "target",
    [
        WebTarget("javascript:alert(1)"),
        WebTarget("data:text/html,x"),
        CardDocumentTarget("javascript:alert(1)"),
        WebTarget("/relative"),
    ],
)
def test_hand_built_targets_with_bad_urls_never_link(target: Any) -> None:
    citation = Citation(source="https://example.com/fallback").model_copy(update={"target": target})
    assert citation.target is target
    for link in resolve_citation(citation).links:
        assert urlsplit(link.href).scheme in ("http", "https")
        assert link.href != getattr(target, "url", None)


# --------------------------------------------------------------------------- not http(s)

# Scheme-shaped strings that are not http(s) URLs: each would be a script, another
# protocol, or a backslash form a browser may read as a URL of its own choosing.
NOT_HTTP_URLS = [
    "javascript://example.com/%0Aalert(1)",
    "javascript://%0Aalert(document.cookie)",
    "JAVASCRIPT://example.com/%0aalert(1)",
    "JaVaScRiPt://example.com/%0Aalert(1)",
    "vbscript://example.com/%0Amsgbox(1)",
    "data://example.com/,<script>alert(1)</script>",
    "httpx://example.com/",
    "https2://example.com/",
    "xhttps://example.com/",
    "wss://example.com/socket",
    "ws://example.com/socket",
    "ftp://example.com/",
    "https:\\\\example.com\\",
    "http:\\\\example.com/path",
    "https:/\\example.com/",
    "https:\\/example.com/",
    "https:example.com",
    "https:/example.com",
    "https//example.com",
    " https://example.com/",
    "https://example.com/\n",
    "\x00https://example.com/",
]


@pytest.mark.parametrize("url", NOT_HTTP_URLS)
def test_not_http_urls_are_not_http_urls(url: str) -> None:
    assert not is_http_url(url)


@pytest.mark.parametrize("url", NOT_HTTP_URLS)
@pytest.mark.parametrize("kind", ["web", *URL_KINDS])
def test_a_target_with_a_non_http_url_is_no_target_and_no_link(url: str, kind: str) -> None:
    wire = {"kind": kind, "url": url}
    assert parse_citation_target(wire) is None
    citation = Citation.model_validate({"source": url, "title": "T", "target": wire})
    assert citation.target is None
    assert resolve_citation(citation).links == ()


@pytest.mark.parametrize("url", NOT_HTTP_URLS)
@pytest.mark.parametrize(
    "target_type", [WebTarget, TaxReferenceTarget, CardDocumentTarget, MortgageReferenceTarget]
)
def test_a_hand_built_target_with_a_non_http_url_never_links(url: str, target_type: Any) -> None:
    target = target_type(url)
    citation = Citation(source=url, title="T").model_copy(update={"target": target})
    assert citation.target is target
    assert resolve_citation(citation).links == ()


@pytest.mark.parametrize("url", NOT_HTTP_URLS)
@pytest.mark.parametrize("model", [Citation, InlineCitation])
def test_a_legacy_source_with_a_non_http_url_never_links(url: str, model: type[Citation]) -> None:
    assert resolve_citation(model.model_validate({"source": url, "title": "T"})).links == ()
    assert resolve_citation(model.model_validate({"source": url})).links == ()


@pytest.mark.parametrize(
    "url", ["https://example.com/", "HTTPS://EXAMPLE.COM/", "Http://example.com:8080/a?b#c"]
)
def test_http_urls_in_any_case_do_link(url: str) -> None:
    # The other side of the tests above: the scheme's case is not what refuses them.
    assert [link.href for link in resolve_citation(Citation(source=url)).links] == [url]
    web = Citation.model_validate({"source": "s", "target": {"kind": "web", "url": url}})
    assert [link.href for link in resolve_citation(web).links] == [url]


# --------------------------------------------------------------------------- web_url


@pytest.mark.parametrize("web", [BASE, BASE + "/", "http://localhost:3000"])
def test_web_url_makes_account_links_absolute(web: str) -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": "a/b"}]}
    resolved = resolve_citation(_citation(wire), web_url=web)
    origin = web.rstrip("/")
    assert [link.href for link in resolved.links] == [
        f"{origin}/accounts/{ID}",
        f"{origin}/accounts/a%2Fb",
    ]


def test_web_url_leaves_absolute_links_alone() -> None:
    url = "https://www.irs.gov/p17"
    resolved = resolve_citation(_citation({"kind": "web", "url": url}), web_url=BASE)
    assert [link.href for link in resolved.links] == [url]


@pytest.mark.parametrize(
    "web", ["javascript:alert(1)", "data:x", "/relative", "app.example.com", *NOT_HTTP_URLS]
)
def test_a_non_http_web_url_is_a_configuration_error(web: str) -> None:
    citation = _citation({"kind": "account", "accountId": ID})
    with pytest.raises(ConfigurationError, match=r"^web_url must be an absolute http"):
        resolve_citation(citation, web_url=web)


def test_web_url_defaults_to_silvia_web_url(monkeypatch: pytest.MonkeyPatch) -> None:
    citation = _citation({"kind": "account", "accountId": ID})
    assert resolve_citation(citation).href == f"/accounts/{ID}"
    monkeypatch.setenv("SILVIA_WEB_URL", BASE)
    assert resolve_citation(citation).href == f"{BASE}/accounts/{ID}"
    assert resolve_citation(citation, web_url="http://other.example").href == (
        f"http://other.example/accounts/{ID}"
    )
    assert resolve_citation(citation, web_url="").href == f"/accounts/{ID}"  # "": paths
    monkeypatch.setenv("SILVIA_WEB_URL", "")
    assert resolve_citation(citation).href == f"/accounts/{ID}"


def test_a_bad_silvia_web_url_is_a_configuration_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SILVIA_WEB_URL", "app.example.com")
    with pytest.raises(ConfigurationError, match=r"^SILVIA_WEB_URL must be an absolute http"):
        resolve_citation(_citation({"kind": "account", "accountId": ID}))


def test_without_a_web_url_the_origin_is_empty_for_the_apps_own_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert web_origin(None) == ""  # SILVIA_WEB_URL unset: "", not None
    assert web_origin("") == ""
    monkeypatch.setenv("SILVIA_WEB_URL", "")
    assert web_origin(None) == ""
    assert web_origin(BASE) == BASE


def test_base_url_warns_that_it_is_deprecated_and_says_what_to_pass() -> None:
    citation = _citation({"kind": "account", "accountId": ID})
    with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
        resolve_citation(citation, base_url=BASE)
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            DeprecationWarning,
            "base_url= here is the web app's origin and is deprecated: pass web_url= "
            "(base_url means the API server)",
        )
    ]
    with pytest.raises(TypeError) as info:
        resolve_citation(citation, web_url=BASE, base_url=BASE)
    assert str(info.value) == "pass web_url= only (base_url= is its deprecated name)"


def _origin_for_a_view(**kwargs: Any) -> str:
    # As the views in display.py call it, with the default stacklevel.
    return web_origin(None, **kwargs)


def test_web_origin_puts_the_warning_at_the_line_that_called_its_caller() -> None:
    with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
        origin = _origin_for_a_view(base_url=BASE)
    assert origin == BASE
    assert [w.filename for w in caught] == [__file__]


def test_base_url_is_a_deprecated_alias_of_web_url() -> None:
    citation = _citation({"kind": "account", "accountId": ID})
    with pytest.warns(DeprecationWarning, match="pass web_url=") as caught:
        resolved = resolve_citation(citation, base_url=BASE)
    assert resolved == resolve_citation(citation, web_url=BASE)
    assert [w.filename for w in caught] == [__file__]  # it points at the caller's line
    with pytest.raises(TypeError, match="web_url= only"):
        resolve_citation(citation, web_url=BASE, base_url=BASE)


# --------------------------------------------------------------------------- ids without a link


@pytest.mark.parametrize("model", [Citation, InlineCitation])
@pytest.mark.parametrize("web", ["", BASE])
def test_lone_surrogate_id_gives_no_link_and_no_exception(model: type[Citation], web: str) -> None:
    account = model.model_validate(
        {"source": "s", "target": {"kind": "account", "accountId": "a\ud800b"}}
    )
    assert resolve_citation(account, web_url=web).links == ()
    accounts = model.model_validate(
        {
            "source": "s",
            "target": {
                "kind": "accounts",
                "accounts": [{"accountId": ID}, {"accountId": "\udc00"}, {"accountId": ID2}],
            },
        }
    )
    hrefs = [link.href for link in resolve_citation(accounts, web_url=web).links]
    assert hrefs == [f"{web}/accounts/{ID}", f"{web}/accounts/{ID2}"]


@pytest.mark.parametrize("account_id", DOT_SEGMENTS)
@pytest.mark.parametrize("model", [Citation, InlineCitation])
@pytest.mark.parametrize("web", ["", BASE, BASE + "/app/"])
def test_dot_segment_id_gives_no_link_and_keeps_its_target(
    account_id: str, model: type[Citation], web: str
) -> None:
    account = model.model_validate(
        {
            "source": "silvia://your-account/dots",
            "title": "Dots",
            "target": {"kind": "account", "accountId": account_id, "provider": "plaid"},
        }
    )
    assert account.target == AccountTarget(account_id, "plaid")  # the target as sent
    resolved = resolve_citation(account, web_url=web)
    assert (resolved.label, resolved.links) == ("Dots", ())
    refs = [{"accountId": ID}, {"accountId": account_id}, {"accountId": ID2}]
    accounts = model.model_validate(
        {"source": "s", "title": "Cards", "target": {"kind": "accounts", "accounts": refs}}
    )
    assert accounts.target == AccountsTarget(
        (AccountRef(ID), AccountRef(account_id), AccountRef(ID2))
    )
    origin = web.rstrip("/").removesuffix("/app")
    links = resolve_citation(accounts, web_url=web).links
    assert [(link.href, link.label) for link in links] == [
        (f"{origin}/accounts/{ID}", "Cards (1 of 3)"),
        (f"{origin}/accounts/{ID2}", "Cards (3 of 3)"),
    ]


# --------------------------------------------------------------------------- bidi controls

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@pytest.mark.parametrize("control", BIDI_CONTROLS)
def test_labels_hold_no_bidi_controls(control: str) -> None:
    title = Citation.model_validate(
        {
            "source": "silvia://your-account/cards",
            "title": f"Cards{control} (gpj.exe",
            "target": {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": ID2}]},
        }
    )
    resolved = resolve_citation(title)
    assert resolved.label == "Cards (gpj.exe"
    assert [link.label for link in resolved.links] == [
        "Cards (gpj.exe (1 of 2)",
        "Cards (gpj.exe (2 of 2)",
    ]
    assert [link.href for link in resolved.links] == [account_href(ID), account_href(ID2)]
    ticker = Citation.model_validate(
        {"source": "s", "target": {"kind": "market_data", "ticker": f"AA{control}PL"}}
    )
    assert resolve_citation(ticker).label == "AAPL"
    assert ticker.target == MarketDataTarget(f"AA{control}PL")  # the target as sent
    source = Citation(source=f"silvia://x{control}y")
    assert resolve_citation(source).label == "silvia://xy"


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
