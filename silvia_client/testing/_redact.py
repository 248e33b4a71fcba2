"""Taking things out of a recording: the bearer token always, account identities on request.

Where things are: `scrub_secret` (every recording the capturing side makes)
drops headers holding the token and blanks it in bodies, JSON strings and paths
(a token under 8 characters only as a whole value or word). `redact`
(`Recording.redacted()`) nulls every `provider` and replaces each account id,
in every spelling, by a stable pseudonym (`acct_redacted_0001`, ...), finding
them with `_redact_scan.py` in events cut by `_redact_events.py`. Both edit
spans of the joined body and move chunk boundaries with the text, so chunking
and times survive; only changed events are rewritten. If a found id or a
provider would remain, `redact` raises `RecordingFormatError` naming the chunk.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._recording_format import RecordingFormatError
from ._recording_parts import (
    Headers,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
)
from ._redact_events import EventSpan, data, events, rebuild
from ._redact_scan import Scan, loads
from ._steps import json_bytes

if TYPE_CHECKING:
    from ._recording import Recording

__all__ = ["redact", "scrub_secret"]

TOKEN_MARK = b"<token>"
_SHORT_SECRET = 8

_Edit = tuple[int, int, bytes]  # replace data[start:end] with the bytes

# -- edits on chunked bytes ---------------------------------------------------


def _apply(data: bytes, edits: Sequence[_Edit]) -> bytes:
    out, position = [], 0
    for start, end, replacement in edits:
        out += [data[position:start], replacement]
        position = end
    out.append(data[position:])
    return b"".join(out)


class _Mover:
    """Where each boundary lands once `edits` are applied (inside a span: at its `inside`).

    Boundaries are asked in increasing order, so one pass over the edits serves
    them all: linear in chunks plus edits, not their product.
    """

    def __init__(self, edits: Sequence[_Edit], inside: Literal["start", "end"]) -> None:
        self._edits = edits
        self._inside = inside
        self._next = 0  # the first edit not wholly before the last boundary asked
        self._shift = 0  # what the edits before it changed the length by

    def __call__(self, boundary: int) -> int:
        edits = self._edits
        while self._next < len(edits) and edits[self._next][1] <= boundary:
            start, end, replacement = edits[self._next]
            self._shift += len(replacement) - (end - start)
            self._next += 1
        if self._next < len(edits):
            start, _, replacement = edits[self._next]
            if start < boundary:
                return start + self._shift + (len(replacement) if self._inside == "end" else 0)
        return boundary + self._shift


def _non_overlapping(edits: Iterable[_Edit]) -> list[_Edit]:
    kept: list[_Edit] = []
    for edit in sorted(edits):
        if not kept or edit[0] >= kept[-1][1]:
            kept.append(edit)
    return kept


def rewrite_chunks(
    chunks: Sequence[RecordedChunk], find: Callable[[bytes], Iterable[_Edit]]
) -> tuple[RecordedChunk, ...]:
    """`chunks` with `find`'s edits applied to their joined bytes, boundaries kept."""
    data = b"".join(chunk.data for chunk in chunks)
    return _edited_chunks(chunks, _non_overlapping(find(data)), inside="end")


def _edited_chunks(
    chunks: Sequence[RecordedChunk], edits: Sequence[_Edit], inside: Literal["start", "end"]
) -> tuple[RecordedChunk, ...]:
    """`chunks` with `edits` (sorted, apart) applied to their joined bytes.

    A boundary inside an edited span moves to its `inside` end: a chunk wholly
    inside one is gone, and every other keeps its time.
    """
    if not edits:
        return tuple(chunks)
    new = _apply(b"".join(chunk.data for chunk in chunks), edits)
    moved = _Mover(edits, inside)
    out, start, end = [], 0, 0
    for chunk in chunks:
        end += len(chunk.data)
        stop = moved(end)
        if stop > start:
            out.append(RecordedChunk(chunk.at, new[start:stop]))
            start = stop
    if start < len(new):  # (only when the last boundary moved back to a span's start)
        out.append(RecordedChunk(chunks[-1].at, new[start:]))
    return tuple(out)


def _rewrite_bytes(data: bytes, find: Callable[[bytes], Iterable[_Edit]]) -> bytes:
    return _apply(data, _non_overlapping(find(data)))


