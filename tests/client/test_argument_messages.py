"""What a refused argument says, and the edges of what is accepted: a caller reads the error to
fix the call, so each names the argument and what was wrong with it, and a value just inside a
bound is kept, not refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client._deadline import check
from silvia_client._wire import DEFAULTS
from silvia_client.errors import ConfigurationError

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
        ("https://silvia.test/?q=1", "base_url must not have a query (?) or a fragment (#)"),
        ("https://silvia.test/#top", "base_url must not have a query (?) or a fragment (#)"),
        ("silvia.test", "base_url must be an absolute http(s) URL"),
    ]
    for cls in (SilviaClient, AsyncSilviaClient):
        for base_url, message in cases:
            assert refused(cls, base_url=base_url, token="t") == message, base_url


def test_only_the_trailing_slashes_of_a_base_url_go() -> None:
    with SilviaClient(base_url="https://silvia.test/apiX//", token="t") as client:
        assert client.base_url == "https://silvia.test/apiX"
