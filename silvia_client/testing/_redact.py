"""Taking things out of a recording: the bearer token always, account identities on request.

Where things are: `scrub_secret` (every recording the capturing side makes)
drops headers holding the token and blanks it in bodies, JSON strings and paths
(a token under 8 characters only as a whole value or word). `redact`
(`Recording.redacted()`) nulls every `provider` and replaces each account id,
in every spelling, by a stable pseudonym (`acct_redacted_0001`, ...). Both edit
spans of the joined body and move chunk boundaries with the text, so chunking
and times survive; only changed events are rewritten. If a found id or a
provider would remain, `redact` raises `RecordingFormatError` naming the chunk.

Sections, in order: what redaction looks for (`Scan`; `loads` keeps every
member as written, so a key written twice is seen twice): ids under `accountId`,
the doc's id columns and any `*_account_id`, in JSON strings too, and in
key/value text (`_KV_ID`), each replaced in every spelling a reader decodes to
it; a `provider` member, or `provider:` in text, becomes null. Nothing there
raises on odd input: what does not parse is text. Then the body cut into SSE
events with their byte spans (`events`, `data`, `rebuild`: not the SDK's `_sse`,
since redaction needs spans); then the edits on chunked bytes, the token, and
the account identities.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..citations import is_account_id
from ..citations._accounts import ACCOUNT_ID_COLUMNS
from ._recording_parts import (
    Headers,
    RecordedChunk,
    RecordedReload,
    RecordedRequest,
    RecordedResponse,
    RecordingFormatError,
)
from ._steps import json_bytes, json_text

if TYPE_CHECKING:
    from ._recording import Recording


PSEUDONYM = "acct_redacted_%04d"
"""A pseudonym: it obeys the doc's id rule, so a replay still types the target."""

_ID_KEYS = frozenset({"accountId", *(column for column, _ in ACCOUNT_ID_COLUMNS)})
PROVIDER_KEY = "provider"


class Members(dict[str, Any]):
    """A JSON object as a dict (the last of a repeated key wins, as readers do), and
    `pairs`: every member as written, in order."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def loads(text: str | bytes) -> tuple[bool, Any]:
    """(True, value) when `text` is one JSON document, else (False, None)."""
    try:
        return True, json.loads(text, object_pairs_hook=Members)
    except (ValueError, RecursionError):
        return False, None


def dumps_like(value: Any, original: str) -> str:
    """`value` as JSON text, spaced and escaped as `original` seems to be."""
    if '": ' in original or '", ' in original:  # Python's json.dumps default
        if original.isascii():
            return json.dumps(value, separators=(", ", ": "))
        return json_text(value, (", ", ": "))
    return json_text(value)


def _members(value: dict[str, Any]) -> list[tuple[str, Any]]:
    return value.pairs if isinstance(value, Members) else list(value.items())


# -- spellings -----------------------------------------------------------------------


def _char(c: str, percent: bool) -> str:
    """A regex for one ASCII character, raw or JSON-escaped (any backslashes), or `%XX`."""
    code = f"{ord(c):02x}"
    hexes = "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in code)
    forms = [re.escape(c), r"\\+u00" + hexes]
    if percent:
        forms.append("%" + hexes)
    return "(?:" + "|".join(forms) + ")"


def _spelled(word: str, *, percent: bool) -> str:
    return "".join(_char(c, percent) for c in word)


_ESCAPE = re.compile(r"\\+u00([0-9a-fA-F]{2})|%([0-9a-fA-F]{2})")


def unescaped(text: str) -> str:
    """`text` with every `\\u00XX` (any backslashes) and `%XX` read as its character."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)


