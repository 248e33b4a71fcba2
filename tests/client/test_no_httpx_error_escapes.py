"""No httpx exception escapes a public method (issue 20, "Ids and URLs before sending"): every
public call, over arguments a careless or hostile caller passes, returns, or raises a
`SilviaError` (a `TypeError` for a value of the wrong type, as Python's own): never
`httpx.InvalidURL`, `httpx.LocalProtocolError` or another error of httpx's."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx
import pytest

from silvia_client import SilviaClient
from silvia_client.errors import SilviaError

from .conftest import Api, Client, settled
from .sse import full_turn

SESSION_IDS: list[Any] = [
    "s" * 70_000,
    "..",
    ".",
    "a/b?c#d",
    "\x00\r\n",
    "a\ud800",
    "",
    " ",
    "é" * 30_000,
    None,
    42,
]
MESSAGES: list[Any] = ["", " \n", "a\ud800", "\x00", "x" * 1_000_000, None, 3.5, b"hi"]
HEADERS: list[Any] = [
    {"x-a": "line\r\nbreak"},
    {"x-a": "\x00"},
    {"bad name": "v"},
    {"x-a": "ü€"},
    {"": "v"},
    {"x-a": 5},
    "not a mapping",
]
NUMBERS: list[Any] = [0, -1, math.nan, math.inf, 10**400, 1e-320, True, "5"]
OPTIONS = ("timeout", "deadline", "idle_timeout", "max_event_bytes", "max_response_bytes")


def handler(request: httpx.Request) -> httpx.Response:
    if request.method == "POST":
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=full_turn()
        )
    return httpx.Response(200, json={"session": {"id": "s"}, "messages": []})


def calls(client: Client) -> list[tuple[str, Callable[[], object]]]:
    send, get = client.chat.send, client.sessions.get
    out: list[tuple[str, Callable[[], object]]] = []
    for sid in SESSION_IDS:
        out.append((f"get({sid!r:.20})", partial(get, sid)))
        out.append((f"get_raw({sid!r:.20})", partial(client.sessions.get_raw, sid)))
        out.append((f"send(session_id={sid!r:.20})", partial(send, "hi", session_id=sid)))
    out += [(f"send({message!r:.20})", partial(send, message)) for message in MESSAGES]
    for headers in HEADERS:
        name = f"{headers!r:.30}"
        out.append((f"send(extra_headers={name})", partial(send, "hi", extra_headers=headers)))
        out.append((f"get(extra_headers={name})", partial(get, "s", extra_headers=headers)))
        given = partial(client.with_options, default_headers=headers)
        out.append((f"with_options(default_headers={name})", given))
    for number in NUMBERS:
        for option in OPTIONS:
            value: dict[str, Any] = {option: number}
            out.append((f"send({option}={number!r:.20})", partial(send, "hi", **value)))
            out.append(
                (f"with_options({option}={number!r:.20})", partial(client.with_options, **value))
            )
    return out


@pytest.mark.anyio
async def test_no_public_method_of_either_client_lets_an_httpx_error_out(api: Api) -> None:
    http = api.http(transport=httpx.MockTransport(handler))
    client = api.client(base_url="https://silvia.test", token="t", http_client=http)
    escaped: dict[str, str] = {}
    for name, call in calls(client):
        try:
            await settled(call())
        except (SilviaError, TypeError):
            pass
        except BaseException as error:  # anything else is the failure this test looks for
            escaped[name] = repr(error)
    assert not escaped, escaped


def test_a_constructor_refuses_a_base_url_httpx_would_refuse() -> None:
    # On 127.0.0.1, without retries: a URL let through fails at once, with no name to look up.
    for base_url in ["http://127.0.0.1:9/" + "p" * 70_000, "http://127.0.0.1:99999", "ftp://x"]:
        with pytest.raises((SilviaError, TypeError)):
            SilviaClient(base_url=base_url, token="t", max_retries=0).sessions.get("s")
