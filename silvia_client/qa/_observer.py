"""`Observer` and `AsyncObserver`: a client on one server, made for observing turns.

`Observer.reference()` observes an in-process reference server (no network);
`Observer.connect(base_url, ...)` a real one. Either can record the exchange
(`record=True`: the client sends through a `testing.RecordingTransport`), and
`observer.observe(message, scenario=...)` observes one turn through
`_observe_turn.observe`, sending the scenario as the reference server's
`x-silvia-scenario` header. `AsyncObserver` is the async twin, line for line
(what `silvia qa run --concurrency N` runs on).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from .. import AsyncSilviaClient, SilviaClient
from ._observation import Observation
from ._observe_turn import aobserve, observe

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..testing import RecordingTransport, ReferenceServer

__all__ = ["AsyncObserver", "Observer"]


# -- what the twins share --------------------------------------------------------------


_CONNECT_TIMEOUT = 10.0  # the client's own default


def _timeouts(timeout: float | None) -> dict[str, Any]:
    if timeout is None:
        return {}
    return {
        "timeout": httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT)),
        "idle_timeout": timeout,
    }


def _scenario_headers(scenario: str | None) -> dict[str, str] | None:
    from ..testing import SCENARIO_HEADER

    return {SCENARIO_HEADER: scenario} if scenario else None


# -- sync ------------------------------------------------------------------------------


class Observer:
    """Observes turns against one server: a base URL, or an in-process reference server.

    ::

        with Observer.reference() as qa:                      # no network
            observation = qa.observe("How much is in checking?", scenario="account")
        with Observer.connect("https://staging.example", token=..., record=True) as qa:
            observation = qa.observe("How much is in checking?")
        observation.to_recording().save("checking.jsonl")

    `scenario` is sent as the reference server's `x-silvia-scenario` header; a
    real server ignores it, so one script drives both. With `record=True` the
    observer's client sends through a `RecordingTransport` and every
    observation holds its exchange (`to_recording()`); such a transport
    connects directly, without the proxies of the environment.
    """

    def __init__(
        self,
        client: SilviaClient,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http: httpx.Client | None = None  # an HTTP client this observer made, to close

    @classmethod
    def reference(
        cls,
        *,
        server: ReferenceServer | None = None,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> Observer:
        """An observer of an in-process reference server (a fresh one unless given)."""
        from ..testing import IN_PROCESS_URL, RecordingTransport, ReferenceServer

        server = server if server is not None else ReferenceServer()
        recorder = RecordingTransport(server.transport()) if record else None
        http = httpx.Client(transport=recorder or server.transport())
        client = SilviaClient(
            base_url=IN_PROCESS_URL,
            token=token or "qa-local",
            http_client=http,
            **_timeouts(timeout),
        )
        observer = cls(client, server=server, recorder=recorder)
        observer._http = http
        return observer

    @classmethod
    def connect(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> Observer:
        """An observer of the server at `base_url` (token: `token`, else `SILVIA_TOKEN`)."""
        from ..testing import RecordingTransport

        if not record:
            return cls(SilviaClient(base_url=base_url, token=token, **_timeouts(timeout)))
        recorder = RecordingTransport()
        http = httpx.Client(transport=recorder)
        client = SilviaClient(
            base_url=base_url, token=token, http_client=http, **_timeouts(timeout)
        )
        observer = cls(client, recorder=recorder)
        observer._http = http
        return observer

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def observe(
        self,
        message: str,
        *,
        scenario: str | None = None,
        session_id: str | None = None,
        reload: bool = True,
    ) -> Observation:
        """One turn, observed (and its session reloaded, when it completed)."""
        return observe(
            self.client,
            message,
            session_id=session_id,
            headers=_scenario_headers(scenario),
            reload=reload,
            recorder=self.recorder,
        )

    def close(self) -> None:
        """Close the client, and the HTTP client this observer made, if it made one."""
        self.client.close()
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# -- async -----------------------------------------------------------------------------


class AsyncObserver:
    """The async twin of `Observer`: `async with`, `await observer.observe(...)`."""

    def __init__(
        self,
        client: AsyncSilviaClient,
        *,
        server: ReferenceServer | None = None,
        recorder: RecordingTransport | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self.recorder = recorder
        self._http: httpx.AsyncClient | None = None  # an HTTP client this observer made

    @classmethod
    def reference(
        cls,
        *,
        server: ReferenceServer | None = None,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> AsyncObserver:
        """An observer of an in-process reference server (a fresh one unless given)."""
        from ..testing import IN_PROCESS_URL, RecordingTransport, ReferenceServer

        server = server if server is not None else ReferenceServer()
        recorder = RecordingTransport(server.transport()) if record else None
        http = httpx.AsyncClient(transport=recorder or server.transport())
        client = AsyncSilviaClient(
            base_url=IN_PROCESS_URL,
            token=token or "qa-local",
            http_client=http,
            **_timeouts(timeout),
        )
        observer = cls(client, server=server, recorder=recorder)
        observer._http = http
        return observer

    @classmethod
    def connect(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float | None = None,
        record: bool = False,
    ) -> AsyncObserver:
        """An observer of the server at `base_url` (token: `token`, else `SILVIA_TOKEN`)."""
        from ..testing import RecordingTransport

        if not record:
            return cls(AsyncSilviaClient(base_url=base_url, token=token, **_timeouts(timeout)))
        recorder = RecordingTransport()
        http = httpx.AsyncClient(transport=recorder)
        client = AsyncSilviaClient(
            base_url=base_url, token=token, http_client=http, **_timeouts(timeout)
        )
        observer = cls(client, recorder=recorder)
        observer._http = http
        return observer

    @property
    def base_url(self) -> str:
        return self.client.base_url

    async def observe(
        self,
        message: str,
        *,
        scenario: str | None = None,
        session_id: str | None = None,
        reload: bool = True,
    ) -> Observation:
        """One turn, observed (and its session reloaded, when it completed)."""
        return await aobserve(
            self.client,
            message,
            session_id=session_id,
            headers=_scenario_headers(scenario),
            reload=reload,
            recorder=self.recorder,
        )

    async def aclose(self) -> None:
        """Close the client, and the HTTP client this observer made, if it made one."""
        await self.client.close()
        if self._http is not None:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