_WORD = r"(?:[A-Za-z0-9_]|\\+u00[0-9a-fA-F]{2})"
_QUOTE = r"""\\*["']?"""
_KEY_ID = (
    rf"(?<![A-Za-z0-9_])(?:{_WORD}*{_spelled('_', percent=False)})?"
    rf"(?:{_spelled('account_id', percent=False)}|{_spelled('account_uuid', percent=False)})"
    rf"|(?<![A-Za-z0-9_]){_spelled('accountId', percent=False)}"
)
_ID_VALUE = r"(?:[A-Za-z0-9_-]|\\+u00[0-9a-fA-F]{2}|%[0-9a-fA-F]{2}){16,128}"
_KV_ID = re.compile(
    rf"{_QUOTE}(?:{_KEY_ID}){_QUOTE}\s*[:=]\s*{_QUOTE}({_ID_VALUE})(?![A-Za-z0-9_-])"
)
_PROVIDER_QUOTED = rf"(?<![A-Za-z0-9_])\\*[\"']{_spelled(PROVIDER_KEY, percent=False)}\\*[\"']"
_PROVIDER_BARE = r"(?:^|(?<=[{,;(\[\n]))[ \t]*provider"
_NOT_NULL = r"(?!null\b|None\b)"
_VALUE = r"""(?:\\*"(?:[^"\\]|\\.)*?\\*"|'[^'\n]*'|[^\s,;{}\[\])"']+)"""
_TEXT_PROVIDER = re.compile(
    rf"((?:{_PROVIDER_QUOTED}|{_PROVIDER_BARE})\s*[:=]\s*){_NOT_NULL}({_VALUE})", re.MULTILINE
)
_TEXT_PROVIDER_ANY = re.compile(
    rf"(?:{_PROVIDER_QUOTED}|{_PROVIDER_BARE})\s*[:=]\s*{_NOT_NULL}\S", re.MULTILINE
)


def _container(text: str) -> Any:
    """The JSON object or array `text` is, else None."""
    if text.lstrip()[:1] in ("{", "["):
        parsed, value = loads(text)
        if parsed:  # (an object or an array, by its first character)
            return value
    return None


