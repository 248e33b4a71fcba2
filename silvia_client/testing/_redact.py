"""Taking things out of a recording: the bearer token always, account identities on request.

Both work on the bytes, not on a re-encoding of them: every edit replaces a
span of the joined body, and the chunk boundaries move with the text around
them (a boundary inside a replaced span moves to its end), so the chunking and
the arrival times survive, and a stream that is not JSON (a fault, a malformed
event) is edited as safely as one that is.

`scrub_secret` (run by the capturing side on every recording it makes):

- drops every header whose value holds the token (the forbidden headers are
  dropped by the `Recording` itself);
- replaces the token in the bodies, the request's JSON strings and the paths
  with `<token>`, raw and JSON-escaped. A token under 8 characters (a test
  token such as `any`) is matched only as a whole header value or word there,
  and left in bodies, where it would blank ordinary words; real tokens are long.

`redact` (`Recording.redacted()`, `silvia record --redact`):

- every JSON member named `provider` with a string value becomes `null`;
- every account id becomes a pseudonym, `acct_redacted_0001` and so on, by
  order of first appearance: the same id always gets the same pseudonym in
  one recording, and a pseudonym obeys the doc's id rule, so the replay still
  parses with typed account targets. The ids are those of `accountId` members
  (targets) and those written after an id column's name (`source_account_id`,
  `snaptrade_account_id`, `manual_account_uuid`, `account_uuid`, `account_id`,
  as `name: id`, `name=id` or a JSON member), in the response, the reload and
  the request; each is then replaced wherever it appears as a whole word
  (`cited_text`, the raw `message` event, the answer's text). A value that
  breaks the id rule is not an account id by the doc's definition and is kept.

A body sent with a `Content-Encoding` cannot be edited as text: `redact`
refuses it rather than share it unredacted (the capturing side asks for
`identity`, so a server that compresses anyway is the only source of one).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..citations import is_account_id
from ._recording import (
    Headers,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    Recording,
)

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


def _moved(boundary: int, edits: Sequence[_Edit]) -> int:
    """Where `boundary` lands once `edits` are applied (inside a span: at its end)."""
    shift = 0
    for start, end, replacement in edits:
        if end <= boundary:
            shift += len(replacement) - (end - start)
        elif start < boundary:
            return start + shift + len(replacement)
        else:
            break
    return boundary + shift


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
    edits = _non_overlapping(find(data))
    if not edits:
        return tuple(chunks)
    new = _apply(data, edits)
    out, start, end = [], 0, 0
    for chunk in chunks:
        end += len(chunk.data)
        stop = _moved(end, edits)
        if stop > start:  # a chunk wholly inside a replaced span is gone
            out.append(RecordedChunk(chunk.at, new[start:stop]))
            start = stop
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

_ID = rb"[A-Za-z0-9_-]{16,128}"
_TARGET_ID = re.compile(rb'"accountId"\s*:\s*"(' + _ID + rb')"')
_COLUMN_ID = re.compile(
    rb"(?<![A-Za-z0-9_])(?:source_account_id|snaptrade_account_id|manual_account_uuid"
    rb"|account_uuid|account_id)"
    rb'\\?"?\s*[:=]\s*\\?"?(' + _ID + rb")(?![A-Za-z0-9_-])"
)
_PROVIDER = re.compile(rb'("provider"\s*:\s*)"(?:[^"\\]|\\.)*"')


def _texts(recording: Recording) -> Iterator[bytes]:
    yield json.dumps(recording.request.body, ensure_ascii=False).encode("utf-8")
    yield recording.response.body
    if recording.reload is not None:
        yield recording.reload.body


def _account_ids(recording: Recording) -> list[bytes]:
    """Every account id in the recording, in order of first appearance."""
    found: dict[bytes, None] = {}
    for data in _texts(recording):
        matches = [*_TARGET_ID.finditer(data), *_COLUMN_ID.finditer(data)]
        for match in sorted(matches, key=lambda m: m.start(1)):
            if is_account_id(match.group(1).decode("ascii")):
                found.setdefault(match.group(1), None)
    return list(found)


def _pseudonyms(ids: Sequence[bytes], taken: bytes) -> dict[bytes, bytes]:
    names: dict[bytes, bytes] = {}
    number = 0
    for account_id in ids:
        while True:
            number += 1
            name = b"acct_redacted_%04d" % number
            if name not in taken:  # never a name the recording already holds
                break
        names[account_id] = name
    return names


def _encoded(recording: Recording) -> str | None:
    for headers in (
        recording.response.headers,
        recording.reload.headers if recording.reload else (),
    ):
        for name, value in headers:
            if name == "content-encoding" and value.strip().lower() not in ("", "identity"):
                return value
    return None


def redact(recording: Recording) -> Recording:
    """`recording` with providers null and account ids pseudonymized; see the module docstring."""
    encoding = _encoded(recording)
    if encoding is not None:
        raise ValueError(f"cannot redact a body sent with Content-Encoding: {encoding}")
    ids = _account_ids(recording)
    names = _pseudonyms(ids, b"\n".join(_texts(recording)))
    word = (
        re.compile(
            rb"(?<![A-Za-z0-9_-])(" + b"|".join(map(re.escape, ids)) + rb")(?![A-Za-z0-9_-])"
        )
        if ids
        else None
    )

    def find(data: bytes) -> Iterator[_Edit]:
        for match in _PROVIDER.finditer(data):
            yield match.start(), match.end(), match.group(1) + b"null"
        if word is not None:
            for match in word.finditer(data):
                yield match.start(), match.end(), names[match.group(1)]

    return _rewrite(recording, find, is_redacted=True)
