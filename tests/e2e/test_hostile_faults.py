"""The hostile faults through `silvia chat`: the error on stderr, what arrived on stdout, and
the token the server echoes never printed. (With the clients alone: `test_scenarios.py`,
`tests/client/test_limits.py` and `tests/client/test_privacy.py`.)
"""

from __future__ import annotations

import pytest

from silvia_client.testing import LoopbackServer, ReferenceServer

from ..cli._cli import _no_silvia_environment, run  # noqa: F401  (its clean environment)
from .conftest import TOKEN


def test_silvia_chat_ends_with_the_error_and_never_prints_the_token(
    reference: ReferenceServer,
    loopback: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    for name, error in {
        "fault-echo-token": "ServerStreamError",
        "fault-echo-token-401": "AuthenticationError",
        "fault-endless-line": "StreamTooLargeError",  # at the default max_event_bytes
    }.items():
        status, out, err = run(["chat", "--base-url", loopback.url, "/scenario " + name], capsys)
        assert status == 1, (name, err)
        assert TOKEN not in out + err, name
        assert f"silvia chat: {error}: " in err, (name, err)
        if "echo" in name:
            assert "<token>" in err, name
        expected = reference.expected_turn(name, token=TOKEN)
        if expected.status == 200:  # what arrived is on stdout, as it arrived
            assert out.startswith(expected.text.split(" and ")[0]), name