class Scan:
    """Account ids found in a recording, in order, and (once frozen) their pseudonyms."""

    def __init__(self) -> None:
        self.ids: dict[str, None] = {}
        self.names: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._bytes_pattern: re.Pattern[bytes] | None = None
        self._order: list[str] = []

    # -- finding -----------------------------------------------------------------

    def _found(self, candidate: object) -> None:
        if isinstance(candidate, str):
            candidate = unescaped(candidate)
            if is_account_id(candidate):
                self.ids.setdefault(candidate, None)

    def find(self, value: Any) -> None:
        """Every id standing where ids stand in a decoded JSON value (and its strings)."""
        if isinstance(value, dict):
            for key, item in _members(value):
                if key in _ID_KEYS or key.endswith("_account_id"):  # where an id stands
                    self._found(item)
                self.find(item)
        elif isinstance(value, list):
            for item in value:
                self.find(item)
        elif isinstance(value, str):
            self.find_text(value)

    def find_text(self, text: str) -> None:
        """Ids in text: a JSON document's own, and those after an id key in key/value text."""
        self.find(_container(text))
        for match in _KV_ID.finditer(text):
            self._found(match.group(1))

    # -- replacing ---------------------------------------------------------------

    def freeze(self, taken: Iterable[str]) -> None:
        """Give each id its pseudonym: by first appearance, none the recording holds already."""
        held = "\n".join(taken)
        number = 0
        for account_id in self.ids:
            while True:
                number += 1
                name = PSEUDONYM % number
                if name not in held and not any(found in name for found in self.ids):
                    break
            self.names[account_id] = name
        if self.ids:
            # Longest first: an id inside a longer one never leaves the longer one's tail.
            alternatives = sorted(self.ids, key=len, reverse=True)
            pattern = "|".join(f"({_spelled(i, percent=True)})" for i in alternatives)
            self._pattern = re.compile(pattern)
            self._bytes_pattern = re.compile(pattern.encode("ascii"))
            self._order = alternatives

    def _name(self, match: re.Match[Any]) -> str:
        assert match.lastindex is not None
        return self.names[self._order[match.lastindex - 1]]

    def replace_text(self, text: str) -> str:
        """`text` with each id (any spelling) its pseudonym, and each text provider null."""
        if self._pattern is not None:
            text = self._pattern.sub(self._name, text)
        return _TEXT_PROVIDER.sub(r"\1null", text)

    def replace_bytes(self, data: bytes) -> bytes:
        """`replace_text` on bytes that need not be UTF-8 (ids and the key are ASCII)."""
        if self._bytes_pattern is not None:
            data = self._bytes_pattern.sub(lambda m: self._name(m).encode("ascii"), data)
        return _TEXT_PROVIDER_BYTES.sub(rb"\1null", data)

    def redact(self, value: Any) -> tuple[Any, bool]:
        """(a decoded JSON value redacted, whether anything changed)."""
        if isinstance(value, dict):
            pairs = _members(value)
            changed = len(pairs) != len(value)  # a repeated key: written once, as read
            out: dict[str, Any] = {}
            for key, item in value.items():
                new_key = self.replace_text(key)
                if key == PROVIDER_KEY:
                    new_item, item_changed = None, item is not None
                else:
                    new_item, item_changed = self.redact(item)
                changed = changed or item_changed or new_key != key
                out[new_key] = new_item
            return (out, True) if changed else (value, False)
        if isinstance(value, list):
            items = [self.redact(item) for item in value]
            if any(changed for _, changed in items):
                return [item for item, _ in items], True
            return value, False
        if isinstance(value, str):
            new = self._redact_string(value)
            return new, new != value
        return value, False

    def _redact_string(self, text: str) -> str:
        value = _container(text)
        if value is None:
            return self.replace_text(text)
        new, changed = self.redact(value)
        return self.replace_text(dumps_like(new, text)) if changed else text

    # -- what would remain -------------------------------------------------------

    def left_in_text(self, text: str) -> str | None:
        """What `text` still holds that redaction removes ("an account id", ...), or None."""
        if self._pattern is not None and self._pattern.search(text):
            return "an account id"
        if _TEXT_PROVIDER_ANY.search(text):
            return "a provider member"
        return None

    def left_in_bytes(self, data: bytes, *, providers: bool = True) -> str | None:
        """`left_in_text` on bytes (the ids only, without `providers`)."""
        if self._bytes_pattern is not None and self._bytes_pattern.search(data):
            return "an account id"
        if providers and _TEXT_PROVIDER_ANY_BYTES.search(data):
            return "a provider member"
        return None

    def left_in(self, value: Any) -> str | None:
        """`left_in_text` over a decoded JSON value: also any non-null `provider` member."""
        for key, item in _walk(value):
            if key == PROVIDER_KEY and item is not None:
                return "a provider member"
            if isinstance(item, str):
                found = self.left_in(_container(item)) or self.left_in_text(item)
                if found is not None:
                    return found
            if key is not None and (found := self.left_in_text(key)) is not None:
                return found
        return None


_TEXT_PROVIDER_BYTES = re.compile(_TEXT_PROVIDER.pattern.encode("ascii"), re.MULTILINE)
_TEXT_PROVIDER_ANY_BYTES = re.compile(_TEXT_PROVIDER_ANY.pattern.encode("ascii"), re.MULTILINE)