def _rewrite_strings(value: Any, find: Callable[[bytes], Iterable[_Edit]]) -> Any:
    """A JSON value with every string (keys included) rewritten."""
    if isinstance(value, str):
        return _rewrite_bytes(value.encode("utf-8"), find).decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [_rewrite_strings(item, find) for item in value]
    if isinstance(value, dict):
        return {
            _rewrite_strings(key, find): _rewrite_strings(item, find) for key, item in value.items()
        }
    return value


def _rewrite(
    recording: Recording,
    find: Callable[[bytes], Iterable[_Edit]],
    keep_header: Callable[[str], bool] = lambda value: True,
    **changes: Any,
) -> Recording:
    request, response, reload = recording.request, recording.response, recording.reload

    def headers(pairs: Headers) -> Headers:
        return tuple(
            (name, _rewrite_strings(value, find)) for name, value in pairs if keep_header(value)
        )

    new_reload = None
    if reload is not None:
        new_reload = RecordedReload(
            _rewrite_strings(reload.path, find),
            reload.status,
            headers(reload.headers),
            _rewrite_bytes(reload.body, find),
        )
    return dataclasses.replace(
        recording,
        request=RecordedRequest(
            request.method,
            _rewrite_strings(request.path, find),
            _rewrite_strings(request.body, find),
        ),
        response=RecordedResponse(
            response.status,
            headers(response.headers),
            rewrite_chunks(response.chunks, find),
            response.end,
            response.ended_at,
        ),
        reload=new_reload,
        **changes,
    )


# -- the token ----------------------------------------------------------------


def _secret_forms(secret: str) -> list[bytes]:
    raw = secret.encode("utf-8")
    escaped = json.dumps(secret)[1:-1].encode("ascii")
    return [raw] if escaped == raw else [raw, escaped]


def _finder(patterns: Sequence[bytes], replacement: bytes) -> Callable[[bytes], Iterator[_Edit]]:
    def find(data: bytes) -> Iterator[_Edit]:
        for pattern in patterns:
            start = data.find(pattern)
            while start != -1:
                yield start, start + len(pattern), replacement
                start = data.find(pattern, start + len(pattern))

    return find


def holds_secret(value: str, secret: str) -> bool:
    """Whether a header value holds `secret` (a short one only as a whole value or word)."""
    if len(secret) >= _SHORT_SECRET:
        return secret in value
    return value.strip() == secret or secret in re.split(r"[\s,;=]+", value)


def scrub_secret(recording: Recording, secret: str) -> Recording:
    """`recording` without `secret` (the bearer token) anywhere; see the module docstring."""
    if not secret:
        return recording
    keep = lambda value: not holds_secret(value, secret)  # noqa: E731
    if len(secret) < _SHORT_SECRET:
        return _rewrite(recording, lambda data: (), keep)
    return _rewrite(recording, _finder(_secret_forms(secret), TOKEN_MARK), keep)


# -- account identities ----------------------------------------------------------


def _encoded(recording: Recording) -> str | None:
    for headers in (
        recording.response.headers,
        recording.reload.headers if recording.reload else (),
    ):
        for name, value in headers:
            if name == "content-encoding" and value.strip().lower() not in ("", "identity"):
                return value
    return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _decoded(data: bytes | None) -> tuple[bool, Any]:
    """(True, value) when `data` is JSON, else (False, None)."""
    return (False, None) if data is None else loads(data)


class _Event:
    """One event of the response: its span, and its data decoded when it is JSON."""

    def __init__(self, body: bytes, span: EventSpan) -> None:
        self.span = span
        self.raw = body[span.start : span.end]
        self.is_json, self.value = _decoded(data(span))

    def find(self, scan: Scan) -> None:
        if self.is_json:
            scan.find(self.value)
        else:
            scan.find_text(_text(self.raw))

    def redacted(self, scan: Scan) -> bytes:
        if self.is_json:
            try:
                value, changed = scan.redact(self.value)
            except RecursionError:  # deeper than a walk can go: edited as text
                return scan.replace_bytes(self.raw)
            return rebuild(self.span, json_bytes(value) if changed else None, scan.replace_bytes)
        return scan.replace_bytes(self.raw)


def _left_in_body(scan: Scan, data: bytes) -> str | None:
    """What redaction takes out that `data` (a body, or an event) still holds, or None."""
    return _left_in_json(scan, data, data)


