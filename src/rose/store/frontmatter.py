"""Node files: YAML frontmatter between `---` lines, then the lesson body as markdown.

The format is for people first: they read and edit these files. Serialisation goes through PyYAML's safe
dumper so quotes, colons, backslashes, newlines, YAML-looking text and non-ASCII all round-trip exactly.
"""
from __future__ import annotations

from typing import Any

import yaml

from rose.model import Node

try:  # the C implementation is several times faster; fall back to pure Python where libyaml is absent
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

FENCE = "---"


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - the C *safe* loader


def render_node(node: Node, fields: dict[str, Any] | None = None) -> str:
    """The file text: `fields` as frontmatter (the store passes the node's meaning, rose.store.usage.meaning;
    `rose show` passes nothing and so shows every field, usage folded in), then the body.

    The body is followed by exactly one newline that parse_node strips, so bodies with or without trailing
    newlines come back exactly as written."""
    return f"{FENCE}\n{dump_yaml(node.to_dict() if fields is None else fields)}{FENCE}\n{node.body}\n"


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split a node file into (frontmatter mapping, body). Raises ValueError with a reason a person can act on."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(FENCE + "\n") and not text.startswith(FENCE + "\r\n"):
        raise ValueError("does not start with a '---' frontmatter line")
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") == FENCE:
            head = "".join(lines[1:i])
            body = "".join(lines[i + 1:])
            break
    else:
        raise ValueError("frontmatter is never closed by a '---' line")
    try:
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
    data, body = split_frontmatter(text)
    try:
        return Node.from_dict(data, body)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"bad field: {exc}") from None
