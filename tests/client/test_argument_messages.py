"""What a refused argument says, and the edges of what is accepted: a caller reads the error to
fix the call, so each names the argument and what was wrong with it, and a value just inside a
bound is kept, not refused."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client._deadline import check
from silvia_client._wire import DEFAULTS
from silvia_client.errors import ConfigurationError, SilviaError

URL = "https://silvia.test"


def refused(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ConfigurationError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_the_rows_errors_say_what_was_wrong() -> None:
    cases: list[tuple[str, object, str]] = [
        ("extra_body", {"a": {1}}, "extra_body: cannot be sent as JSON (TypeError)"),
        ("extra_headers", {"a": 1}, "extra_headers: header names and values must be str or bytes"),
        ("extra_headers", {"é": "v"}, "extra_headers: UnicodeEncodeError"),
        (
            "timeout",
            httpx.Timeout(5, read=2e9),
            "timeout: the read timeout must be at most 1e+09 s",
        ),
        ("session_id", "", "session_id must not be empty (leave it out for a new session)"),
    ]
    for name, value, message in cases:
        assert refused(check, name, value) == message, (name, value)


def test_a_message_of_none_is_a_type_error_naming_it() -> None:
    with SilviaClient(base_url=URL, token="t") as client, pytest.raises(TypeError) as caught:
        client.chat.stream(None)  # type: ignore[arg-type]
    assert str(caught.value) == "message must be a str, not NoneType"


def test_the_values_just_inside_each_bound_are_kept() -> None:
    with SilviaClient(
        base_url=URL,
        token="t",
        idle_timeout=0.5,
        deadline=DEFAULTS.max_seconds,
        max_event_bytes=1,
    ) as client:
        assert client.idle_timeout == 0.5
        assert client.deadline == DEFAULTS.max_seconds
        assert client.max_event_bytes == 1


def test_any_object_with_get_tracer_is_a_tracer_provider() -> None:
    class Provider:
        def get_tracer(self, *args: object, **kwargs: object) -> None:
            return None

    provider = Provider()
    assert check("tracer_provider", provider) is provider


def test_a_bad_base_url_is_refused_with_what_is_wrong() -> None:
    cases: list[tuple[object, str]] = [
        (5, "base_url must be a str, not int"),
        ("ftp://silvia.test", "base_url must be an absolute http(s) URL"),
        (
            "https://user:pw@silvia.test",
            "base_url must not hold credentials (user:password@): "
            "pass the token as token=... or in SILVIA_TOKEN",
        ),
        ("https://silvia.test/?q=1", "base_url must not have a query (?) or a fragment (#)"),
        ("https://silvia.test/#top", "base_url must not have a query (?) or a fragment (#)"),
    ]
    for base_url, message in cases:
        assert refused(SilviaClient, base_url=base_url, token="t") == message, base_url


def test_only_the_trailing_slashes_of_a_base_url_go() -> None:
    with SilviaClient(base_url="https://silvia.test/apiX//", token="t") as client:
        assert client.base_url == "https://silvia.test/apiX"


def test_a_bad_token_is_refused_with_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = (
        "holds whitespace, a control character or a non-ASCII character "
        "(a trailing newline from a file?): a bearer token is printable ASCII"
    )
    assert refused(SilviaClient, base_url=URL, token=5) == "token must be a str, not int"
    assert refused(SilviaClient, base_url=URL, token="") == (
        "token is empty: pass the token, or leave token out to use SILVIA_TOKEN"
    )
    assert refused(SilviaClient, base_url=URL, token="a b\n") == f"token {bad}"
    monkeypatch.setenv("SILVIA_TOKEN", "a b\n")
    assert refused(SilviaClient, base_url=URL) == f"the SILVIA_TOKEN environment variable {bad}"


def test_plain_http_with_a_token_warns_unless_the_host_stays_local(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="silvia_client")
    hosts = {
        "localhost": False,
        "localhost.": False,
        "api.localhost": False,
        "silvia.test": False,
        "127.0.0.1": False,
        "[::1]": False,
        "example.com": True,
        "10.0.0.5": True,
        "notlocalhost": True,
        "localhost.example.com": True,
        "silvia.testing": True,
        "test": True,
    }
    for host, warned in hosts.items():
        caplog.clear()
        with SilviaClient(base_url=f"http://{host}:8000", token="t"):
            pass
        found = any("plain http" in record.getMessage() for record in caplog.records)
        assert found == warned, host


def test_the_token_is_blanked_in_an_error_and_shown_as_a_placeholder() -> None:
    token = "s3cr3t-token-value"
    transport = httpx.MockTransport(lambda request: httpx.Response(401, text=f"bad {token}"))
    with SilviaClient(
        base_url=URL, token=token, max_retries=0, http_client=httpx.Client(transport=transport)
    ) as client:
        with pytest.raises(SilviaError) as caught:
            client.sessions.get("s1")
        assert token not in str(caught.value)
        assert "bad" in str(caught.value)
        # No public name shows the kept token; its repr is what a debugger or `vars()` shows.
        assert repr(client._token) == str(client._token) == "<token>"