def _left_in_json(scan: Scan, json_text: bytes, raw: bytes) -> str | None:
    """`_left_in_body` for `raw` whose JSON (if it is any) is `json_text`."""
    is_json, value = loads(json_text)
    if is_json:
        try:
            return scan.left_in(value) or scan.left_in_bytes(raw, providers=False)
        except RecursionError:
            pass
    return scan.left_in_bytes(raw)


def _refuse_leftovers(scan: Scan, recording: Recording) -> None:
    """Raise, naming the chunk (or line), if a found id or a provider member remains."""
    response = recording.response
    body = response.body
    ends = list(itertools.accumulate(len(chunk.data) for chunk in response.chunks))
    for span in events(body):
        raw = body[span.start : span.end]
        found = _left_in_json(scan, data(span) or b"", raw)
        if found is not None:
            chunk = min(bisect.bisect_left(ends, span.end), len(ends) - 1)
            raise RecordingFormatError(
                f"cannot redact chunk {chunk + 1} of the response: {found} would remain "
                "in an event redaction cannot read; the copy is not written",
                line=chunk + 4,
            )
    request = recording.request
    for found, where, line in [
        (scan.left_in(request.body) or scan.left_in_text(request.path), "the request", 2),
        (
            scan.left_in([value for _, value in response.headers]),
            "the response headers",
            3,
        ),
    ]:
        if found is not None:
            raise RecordingFormatError(f"cannot redact {where}: {found} would remain", line=line)
    reload = recording.reload
    if reload is not None:
        found = _left_in_body(scan, reload.body) or scan.left_in(
            [reload.path, *(value for _, value in reload.headers)]
        )
        if found is not None:
            raise RecordingFormatError(
                f"cannot redact the reload: {found} would remain",
                line=len(response.chunks) + 5,
            )


def redact(recording: Recording) -> Recording:
    """`recording` with providers null and account ids pseudonymized; see the module docstring."""
    encoding = _encoded(recording)
    if encoding is not None:
        raise ValueError(f"cannot redact a body sent with Content-Encoding: {encoding}")
    request, response, reload = recording.request, recording.response, recording.reload
    body = response.body
    spans = [_Event(body, span) for span in events(body)]

    scan = Scan()
    scan.find(request.body)
    scan.find_text(request.path)
    for event in spans:
        event.find(scan)
    reload_json, reload_value = _decoded(reload.body if reload is not None else None)
    if reload is not None:
        scan.find(reload_value) if reload_json else scan.find_text(_text(reload.body))
    scan.freeze(
        [json.dumps(request.body, ensure_ascii=False), request.path, _text(body)]
        + ([_text(reload.body)] if reload is not None else [])
    )

    edits: list[_Edit] = []
    for event in spans:
        new = event.redacted(scan)
        if new != event.raw:
            edits.append((event.span.start, event.span.end, new))

    def headers(pairs: Headers) -> Headers:
        return tuple((name, scan.replace_text(value)) for name, value in pairs)

    new_reload = None
    if reload is not None:
        new_body = _redacted_body(scan, reload.body, reload_json, reload_value)
        new_reload = RecordedReload(
            scan.replace_text(reload.path),
            reload.status,
            _with_length(headers(reload.headers), len(new_body)),
            new_body,
        )
    redacted = dataclasses.replace(
        recording,
        request=RecordedRequest(
            request.method, scan.replace_text(request.path), scan.redact(request.body)[0]
        ),
        response=RecordedResponse(
            response.status,
            headers(response.headers),
            _edited_chunks(response.chunks, edits, inside="start"),
            response.end,
            response.ended_at,
        ),
        reload=new_reload,
        is_redacted=True,
    )
    _refuse_leftovers(scan, redacted)
    return redacted


def _with_length(headers: Headers, length: int) -> Headers:
    """`headers` with a recorded Content-Length saying the redacted body's length."""
    return tuple(
        (name, str(length) if name == "content-length" else value) for name, value in headers
    )


def _redacted_body(scan: Scan, body: bytes, is_json: bool, value: Any) -> bytes:
    if is_json:
        try:
            new, changed = scan.redact(value)
        except RecursionError:
            return scan.replace_bytes(body)
        return json_bytes(new) if changed else body
    return scan.replace_bytes(body)
