"""Node files: YAML frontmatter between `---` lines, then the lesson body as markdown.

The format is for people first: they read and edit these files. Serialisation goes through PyYAML's safe
dumper so quotes, colons, backslashes, newlines, YAML-looking text and non-ASCII all round-trip exactly.
"""
from __future__ import annotations

import re

import yaml

from rose.errors import LayoutUnsure
from rose.model import Node

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run
    from typing import Any

try:  # the C implementation is several times faster; fall back to pure Python where libyaml is absent
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

FENCE = "---"


class _PlainDumper(_Dumper):
    """Never an alias: a value written twice is written twice (load_yaml refuses aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


WIDTH = 100   # PyYAML folds a scalar at a space past this column; a line that fits is never folded


def dump_yaml(data: Any) -> str:
    fast = _dump_layout(data)
    if fast is not None:
        return fast
    return yaml.dump(data, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                     width=WIDTH)


def load_yaml(text: str) -> Any:
    """PyYAML's safe load, refusing aliases: rose never writes one, and a few hundred bytes of nested aliases (a
    committed lesson or config.yaml) stand for billions of values once a reader walks them."""
    if "*" in text:   # an alias needs its indicator; most files hold none, and the events are read only then
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                where = f" at line {mark.line + 1}" if mark is not None else ""
                raise yaml.YAMLError(f"an alias (*{event.anchor}){where}: rose reads no YAML aliases")
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - the C *safe* loader


# -- the layout rose's own dumper writes, read without PyYAML's constructors ---------------------------------------
# PyYAML builds a Python object per scalar (about 0.2 ms a lesson's frontmatter, most of a rebuild). The block layout
# dump_yaml writes (`key: scalar`, `key:` over a nested block, `- item` sequences at the key's own indent, `[]`, `{}`,
# single-quoted scalars) is read here line by line instead; the value of every plain scalar is decided by PyYAML's own
# resolver, and whatever is not certain (another layout, a comment, a flow collection, a multi-line, escaped or
# anchored scalar, a timestamp, a key used twice) is handed to PyYAML whole. tests/test_frontmatter_fast.py holds the
# two readers equal on what rose writes and on hostile text.
_RESOLVER = yaml.resolver.Resolver()
# the resolver's implicit table, by first character, as Resolver.resolve reads it for a plain scalar (it has no path
# resolvers): a plain scalar whose first character has no entry is a string without asking it
_IMPLICIT = {first: [*rules, *_RESOLVER.yaml_implicit_resolvers.get(None, [])]
             for first, rules in _RESOLVER.yaml_implicit_resolvers.items() if first is not None}
_WILDCARD = list(_RESOLVER.yaml_implicit_resolvers.get(None, []))
_STR, _INT, _FLOAT, _BOOL, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null"))
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: |$)")
_INT_TEXT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT_TEXT = re.compile(r"[-+]?[0-9]+\.[0-9]+")


class _OnFirstUse:
    """A regex compiled when first searched: a character class over most of Unicode takes 7 ms to compile, and most
    processes never search with it (the ASCII paths below answer without it)."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern)
        return compiled.search(text)


# what PyYAML's reader refuses or its scanner treats as a line break or a byte order mark
_AWKWARD = _OnFirstUse("[^\x0A\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD\U00010000-\U0010FFFF]")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


def _tag(text: str) -> str:
    """Resolver.resolve(ScalarNode, text, (True, False)) for a non-empty plain scalar."""
    for tag, rule in _IMPLICIT.get(text[0], _WILDCARD):
        if rule.match(text):
            return str(tag)
    return _STR


def _plain(text: str) -> Any:
    if not text or text[0] in _INDICATORS or text != text.strip() or ": " in text or " #" in text \
            or text.endswith(":"):
        raise LayoutUnsure
    tag = _tag(text)
    if tag == _STR:
        return text
    if tag == _INT and _INT_TEXT.fullmatch(text):
        return int(text)
    if tag == _FLOAT and _FLOAT_TEXT.fullmatch(text):
        return float(text)
    if tag == _BOOL and text in ("true", "false"):
        return text == "true"
    if tag == _NULL and text in ("null", "~"):
        return None
    raise LayoutUnsure   # a timestamp, 0x1f, 1_000, yes/on/True, .inf, ...: PyYAML's constructors decide


