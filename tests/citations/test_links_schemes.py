"""Links to http(s) only: `is_http_url`, sources and targets of other schemes, and `web_url`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from silvia_client.citations import (
    CardDocumentTarget,
    Citation,
    InlineCitation,
    MortgageReferenceTarget,
    TaxReferenceTarget,
    WebTarget,
    is_http_url,
    parse_citation_target,
    resolve_citation,
)
from silvia_client.citations._links import web_origin
from silvia_client.errors import ConfigurationError

from ._links_cases import BASE, ID, _citation
from .strategies import URL_KINDS

# ------------------------------------------------------------- sources and hand-built targets


def test_legacy_http_source_is_a_link() -> None:
    resolved = resolve_citation(Citation(source="https://example.com/a", title="A"))
    assert [link.href for link in resolved.links] == ["https://example.com/a"]


# Sources that are no http(s) URL: a script, a file, protocol-relative, the app's own
# path, the legacy silvia:// scheme, a space in the host, no host at all.
NOT_LINK_SOURCES = (
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
)


def test_only_http_sources_become_links() -> None:
    for source in NOT_LINK_SOURCES:
        for title in (None, "T"):
            resolved = resolve_citation(Citation(source=source, title=title))
            assert resolved.links == (), (source, title)


def test_hand_built_targets_with_bad_urls_never_link() -> None:
    for target in (
        WebTarget("javascript:alert(1)"),
        WebTarget("data:text/html,x"),
        CardDocumentTarget("javascript:alert(1)"),
        WebTarget("/relative"),
    ):
        fallback = Citation(source="https://example.com/fallback")
        citation = fallback.model_copy(update={"target": target})
        assert citation.target is target
        for link in resolve_citation(citation).links:
            assert urlsplit(link.href).scheme in ("http", "https"), target
            assert link.href != getattr(target, "url", None), target


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


def test_not_http_urls_are_not_http_urls() -> None:
    for url in NOT_HTTP_URLS:
        assert not is_http_url(url), url


def test_a_non_http_url_is_no_target_and_no_link_however_it_comes() -> None:
    # On the wire as any url-carrying kind, in a hand-built target of each url type,
    # and as the legacy `source` of either model: never a target, never a link.
    hand_built = (WebTarget, TaxReferenceTarget, CardDocumentTarget, MortgageReferenceTarget)
    for url in NOT_HTTP_URLS:
        for kind in ("web", *URL_KINDS):
            wire = {"kind": kind, "url": url}
            assert parse_citation_target(wire) is None, wire
            citation = Citation.model_validate({"source": url, "title": "T", "target": wire})
            assert citation.target is None, wire
            assert resolve_citation(citation).links == (), wire
        for target_type in hand_built:
            target = target_type(url)
            citation = Citation(source=url, title="T").model_copy(update={"target": target})
            assert citation.target is target
            assert resolve_citation(citation).links == (), target
        for model in (Citation, InlineCitation):
            assert resolve_citation(model.model_validate({"source": url, "title": "T"})).links == ()
            assert resolve_citation(model.model_validate({"source": url})).links == (), (model, url)


def test_http_urls_in_any_case_do_link() -> None:
    # The other side of the tests above: the scheme's case is not what refuses them.
    for url in ("https://example.com/", "HTTPS://EXAMPLE.COM/", "Http://example.com:8080/a?b#c"):
        assert [link.href for link in resolve_citation(Citation(source=url)).links] == [url]
        web = Citation.model_validate({"source": "s", "target": {"kind": "web", "url": url}})
        assert [link.href for link in resolve_citation(web).links] == [url]


# --------------------------------------------------------------------------- web_url


def test_web_url_makes_account_links_absolute() -> None:
    wire = {"kind": "accounts", "accounts": [{"accountId": ID}, {"accountId": "a/b"}]}
    for web in (BASE, BASE + "/", "http://localhost:3000"):
        resolved = resolve_citation(_citation(wire), web_url=web)
        origin = web.rstrip("/")
        assert [link.href for link in resolved.links] == [
            f"{origin}/accounts/{ID}",
            f"{origin}/accounts/a%2Fb",
        ], web


def test_web_url_leaves_absolute_links_alone() -> None:
    url = "https://www.irs.gov/p17"
    resolved = resolve_citation(_citation({"kind": "web", "url": url}), web_url=BASE)
    assert [link.href for link in resolved.links] == [url]


def test_a_non_http_web_url_is_a_configuration_error() -> None:
    citation = _citation({"kind": "account", "accountId": ID})
    for web in ["javascript:alert(1)", "data:x", "/relative", "app.example.com", *NOT_HTTP_URLS]:
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
