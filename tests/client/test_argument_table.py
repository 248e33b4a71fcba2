"""One rule for a bad argument: every row of `RULES`, over the numbers a careless or hostile
caller passes, refuses with a `ConfigurationError` (a `ValueError` too) or keeps a value
every clock and socket can hold; never another exception, never a value that overflows later."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from silvia_client import SilviaClient
from silvia_client._options import RULES, check, rules_table
from silvia_client._wire import DEFAULTS
from silvia_client.errors import ConfigurationError, SilviaError

SECONDS = ("timeout", "idle_timeout", "deadline", "retry_backoff")
WHOLE = ("max_event_bytes", "max_response_bytes", "max_retries")

numbers = st.one_of(
    st.integers(),
    st.integers(min_value=10**15, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_subnormal=True, min_value=0, max_value=1e-300),
    st.sampled_from([0, -0.0, 0.0, math.inf, -math.inf, math.nan, True, False, sys.maxsize]),
)


def _kept_is_holdable(name: str, kept: Any) -> None:
    values = kept.as_dict().values() if isinstance(kept, httpx.Timeout) else [kept]
    for value in values:
        if value is None or value == math.inf:
            assert name in ("idle_timeout", "deadline") or value is None
            continue
        assert not isinstance(value, bool)
        assert value >= 0
        if name in SECONDS:
            assert value <= DEFAULTS.max_seconds


@pytest.mark.parametrize("name", SECONDS + WHOLE)
@given(value=numbers)
def test_every_number_is_kept_or_refused_with_a_configuration_error(name: str, value: Any) -> None:
    refused: ConfigurationError | None = None
    try:
        kept = check(name, value)
    except ConfigurationError as error:
        refused = error
    if refused is not None:
        assert isinstance(refused, ValueError)
        assert str(refused).startswith(name)
    else:
        _kept_is_holdable(name, kept)


def test_what_no_clock_can_honour_is_refused() -> None:
    for name in SECONDS:
        for value in [math.nan, -1, 10**400, 1e10, True, "5"]:
            with pytest.raises(ConfigurationError):
                check(name, value)
    for name in SECONDS:  # the constructor refuses through the same rows
        options: dict[str, Any] = {name: 10**400}
        with pytest.raises(ConfigurationError, match=name):
            SilviaClient(base_url="http://127.0.0.1:1", **options)
    for message in ["", " ", "\n\t  "]:
        with pytest.raises(ConfigurationError, match="empty or only whitespace"):
            check("message", message)
    with pytest.raises(TypeError, match="message must be a str, not int"):
        check("message", 42)
    for name in ["message", "session_id"]:
        with pytest.raises(ConfigurationError, match="UTF-8"):
            check(name, "a\ud800")

    with pytest.raises(ConfigurationError, match="above 0"):
        check("timeout", 0)
    with pytest.raises(ConfigurationError, match="above 0"):
        check("timeout", httpx.Timeout(5.0, connect=0))
    assert check("retry_backoff", 0) == 0.0


def test_a_session_id_no_url_can_carry_is_a_configuration_error() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    transport = httpx.MockTransport(answer)
    with (
        SilviaClient(
            base_url="http://127.0.0.1:1", http_client=httpx.Client(transport=transport)
        ) as client,
        pytest.raises(ConfigurationError, match="65,536") as caught,
    ):
        client.sessions.get("s" * 70_000)
    assert isinstance(caught.value, SilviaError)
    assert not sent


def test_the_configuration_page_shows_the_table_as_the_code_has_it() -> None:
    table = rules_table()
    for name in RULES:
        assert f"| `{name}` |" in table
    assert "TypeError" in table.split("`message`", 1)[1].split("\n", 1)[0]
    page = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    shown = page.split("<!-- rules-table -->\n", 1)[1].split("\n<!-- /rules-table -->", 1)[0]
    assert shown == rules_table()
