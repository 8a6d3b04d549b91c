"""Reading Codex's config.toml, and the few surgical edits rose makes to it.

Python 3.11+ reads TOML with the standard library's ``tomllib``. Python 3.10 has none, and rose takes no
dependency for it: there a small reader takes over that understands what rose needs to look up (tables, dotted and
quoted keys, strings, booleans, numbers) and skips values it does not model (arrays, inline tables, multi-line
strings), marking them `OPAQUE` so a caller can tell "absent" from "present but not understood".

rose never rewrites the file through a TOML library (that would drop the user's comments and layout). It appends
its own tables at the end and removes exactly those again, each introduced by a comment line with `MARK`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from rose.errors import TomlError

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (~7 ms of `rose doctor`)
    from types import ModuleType
    from typing import Any

_UNLOADED = object()
_tomllib: Any = _UNLOADED   # the standard library's TOML reader once _reader has looked; None on Python 3.10


def _reader() -> ModuleType | None:
    """The standard library's TOML reader (Python 3.11+), imported on first use: ~15 ms (its regular expressions)
    that `rose doctor` spends only when Codex has a config to read. None on Python 3.10."""
    global _tomllib
    if _tomllib is _UNLOADED:
        try:
            import tomllib as reader
        except ImportError:  # Python 3.10
            reader = None   # type: ignore[assignment]
        _tomllib = reader
    return _tomllib


MARK = "# rose-managed:"




class _Opaque:
    def __repr__(self) -> str:
        return "OPAQUE"


OPAQUE: Any = _Opaque()  # a value the fallback reader saw but does not model (array, inline table, ...)


def loads(text: str) -> dict[str, Any]:
    """Parse TOML. Raises TomlError. With tomllib the result is exact; without, values it skips are OPAQUE."""
    if not text:
        return {}   # no file (the usual Codex config a check reads): nothing to parse, no parser to load
    reader = _reader()
    if reader is not None:
        try:
            return reader.loads(text)
        except reader.TOMLDecodeError as exc:
            raise TomlError(str(exc)) from None
    return _fallback_loads(text)


def exact() -> bool:
    """True when `loads` is a full parser (Python 3.11+)."""
    return _reader() is not None


def quote(value: str) -> str:
    """A TOML basic string. JSON's string syntax is a subset TOML accepts (escapes \\" \\\\ \\n \\uXXXX)."""
    return json.dumps(value, ensure_ascii=False)


def dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


# -- surgical edits ----------------------------------------------------------------------------------------------
def value(item: str | list[str]) -> str:
    """A string, or an array of strings, as TOML."""
    if isinstance(item, list):
        return "[" + ", ".join(quote(v) for v in item) + "]"
    return quote(item)


def append_tables(text: str, tables: Sequence[tuple[str, str, Mapping[str, str | list[str]]]]) -> str:
    """``text`` with one table per (comment, header, {key: string or list of strings}) appended, each introduced by
    a ``# rose-managed: <comment>`` line and separated by a blank line."""
    if not tables:
        return text
    chunks = []
    for comment, header, values in tables:
        body = "".join(f"{key} = {value(item)}\n" for key, item in values.items())
        chunks.append(f"{MARK} {comment}\n[{header}]\n{body}")
    prefix = text
    if prefix and not prefix.endswith("\n"):
        prefix += "\n"
    if prefix.strip():
        prefix += "\n"
    return prefix + "\n".join(chunks)


_HEADER = re.compile(r"^\s*\[")


