"""Every `SilviaError`: drawn in `errors.py`'s docstring as the classes make it, and pickled.

As a `ProcessPoolExecutor` worker's error is: every subclass, and the errors a real client
raised, come back from `pickle` and `deepcopy` whole, and no pickle holds the token.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import re
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import pytest

import silvia_client
import silvia_client.citations
import silvia_client.errors as errors_py
import silvia_client.qa
import silvia_client.testing
from silvia_client import APIStatusError, IncompleteTurnError, Turn
from silvia_client.errors import SilviaError
from silvia_client.testing import ReferenceServer

# `├── Name   comment` or `└── Name`, indented by four characters a level.
_ROW = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)")


def test_every_public_error_is_drawn_under_its_parent_and_named_from_errors_py() -> None:
    drawn: dict[str, str] = {}  # each drawn class's name -> its parent's name
    path = ["SilviaError"]
    for line in (errors_py.__doc__ or "").splitlines():
        row = _ROW.match(line[4:])  # the drawing is indented by four
        if row is not None:
            depth = len(row["indent"]) // 4
            del path[depth + 1 :]
            drawn[row["name"]] = path[depth]
            path.append(row["name"])
    # The check is only as good as this reading of the drawing, with its nesting.
    assert drawn["InvalidAccountIdError"] == "SilviaError"
    assert drawn["StreamTooLargeError"] == "StreamError"
    assert drawn["APITimeoutError"] == "APIConnectionError"
    assert drawn["AuthenticationError"] == "APIStatusError"
    errors = {
        name: value
        for module in (errors_py, silvia_client.citations, silvia_client.testing)
        for name in module.__all__
        if isinstance(value := getattr(module, name), type) and issubclass(value, SilviaError)
    }
    assert sorted(drawn) == sorted(errors.keys() - {"SilviaError"})
    for name in drawn:
        parent = next(b for b in errors[name].__mro__[1:] if issubclass(b, SilviaError))
        assert drawn[name] == parent.__name__, name
    # A traceback names `module.Class` as a user imports it.
    homes = {getattr(errors_py, name).__module__ for name in errors_py.__all__}
    assert homes == {"silvia_client.errors"}


TOKEN = "pickle-s3cret-token-0123456789"
# Every way a client fails: statuses, an in-band error, a drop, no `done`, an echoed token.
FAILING = (
    *("status-404", "status-429", "status-500", "fault-echo-token-401", "fault-echo-token"),
    *("fault-error-event", "fault-drop", "fault-no-done"),
)


def _every_error_class(root: type[SilviaError] = SilviaError) -> Iterator[type[SilviaError]]:
    """Every subclass of `root` the package defines (its modules imported first)."""
    packages = (silvia_client, silvia_client.citations, silvia_client.qa, silvia_client.testing)
    for package in packages:  # their names load lazily: each error's module imports on use
        for name in package.__all__:
            getattr(package, name)
    for cls in root.__subclasses__():
        if cls.__module__.startswith("silvia_client."):
            yield cls
            yield from _every_error_class(cls)


def _arguments(cls: type[SilviaError], values: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A message, and a value for every keyword `cls` takes (a new required one fails here)."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    _, *parameters = inspect.signature(cls.__init__).parameters.values()  # after `self`
    for parameter in parameters:
        name = parameter.name
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            args.append(values[name])
        elif parameter.kind is parameter.VAR_POSITIONAL:
            args.append(values["message"])
        elif parameter.kind is parameter.KEYWORD_ONLY:
            if name in values:
                kwargs[name] = values[name]
            elif parameter.default is parameter.empty:
                pytest.fail(f"{cls.__name__} requires {name}=: give it a value in this test")
    return args, kwargs


def _state(error: BaseException) -> dict[str, Any]:
    """What an error carries, its turn compared field by field (`Turn` compares by identity)."""
    state = {"type": type(error), "str": str(error), "args": error.args}
    for name, value in vars(error).items():
        if name == "response":  # left out of the pickled state: see the test below
            continue
        if isinstance(value, Turn):
            value = {
                "fields": {f.name: getattr(value, f.name) for f in fields(value) if f.compare},
                "targets": {source: value.target_for(source) for source in value.sources},
            }
        state[name] = value
    return state


def _assert_survives(error: SilviaError) -> bytes:
    data = pickle.dumps(error)
    assert _state(pickle.loads(data)) == _state(error)
    assert _state(copy.deepcopy(error)) == _state(error)
    return data


@pytest.fixture(scope="module")
def raised() -> list[SilviaError]:
    """The error one turn of each scenario ends in, from a client whose token is set."""
    found = []
    for scenario in FAILING:
        client = ReferenceServer().client(token=TOKEN, max_retries=0)  # no backoff
        with client, pytest.raises(SilviaError) as caught:
            client.chat.send(f"/scenario {scenario} What do I owe on my cards?")
        found.append(caught.value)
    return found


def test_every_silvia_error_class_survives_pickle_and_deepcopy(raised: list[SilviaError]) -> None:
    # A partial turn with citations and their targets, as a stream error carries it.
    [partial] = [error for error in raised if isinstance(error, IncompleteTurnError)]
    assert partial.turn.citations
    assert partial.turn.sources
    values: dict[str, Any] = {
        "message": "boom",
        "status_code": 418,
        "request_id": "req_1",
        "session_id": "sess_1",
        "retry_after": 2.5,
        "error_type": "api_error",
        "body": {"error": {"type": "api_error", "message": "boom"}},
        "content_type": "text/html",
        "limit": 1024,
        "line": 3,
        "turn": partial.turn,
    }
    classes: list[type[SilviaError]] = [SilviaError, *_every_error_class()]
    assert {"NotFoundError", "ServerStreamError", "RecordingFormatError"} <= {
        cls.__name__ for cls in classes
    }
    for cls in classes:
        args, kwargs = _arguments(cls, values)
        error = cls(*args, **kwargs)
        if hasattr(error, "path"):  # set after construction (`RecordingFormatError`)
            error.path = "turn.jsonl"
        _assert_survives(error)


def test_errors_a_client_raised_pickle_as_themselves_and_without_the_token(
    raised: list[SilviaError],
) -> None:
    assert {type(error).__name__ for error in raised} >= {
        *("NotFoundError", "RateLimitError", "InternalServerError", "AuthenticationError"),
        *("ServerStreamError", "StreamDisconnectedError", "IncompleteTurnError"),
    }
    for error in raised:
        data = _assert_survives(error)
        assert TOKEN.encode() not in data, type(error).__name__
        if isinstance(error, APIStatusError):  # pickled without its response
            assert error.response is not None
            assert pickle.loads(data).response is None
            for name in error.response.headers:  # nor any part of it
                assert name.encode() not in data, (type(error).__name__, name)
