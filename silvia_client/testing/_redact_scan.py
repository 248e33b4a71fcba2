"""What redaction looks for, and the edits it makes, on decoded JSON and on plain text.

Where things are: `Scan` holds the account ids found (and, once `freeze()`-d,
their pseudonyms); `loads` reads JSON keeping every member as written, so a key
written twice is seen twice. Ids stand under `accountId`, the doc's id columns
and any `*_account_id`, in strings that are JSON themselves, and in key/value
text (`_KV_ID`); a `provider` member anywhere, or `provider:` in text, becomes
null. Each id is replaced in every spelling a reader decodes to it
(`Scan.spelled`). Nothing here raises on odd input: what does not parse is text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..citations import is_account_id
from ..citations._accounts import ACCOUNT_ID_COLUMNS
from ._steps import json_bytes

__all__ = ["PSEUDONYM", "Members", "Scan", "dumps_like", "loads"]

PSEUDONYM = "acct_redacted_%04d"
"""A pseudonym: it obeys the doc's id rule, so a replay still types the target."""

_ID_KEYS = frozenset({"accountId", *(column for column, _ in ACCOUNT_ID_COLUMNS)})
PROVIDER_KEY = "provider"


def is_id_key(key: object) -> bool:
    """Whether a member named `key` holds an account id (the doc's columns, `*_account_id`)."""
    return isinstance(key, str) and (key in _ID_KEYS or key.endswith("_account_id"))


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
        text = json.dumps(value, separators=(", ", ": "), ensure_ascii=original.isascii())
        return text if original.isascii() else _no_surrogates(text)
    return json_bytes(value).decode("utf-8")


def _no_surrogates(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(json.loads(text), separators=(", ", ": "))
    return text


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


def _looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped[:1] in ("{", "[")


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
                if is_id_key(key):
                    self._found(item)
                self.find(item)
        elif isinstance(value, list):
            for item in value:
                self.find(item)
        elif isinstance(value, str):
            self.find_text(value)

    def find_text(self, text: str) -> None:
        """Ids in text: a JSON document's own, and those after an id key in key/value text."""
        if _looks_like_json(text):
            parsed, value = loads(text)
            if parsed:
                self.find(value)
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
        if _looks_like_json(text):
            parsed, value = loads(text)
            if parsed and isinstance(value, (dict, list)):
                new, changed = self.redact(value)
                return self.replace_text(dumps_like(new, text)) if changed else text
        return self.replace_text(text)

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
                found = self._left_in_string(item)
                if found is not None:
                    return found
            if key is not None:
                found = self.left_in_text(key)
                if found is not None:
                    return found
        return None

    def _left_in_string(self, text: str) -> str | None:
        if _looks_like_json(text):
            parsed, value = loads(text)
            if parsed and isinstance(value, (dict, list)):
                found = self.left_in(value)
                if found is not None:
                    return found
        return self.left_in_text(text)


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
