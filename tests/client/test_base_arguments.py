"""A client's base URL and token, from its arguments or the environment (`SILVIA_BASE_URL`,
`SILVIA_TOKEN`): a refusal names where the value came from."""

from __future__ import annotations

import pytest

from silvia_client import AsyncSilviaClient, SilviaClient
from silvia_client.errors import ConfigurationError


def test_a_bad_base_url_from_the_environment_is_named_as_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)
    for value, said in [
        ("ftp://silvia.test", "SILVIA_BASE_URL must be an absolute http(s) URL"),
        ("https://silvia.test/?q", "SILVIA_BASE_URL must not have a query (?) or a fragment (#)"),
        ("https://u:p@silvia.test", "SILVIA_BASE_URL must not hold credentials (user:password@)"),
    ]:
        monkeypatch.setenv("SILVIA_BASE_URL", value)
        for cls in (SilviaClient, AsyncSilviaClient):
            with pytest.raises(ConfigurationError) as caught:
                cls()
            assert str(caught.value).startswith(said), value


def test_an_at_sign_past_the_host_is_no_credential() -> None:
    with SilviaClient(base_url="https://silvia.test/team@x/", token="t") as client:
        assert client.base_url == "https://silvia.test/team@x"