def remove_marked_tables(text: str, select: Callable[[str], bool] | None = None) -> tuple[str, int]:
    """Remove every table introduced by a ``# rose-managed:`` line (or only those whose header ``select`` accepts):
    the mark, the header, the table's key lines up to the next table (comments and blank lines right before the
    next header stay: they belong to it), and the blank line rose put before the mark. Returns (text, removed)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    removed = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if (line.startswith(MARK) and i + 1 < len(lines) and _HEADER.match(lines[i + 1])
                and (select is None or select(lines[i + 1].strip()[1:-1]))):
            j = i + 2
            while j < len(lines) and not _HEADER.match(lines[j]):
                j += 1
            # comments / blank lines directly above the next header are that table's prefix: keep them
            k = j
            while k > i + 2 and (not lines[k - 1].strip() or lines[k - 1].lstrip().startswith("#")):
                k -= 1
            if out and not out[-1].strip():
                out.pop()
            elif k < j and not lines[k].strip():  # no blank line before us: drop the one after us instead
                k += 1
            removed += 1
            i = k
            continue
        out.append(line)
        i += 1
    return "".join(out), removed


def marked_headers(text: str) -> list[str]:
    """The header lines (without brackets) of the tables rose marked."""
    lines = text.splitlines()
    return [lines[i + 1].strip()[1:-1] for i in range(len(lines) - 1)
            if lines[i].startswith(MARK) and _HEADER.match(lines[i + 1])]


def header_key(header: str) -> list[str]:
    """``hooks.state."a b"`` -> ["hooks", "state", "a b"]. Raises TomlError."""
    cur = _Cursor(header, 0)
    parts = cur.key()
    if not cur.at_end():
        raise cur.error("bad table header")
    return parts


# -- the fallback reader (Python 3.10) ----------------------------------------------------------------------------
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


class _Cursor:
    def __init__(self, text: str, line: int) -> None:
        self.text, self.pos, self.line = text, 0, line

    def error(self, what: str) -> TomlError:
        return TomlError(f"{what} (line {self.line})")

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text) or self.text[self.pos] == "#"

    def basic_string(self) -> str:
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise self.error("unterminated string")
            ch = self.text[self.pos]
            if ch == '"':
                self.pos += 1
                return "".join(out)
            if ch == "\\":
                code = self.text[self.pos + 1:self.pos + 2]
                if code in _ESCAPES:
                    out.append(_ESCAPES[code])
                    self.pos += 2
                elif code in ("u", "U"):
                    width = 4 if code == "u" else 8
                    digits = self.text[self.pos + 2:self.pos + 2 + width]
                    try:
                        out.append(chr(int(digits, 16)))
                    except ValueError:
                        raise self.error("bad unicode escape") from None
                    self.pos += 2 + width
                else:
                    raise self.error("bad escape")
                continue
            out.append(ch)
            self.pos += 1

    def literal_string(self) -> str:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            raise self.error("unterminated string")
        value = self.text[self.pos + 1:end]
        self.pos = end + 1
        return value

    def key(self) -> list[str]:
        parts = []
        while True:
            self.skip_ws()
            ch = self.peek()
            if ch == '"':
                parts.append(self.basic_string())
            elif ch == "'":
                parts.append(self.literal_string())
            else:
                found = _BARE.match(self.text, self.pos)
                if not found:
                    raise self.error("bad key")
                parts.append(found.group(0))
                self.pos = found.end()
            self.skip_ws()
            if self.peek() != ".":
                return parts
            self.pos += 1


def _fallback_loads(text: str) -> dict[str, Any]:
    root: dict[str, Any] = {}
    table = root
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        cur = _Cursor(lines[i], i + 1)
        i += 1
        if cur.at_end():
            continue
        if cur.peek() == "[":
            array = cur.text.startswith("[[", cur.pos)
            cur.pos += 2 if array else 1
            path = cur.key()
            if not cur.text.startswith("]]" if array else "]", cur.pos):
                raise cur.error("bad table header")
            table = _descend(root, path, cur, array)
            continue
        path = cur.key()
        if cur.peek() != "=":
            raise cur.error("expected '=' after a key")
        cur.pos += 1
        cur.skip_ws()
        value, i = _value(cur, lines, i)
        parent = _descend(table, path[:-1], cur, False)
        if path[-1] in parent:
            raise cur.error(f"duplicate key {path[-1]!r}")
        parent[path[-1]] = value
    return root


def _descend(node: dict[str, Any], path: list[str], cur: _Cursor, array: bool) -> dict[str, Any]:
    for n, part in enumerate(path):
        last = n == len(path) - 1
        child = node.get(part)
        if last and array:
            items = node.setdefault(part, [])
            if not isinstance(items, list):
                raise cur.error(f"{part!r} is not an array of tables")
            items.append({})
            return items[-1]
        if child is None:
            child = node[part] = {}
        elif isinstance(child, list) and child and isinstance(child[-1], dict):
            child = child[-1]
        elif not isinstance(child, dict):
            raise cur.error(f"{part!r} is already a value, not a table")
        node = child
    return node


def _value(cur: _Cursor, lines: list[str], i: int) -> tuple[Any, int]:
    rest = cur.text[cur.pos:]
    for fence in ('"""', "'''"):
        if rest.startswith(fence):
            if rest.count(fence) >= 2:
                return OPAQUE, i
            while i < len(lines) and fence not in lines[i]:
                i += 1
            return OPAQUE, i + 1
    ch = cur.peek()
    if ch == '"':
        value: Any = cur.basic_string()
    elif ch == "'":
        value = cur.literal_string()
    elif ch in "[{":
        return OPAQUE, _skip_brackets(rest, lines, i)
    else:
        token = re.match(r"[^\s#,\]}]+", rest)
        word = token.group(0) if token else ""
        cur.pos += len(word)
        if word in ("true", "false"):
            value = word == "true"
        elif re.fullmatch(r"[+-]?\d[\d_]*", word):
            value = int(word.replace("_", ""))
        else:
            value = OPAQUE  # floats, dates: not needed by rose
    if not cur.at_end():
        raise cur.error("unexpected text after a value")
    return value, i


def _skip_brackets(rest: str, lines: list[str], i: int) -> int:
    depth, quote_char = 0, ""
    text, n = rest, i
    while True:
        k = 0
        while k < len(text):
            ch = text[k]
            if quote_char:
                if ch == "\\" and quote_char == '"':
                    k += 1
                elif ch == quote_char:
                    quote_char = ""
            elif ch in "\"'":
                quote_char = ch
            elif ch == "#":
                break
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return n
            k += 1
        if n >= len(lines):
            raise TomlError("unterminated array or inline table")
        text, n = lines[n], n + 1
