"""Each hand-written async twin says what its sync half says, but for the differences here.

What `tools/unasync.py` cannot generate stays written twice (the testing kit's
transports, `ReferenceServer.client` / `.async_client`, `Recording.client`, the pytest
fixtures, `display.live` / `alive`, QA's observers and runner); `tests/unasync.py`
finds the twins by name, makes each async one sync and compares. A difference that is
meant goes in `ALLOWED` with its reason (one entry covers every place the same lines
differ in that twin), a twin whose async half does more in `NOT_MIRRORED`; any other
difference fails, and so does an entry that matches nothing any more. Code is quoted
as `ast.unparse` prints it: one statement a line, no comments, its own quotes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from .unasync import PACKAGE, Hunk, Twin, all_twins, block, differences, twin_renames, twins_in


@dataclass(frozen=True)
class Difference:
    """The sync lines, the async lines made sync, and why they differ."""

    sync: str
    async_: str
    why: str

    @property
    def hunk(self) -> Hunk:
        return Hunk(block(self.sync), block(self.async_))


ALLOWED: dict[str, tuple[Difference, ...]] = {
    "testing/_record_transport.py:RecordingTransport.handle_request": (
        Difference(
            sync="""
                raise TypeError('this RecordingTransport wraps an async transport')
            """,
            async_="""
                raise TypeError('this RecordingTransport wraps a sync transport')
            """,
            why="each says which kind of transport it cannot send through",
        ),
    ),
    "testing/pytest_plugin.py:silvia": (
        Difference(
            sync="""
                with silvia_server.client(**_OPTIONS) as client:
            """,
            async_="""
                client = silvia_server.client(**_OPTIONS)
                try:
            """,
            why="a sync fixture cannot `async with`: the async client is closed on a loop "
            "of its own after the test (the test's loop may be gone by then)",
        ),
        Difference(
            sync="",
            async_="""
                finally:
                    _close_on_own_loop(client)
            """,
            why="the other half of the `try` above",
        ),
    ),
}

# Twins whose async half does more than its sync one, so is not a mirror of it.
NOT_MIRRORED = {
    "qa/runner.py:run_script": "`arun_script` runs up to `concurrency` prompts at once, "
    "chains of continued prompts in order; `run_script` runs them one after another",
}

TWINS = all_twins()
RENAMED = twin_renames(TWINS)


def _differences(twin: Twin) -> list[Hunk]:
    return differences((PACKAGE / twin.module).read_text("utf-8"), twin, RENAMED)


def _unlisted(twin: Twin) -> Iterator[Hunk]:
    listed = {difference.hunk for difference in ALLOWED.get(str(twin), ())}
    return (hunk for hunk in _differences(twin) if hunk not in listed)


def test_the_twins_of_the_modules_with_twins_are_found() -> None:
    # The generated I/O has none: each of its modules holds one side.
    assert {str(twin) for twin in TWINS} >= {
        "display/_live.py:live",
        "testing/_server.py:ReferenceServer.client",
        "testing/_recording.py:Recording.client",
        "testing/pytest_plugin.py:silvia",
        "testing/_transport.py:InProcessTransport.handle_request",
        "testing/_record_transport.py:_CapturedStream.close",
        "testing/_record_transport.py:RecordingTransport.handle_request",
        "testing/_record_transport.py:record_turn",
    }


@pytest.mark.parametrize("twin", [twin for twin in TWINS if str(twin) not in NOT_MIRRORED], ids=str)
def test_each_async_twin_is_its_sync_half_made_sync(twin: Twin) -> None:
    unlisted = list(_unlisted(twin))
    assert not unlisted, (
        f"{twin.async_} differs from {twin.sync} in silvia_client/{twin.module}"
        " (- sync, + async made sync); align them, or add to ALLOWED with the reason:\n"
        + "\n".join(hunk.shown() for hunk in unlisted)
    )


def test_every_listed_difference_is_still_there() -> None:
    by_name = {str(twin): twin for twin in TWINS}
    gone = [f"{name}: no such twin" for name in ALLOWED if name not in by_name]
    for name, listed in ALLOWED.items():
        if name in by_name:
            present = set(_differences(by_name[name]))
            gone += [f"{name}: {d.why}" for d in listed if d.hunk not in present]
    assert not gone, "listed differences that are gone:\n" + "\n".join(gone)


def test_every_twin_not_mirrored_is_a_twin_whose_halves_differ() -> None:
    by_name = {str(twin): twin for twin in TWINS}
    assert set(NOT_MIRRORED) <= set(by_name)
    assert all(_differences(by_name[name]) for name in NOT_MIRRORED)


def test_every_listed_difference_says_why() -> None:
    assert all(difference.why.strip() for listed in ALLOWED.values() for difference in listed)
    assert all(why.strip() for why in NOT_MIRRORED.values())


# The checker itself, on a module made up here: it must see drift, and only drift.

TWIN_MODULE = '''
class Reader:
    """Reads."""

    def read(self, source: Iterator[bytes]) -> bytes:
        # a comment the async twin need not repeat
        with self.lock:
            return b"".join(chunk for chunk in source)

    def __iter__(self) -> Generator[bytes, None, None]:
        with self.lock, self.opened() as chunks:
            yield self.read(chunks)


class AsyncReader:
    """The async twin of `Reader`."""

    async def read(self, source: AsyncIterator[bytes]) -> bytes:
        async with self.lock:
            return b"".join([chunk async for chunk in source])

    async def __aiter__(self) -> AsyncGenerator[bytes, None]:
        async with self.lock:
            with self.opened() as chunks:
                yield (await self.read(chunks))
'''


def test_the_checker_passes_twins_that_differ_only_by_the_substitutions() -> None:
    [twin] = twins_in("made_up.py", TWIN_MODULE)
    assert (twin.sync, twin.async_) == ("Reader", "AsyncReader")
    # An async generator cannot be fed to `join`: the one difference.
    assert differences(TWIN_MODULE, twin, twin_renames([twin])) == [
        Hunk(
            "return b''.join((chunk for chunk in source))",
            "return b''.join([chunk for chunk in source])",
        )
    ]


def test_the_checker_sees_a_change_made_on_one_side_only() -> None:
    drifted = TWIN_MODULE.replace("await self.read(chunks)", "await self.read(chunks, 1)")
    [twin] = twins_in("made_up.py", drifted)
    assert Hunk("yield self.read(chunks)", "yield self.read(chunks, 1)") in differences(
        drifted, twin, twin_renames([twin])
    )