def _scalar(text: str) -> Any:
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if text[:1] == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise LayoutUnsure
        return inner.replace("''", "'")
    if text[:1] == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise LayoutUnsure
        return inner
    return _plain(text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# lines read before, with a value that cannot be changed in place (`status: active`, `level: 0`, `- database`): most
# of a lesson's lines recur in every lesson, and are read once per process. A full memory is emptied and filled
# again: what recurs is soon back, where a memory kept whole would hold the first lessons' one-off lines
# (ids, titles) and never the lines that recur later (a run of lessons created in the same second)
_LINES: dict[str, tuple[int, str, Any]] = {}
_ITEMS: dict[str, tuple[int, Any]] = {}
_LINES_MAX = 4096
# lines that are only a key over a nested block (`tags:`, `dropped:`), by the indent they were read at
_HEADS: dict[str, tuple[int, str]] = {}
# lines read before whose value is an empty list or dict (`parents: []`): a fresh one is made for each reading
_EMPTIES: dict[str, tuple[int, str, type]] = {}
_STR_KEYS: set[str] = set()   # keys the resolver has read as strings (a key is a string or the layout is unsure)


def _mapping(lines: list[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    known = _LINES
    n = len(lines)
    while i < n:
        line = lines[i]
        seen = known.get(line)
        if seen is not None and seen[0] == indent:
            if seen[1] in out:
                raise LayoutUnsure
            out[seen[1]] = seen[2]
            i += 1
            continue
        empty = _EMPTIES.get(line)
        if empty is not None and empty[0] == indent:
            if empty[1] in out:
                raise LayoutUnsure
            out[empty[1]] = empty[2]()
            i += 1
            continue
        head = _HEADS.get(line)
        if head is not None and head[0] == indent:   # `tags:` as before: only what is below it to read
            key, rest = head[1], ""
            if key in out:
                raise LayoutUnsure
            i += 1
        else:
            at = _indent(line) if line[:1] == " " else 0
            if at < indent:
                break
            found = _KEY.match(line, indent) if at == indent else None
            if found is None:
                raise LayoutUnsure
            key = found.group(1)
            if key in out:
                raise LayoutUnsure
            if key not in _STR_KEYS:
                if _tag(key) != _STR:
                    raise LayoutUnsure
                if len(_STR_KEYS) < _LINES_MAX:
                    _STR_KEYS.add(key)
            rest = line[found.end():]
            i += 1
        if rest:
            value = out[key] = _scalar(rest)
            if not isinstance(value, (list, dict)):
                if len(known) >= _LINES_MAX:
                    known.clear()
                known[line] = (indent, key, value)
            elif not value and len(_EMPTIES) < _LINES_MAX:
                _EMPTIES[line] = (indent, key, type(value))
            continue
        if head is None and len(_HEADS) < _LINES_MAX:
            _HEADS[line] = (indent, key)
        below = _indent(lines[i]) if i < n else -1
        if below == indent and lines[i].startswith("- ", indent):
            out[key], i = _sequence(lines, i, indent)
        elif below > indent:
            if below != indent + 2:
                raise LayoutUnsure
            out[key], i = _mapping(lines, i, indent + 2)
        else:
            out[key] = None
    return out, i


def _sequence(lines: list[str], i: int, indent: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    known = _ITEMS
    n = len(lines)
    while i < n:
        line = lines[i]
        seen = known.get(line)
        if seen is not None and seen[0] == indent:   # `- ` at this indent, then a scalar read before
            out.append(seen[1])
            i += 1
            continue
        at = _indent(line)
        if at < indent or (at == indent and not line.startswith("- ", indent)):
            break
        if at > indent:
            raise LayoutUnsure
        item = line[indent + 2:]
        if _KEY.match(item):   # a mapping whose first key sits on the dash line, the rest under it
            lines[i] = " " * (indent + 2) + item
            value, i = _mapping(lines, i, indent + 2)
            out.append(value)
        else:
            value = _scalar(item)
            out.append(value)
            if not isinstance(value, (list, dict)):
                if len(known) >= _LINES_MAX:
                    known.clear()
                known[line] = (indent, value)
            i += 1
    return out, i


def _plain_lines(head: str, lines: list[str]) -> bool:
    """No character of `head` is _AWKWARD. An ASCII line is free of them exactly when it is printable (space to
    "~"), which str.isprintable says in C; a regex's character class costs ~50 instructions a character."""
    if head.isascii():   # `lines` are head split at "\n": all printable when their concatenation is
        return "".join(lines).isprintable()
    return _AWKWARD.search(head) is None


def _load_layout(head: str) -> dict[str, Any] | None:
    """The frontmatter as PyYAML would load it, when it is certainly in dump_yaml's layout; else None."""
    if not head.endswith("\n"):
        return None
    lines = head[:-1].split("\n")
    if not _plain_lines(head, lines):
        return None
    try:
        data, end = _mapping(lines, 0, 0)
    except LayoutUnsure:
        return None
    return data if end == len(lines) and data else None


def render_node(node: Node, fields: dict[str, Any] | None = None) -> str:
    """The file text: `fields` as frontmatter (the store passes the node's meaning, rose.store.usage.meaning;
    `rose show` passes nothing and so shows every field, usage folded in), then the body.

    The body is followed by exactly one newline that parse_node strips, so bodies with or without trailing
    newlines come back exactly as written."""
    return f"{FENCE}\n{dump_yaml(node.to_dict() if fields is None else fields)}{FENCE}\n{node.body}\n"


# every character str.splitlines breaks a line at, but "\n"
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


_ASCII_BREAKS = tuple(c for c in _OTHER_BREAKS.pattern[1:-1] if c.isascii())


def _other_breaks(text: str) -> bool:
    """Does `text` hold a line break but "\n"? For ASCII text, a substring test per break character (memchr speed)
    instead of a regex's character class over every character."""
    if text.isascii():
        for char in _ASCII_BREAKS:   # noqa: SIM110 - as above
            if char in text:
                return True
        return False
    return _OTHER_BREAKS.search(text) is not None


def _split_plain(text: str) -> tuple[str, str] | None:
    """split_frontmatter's (head, body) for a text whose only line break is "\n" (what rose writes), found by
    str.find instead of splitting every line; None for any other text (the line-by-line reading decides)."""
    if not text.startswith(FENCE + "\n") or _other_breaks(text):
        return None
    end = text.find("\n" + FENCE + "\n", 3)   # the first line after the opening one that is the fence
    if end != -1:
        return text[4:end + 1], text[end + 5:]
    if text.endswith("\n" + FENCE) and len(text) >= 7:   # the fence is the last line, with no newline
        return text[4:len(text) - 3], ""
    return None


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split a node file into (frontmatter mapping, body). Raises ValueError with a reason a person can act on."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(FENCE + "\n") and not text.startswith(FENCE + "\r\n"):
        raise ValueError("does not start with a '---' frontmatter line")
    split = _split_plain(text)
    if split is not None:
        head, body = split
    else:
        lines = text.splitlines(keepends=True)
        for i in range(1, len(lines)):
            if lines[i].rstrip("\r\n") == FENCE:
                head = "".join(lines[1:i])
                body = "".join(lines[i + 1:])
                break
        else:
            raise ValueError("frontmatter is never closed by a '---' line")
    try:
        data = _load_layout(head)
        if data is None:
            data = load_yaml(head)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        raise ValueError(f"frontmatter is not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise ValueError("frontmatter is not a mapping of fields")
    if body.endswith("\r\n"):
        body = body[:-2]
    elif body.endswith("\n"):
        body = body[:-1]
    return data, body


def parse_node(text: str) -> Node:
    return parse_node_with(text)[0]


def parse_node_with(text: str) -> tuple[Node, dict[str, Any]]:
    """parse_node, with the frontmatter mapping the node was read from (a rebuild asks which keys the file holds)."""
    data, body = split_frontmatter(text)
    try:
        return Node.from_dict(data, body), data
    except (ValueError, TypeError, KeyError, AttributeError) as exc:   # `trials: x`: 'str' object has no 'get'
        raise ValueError(f"bad field: {exc}") from None


# -- and written the same way: the text PyYAML's dumper writes, without its representer ----------------------------
# PyYAML represents every value as an object before its C emitter writes it (about 0.5 ms a lesson's frontmatter, a
# third of a bulk import). The same text is written here for what is certainly written the same way: mappings with
# identifier keys, block sequences, `[]`, `{}`, and scalars on lines that fit WIDTH; anything else (a long line PyYAML
# would fold, a line break, a character it would escape, a type it represents its own way) is PyYAML's. It is right
# by construction, not by reading its text back (that check was a third of the render's CPU, and where it declined
# PyYAML wrote the very same text): tests/test_frontmatter_fast.py holds every text it writes equal to PyYAML's, and
# read back by PyYAML and by _load_layout as the data written, on what rose writes, hostile values and random nested
# data (so a layout it would get wrong fails a test instead of reaching disk).
_PLAIN_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
# what libyaml's emitter (CSafeDumper) writes as it is: not a line break, and nothing past U+FFFF (it escapes those)
_UNWRITABLE = _OnFirstUse("[^\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD]")


# what _emit_scalar wrote for a short text before (a pure function of it): most of a lesson's values recur in every
# lesson (`active`, `fact`, a family, a tag, the second it was made); emptied when full, as _LINES is
_SCALARS: dict[str, str | None] = {}
_SCALAR_SHORT = 64
_WRITABLE_KEYS: set[str] = set()   # keys written plain before: an identifier the resolver reads as a string


def _emit_scalar(value: Any) -> str | None:
    if type(value) is str and len(value) <= _SCALAR_SHORT:
        try:
            return _SCALARS[value]
        except KeyError:
            if len(_SCALARS) >= _LINES_MAX:
                _SCALARS.clear()
            text = _SCALARS[value] = _emit_text(value)
            return text
    return _emit_text(value)


def _emit_text(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        text = repr(value).lower()
        return text if _PLAIN_FLOAT.fullmatch(text) else None
    if type(value) is not str:
        return None
    if not value:
        return "''"
    if not (value.isascii() and value.isprintable()) and _UNWRITABLE.search(value):   # printable ASCII is writable
        return None
    first = value[0]
    quoted = (first in "#,[]{}&*!|>'\"%@`" or (first in "?:-" and (len(value) == 1 or value[1] == " "))
              or value != value.strip(" ") or ": " in value or " #" in value or value.endswith(":")
              or value.startswith(("---", "...")) or _tag(value) != _STR)
    if not quoted:
        return None if first in "?:-" else value   # PyYAML writes `-x` plain; _load_layout leaves it to PyYAML
    return "'" + value.replace("'", "''") + "'"


def _shared(value: Any, seen: set[int]) -> bool:
    """A list or dict met twice in one document: PyYAML writes an anchor and an alias for it."""
    if id(value) in seen:
        return True
    seen.add(id(value))
    return False


def _emit_mapping(data: dict[Any, Any], indent: int, out: list[str], seen: set[int],
                  first: str | None = None) -> bool:
    """`first`: the prefix of the mapping's first line (`- ` inside a sequence) instead of the indent."""
    pad = " " * indent
    if _shared(data, seen):
        return False
    for key, value in data.items():
        if type(key) is not str or key not in _WRITABLE_KEYS:
            if type(key) is not str or not _KEY.fullmatch(key + ":") or _tag(key) != _STR:
                return False
            if len(_WRITABLE_KEYS) < _LINES_MAX:
                _WRITABLE_KEYS.add(key)
        lead = f"{first}{key}:" if first is not None else f"{pad}{key}:"
        first = None
        if type(value) is list:
            if not value:
                if _shared(value, seen):
                    return False
                out.append(lead + " []")
            else:
                out.append(lead)
                if not _emit_sequence(value, indent, out, seen):
                    return False
        elif type(value) is dict:
            if not value:
                if _shared(value, seen):
                    return False
                out.append(lead + " {}")
            else:
                out.append(lead)
                if not _emit_mapping(value, indent + 2, out, seen):
                    return False
        else:
            text = _emit_scalar(value)
            if text is None or len(lead) + 1 + len(text) > WIDTH:
                return False
            out.append(f"{lead} {text}")
    return True


def _emit_sequence(items: list[Any], indent: int, out: list[str], seen: set[int]) -> bool:
    pad = " " * indent
    if _shared(items, seen):
        return False
    for item in items:
        if type(item) is dict and item:
            if not _emit_mapping(item, indent + 2, out, seen, first=pad + "- "):
                return False
        elif type(item) in (list, dict):
            return False   # an empty or nested collection in a sequence: PyYAML's
        else:
            text = _emit_scalar(item)
            if text is None or indent + 2 + len(text) > WIDTH:
                return False
            out.append(f"{pad}- {text}")
    return True


def _dump_layout(data: Any) -> str | None:
    """dump_yaml's text for a mapping written in the layout above; else None."""
    if type(data) is not dict or not data:
        return None
    out: list[str] = []
    if not _emit_mapping(data, 0, out, set()):
        return None
    return "\n".join(out) + "\n"