def _walk(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """(member name or None, value) for `value` and everything inside it."""
    yield key, value
    if isinstance(value, dict):
        for name, item in _members(value):
            yield from _walk(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


# -- a recorded stream cut into its SSE events ------------------------------------

_TERMINATOR = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class EventSpan:
    """One event of a body: `body[start:end]` is its lines, terminators included."""

    start: int
    end: int
    lines: tuple[tuple[bytes, bytes], ...]  # (line, its terminator)


def events(body: bytes) -> Iterator[EventSpan]:
    """Every event of `body`, in order (see the module docstring)."""
    lines: list[tuple[bytes, bytes]] = []
    start = position = 0
    for match in _TERMINATOR.finditer(body):
        line = body[position : match.start()]
        if line:
            if not lines:
                start = position
            lines.append((line, match.group()))
        elif lines:
            yield EventSpan(start, position, tuple(lines))
            lines = []
        position = match.end()
    if position < len(body):
        if not lines:
            start = position
        lines.append((body[position:], b""))
    if lines:
        yield EventSpan(start, len(body), tuple(lines))


def _field(line: bytes) -> tuple[bytes, bytes]:
    name, colon, value = line.partition(b":")
    if colon and value.startswith(b" "):
        value = value[1:]
    return name, value


def data(span: EventSpan) -> bytes | None:
    """The event's data (its `data` lines' values joined by newlines), or None if it has none."""
    values = [
        value for name, value in map(_field, (line for line, _ in span.lines)) if name == b"data"
    ]
    return b"\n".join(values) if values else None


def rebuild(span: EventSpan, new_data: bytes | None, other: Callable[[bytes], bytes]) -> bytes:
    """The event with `new_data` as its data (None: its data lines as they were), and
    every other line passed through `other`."""
    out: list[bytes] = []
    written = False
    for line, terminator in span.lines:
        name, _ = _field(line)
        if name == b"data" and new_data is not None:
            if not written:
                spaced = line.startswith(b"data: ")
                out += [b"data: " if spaced else b"data:", new_data, terminator]
                written = True
        elif name == b"data":
            out += [line, terminator]
        else:
            out += [other(line), terminator]
    return b"".join(out)


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
    Boundaries come in increasing order: one pass over the edits serves them all."""

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


def _edited_chunks(
    chunks: Sequence[RecordedChunk], edits: Sequence[_Edit], inside: Literal["start", "end"]
) -> tuple[RecordedChunk, ...]:
    """`chunks` with `edits` (sorted, apart) applied to their joined bytes; a boundary
    inside an edited span moves to its `inside` end, and every chunk keeps its time."""
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


def _rebuilt(
    recording: Recording,
    text: Callable[[str], str],
    value: Callable[[Any], Any],
    chunks: tuple[RecordedChunk, ...],
    reload_body: Callable[[bytes], bytes],
    keep_header: Callable[[str], bool] = lambda value: True,
    *,
    recount: bool = False,
    **changes: Any,
) -> Recording:
    """`recording` with `text` applied to its paths and header values, `value` to the
    request's JSON body, `chunks` as the response's and `reload_body` to the reload's;
    with `recount`, a reload's Content-Length says its new length."""
    request, response, reload = recording.request, recording.response, recording.reload

    def headers(pairs: Headers) -> Headers:
        return tuple((name, text(value)) for name, value in pairs if keep_header(value))

    new_reload = None
    if reload is not None:
        body = reload_body(reload.body)
        kept = headers(reload.headers)
        if recount:
            kept = tuple(
                (name, str(len(body)) if name == "content-length" else v) for name, v in kept
            )
        new_reload = RecordedReload(text(reload.path), reload.status, kept, body)
    return dataclasses.replace(
        recording,
        request=RecordedRequest(request.method, text(request.path), value(request.body)),
        response=RecordedResponse(
            response.status, headers(response.headers), chunks, response.end, response.ended_at
        ),
        reload=new_reload,
        **changes,
    )


# -- the token ----------------------------------------------------------------


def scrub_secret(recording: Recording, secret: str) -> Recording:
    """`recording` without `secret` (the bearer token) anywhere; see the module docstring."""
    if not secret:
        return recording
    short = len(secret) < _SHORT_SECRET
    # As written, and as a JSON string escapes it (a repeat finds the same span: dropped).
    forms = () if short else (secret.encode("utf-8"), json.dumps(secret)[1:-1].encode("ascii"))

    def find(data: bytes) -> Iterator[_Edit]:
        for form in forms:
            start = data.find(form)
            while start != -1:
                yield start, start + len(form), TOKEN_MARK
                start = data.find(form, start + len(form))

    def strings(value: Any) -> Any:
        return _rewrite_strings(value, find)

    def keep(value: str) -> bool:  # a header value; a short secret only as a whole value or word
        if not short:
            return secret not in value
        return value.strip() != secret and secret not in re.split(r"[\s,;=]+", value)

    edits = _non_overlapping(find(recording.response.body))
    chunks = _edited_chunks(recording.response.chunks, edits, inside="end")
    return _rebuilt(recording, strings, strings, chunks, lambda b: _rewrite_bytes(b, find), keep)


# -- account identities ----------------------------------------------------------


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class _Part:
    """An event of the response (with its `span`), or the reload's body; its JSON decoded."""

    def __init__(self, raw: bytes, json_text: bytes | None, span: EventSpan | None = None) -> None:
        self.raw, self.span = raw, span
        decoded: tuple[bool, Any] = (False, None) if json_text is None else loads(json_text)
        self.is_json, self.value = decoded

    def find(self, scan: Scan) -> None:
        if self.is_json:
            scan.find(self.value)
        else:
            scan.find_text(_text(self.raw))

    def redacted(self, scan: Scan) -> bytes:
        if not self.is_json:
            return scan.replace_bytes(self.raw)
        try:
            value, changed = scan.redact(self.value)
        except RecursionError:  # deeper than a walk can go: edited as text
            return scan.replace_bytes(self.raw)
        new = json_bytes(value) if changed else None
        if self.span is not None:
            return rebuild(self.span, new, scan.replace_bytes)
        return self.raw if new is None else new


def _left_in_json(scan: Scan, json_text: bytes, raw: bytes) -> str | None:
    """What redaction takes out that `raw` (an event, a body) still holds, or None; its
    JSON, if it is any, is `json_text`."""
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
        (scan.left_in([value for _, value in response.headers]), "the response headers", 3),
    ]:
        if found is not None:
            raise RecordingFormatError(f"cannot redact {where}: {found} would remain", line=line)
    reload = recording.reload
    if reload is not None:
        found = _left_in_json(scan, reload.body, reload.body) or scan.left_in(
            [reload.path, *(value for _, value in reload.headers)]
        )
        if found is not None:
            raise RecordingFormatError(
                f"cannot redact the reload: {found} would remain", line=len(response.chunks) + 5
            )


def redact(recording: Recording) -> Recording:
    """`recording` with providers null and account ids pseudonymized; see the module docstring."""
    request, response, reload = recording.request, recording.response, recording.reload
    for name, value in (*response.headers, *(reload.headers if reload else ())):
        if name == "content-encoding" and value.strip().lower() not in ("", "identity"):
            raise ValueError(f"cannot redact a body sent with Content-Encoding: {value}")
    body = response.body
    spans = [_Part(body[span.start : span.end], data(span), span) for span in events(body)]
    reloaded = None if reload is None else _Part(reload.body, reload.body)

    scan = Scan()
    scan.find(request.body)
    scan.find_text(request.path)
    for part in [*spans, *([reloaded] if reloaded is not None else [])]:
        part.find(scan)
    scan.freeze(
        [json.dumps(request.body, ensure_ascii=False), request.path, _text(body)]
        + ([_text(reload.body)] if reload is not None else [])
    )

    edits: list[_Edit] = []
    for event in spans:
        new = event.redacted(scan)
        if new != event.raw and event.span is not None:
            edits.append((event.span.start, event.span.end, new))

    redacted = _rebuilt(
        recording,
        scan.replace_text,
        lambda value: scan.redact(value)[0],
        _edited_chunks(response.chunks, edits, inside="start"),
        lambda body: body if reloaded is None else reloaded.redacted(scan),
        recount=True,
        is_redacted=True,
    )
    _refuse_leftovers(scan, redacted)
    return redacted
