"""Splitting a rule file into the pieces that become lessons: a section each, or a rule each when a section is a
list of rules. Pure text work, no store: what `rose import` reconciles comes from here.

    CLAUDE.md, AGENTS.md, .github/copilot-instructions.md, .cursorrules   markdown (or plain text)
    .cursor/rules/*.mdc                                                     YAML frontmatter, then markdown

A heading opens a section; a section's own text (up to the next heading of any level) is one piece, unless it is
nothing but a list of top-level items, which are then one piece each. Text before the first heading is
a section named after the file; in a file without any heading, paragraphs are pieces too. Headings inside code
fences do not count. rose's own block in an AGENTS.md (`rose install` writes it) is skipped. Frontmatter is read
only for what it says about the rule (a Cursor rule's description and globs); nothing in a file chooses a setting.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

KINDS = {"CLAUDE.md": "claude-md", "CLAUDE.local.md": "claude-md", "AGENTS.md": "agents-md",
         "copilot-instructions.md": "copilot", ".cursorrules": "cursorrules"}
MDC = "cursor-rule"
MIN_CHARS = 12             # shorter pieces ("- TBD") are not lessons
SEP = " › "

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^( {0,1})(?:[-*+]|\d{1,3}[.)])\s+\S")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_ROSE_BEGIN, _ROSE_END = "<!-- rose:begin -->", "<!-- rose:end -->"


def kind_of(path: Path) -> str | None:
    """The kind of rule file ``path`` is, None when it is none rose knows."""
    if path.suffix == ".mdc":
        return MDC
    return KINDS.get(path.name)


@dataclass
class Piece:
    key: str        # stable within the file: the section's heading path (#n for a repeated one); a rule adds its hash
    section: str    # the heading path, "Testing › Integration"
    title: str
    text: str
    start: int      # first and last line, 1-based, in the file
    end: int
    rule: bool      # one item of a list of rules (else a whole section or paragraph)

    @property
    def lines(self) -> str:
        return f"L{self.start}" if self.start == self.end else f"L{self.start}-L{self.end}"


def digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _clean_heading(text: str) -> str:
    text = re.sub(r"[*_`]+", "", text).strip()
    return " ".join(text.split())


def _frontmatter(lines: list[str]) -> tuple[dict, int]:
    """(the frontmatter mapping, the index of the first line after it). Unreadable frontmatter is skipped whole."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            try:
                import yaml

                data = yaml.safe_load("\n".join(lines[1:i])) or {}
            except Exception:  # noqa: BLE001 - a malformed header is not the rule's text either way
                data = {}
            return (data if isinstance(data, dict) else {}), i + 1
    return {}, 0


def _blocks(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Blank-line separated blocks, a fenced code block kept whole."""
    out: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] = []
    fence = ""
    for n, line in lines:
        found = _FENCE.match(line)
        if fence:
            cur.append((n, line))
            if found and found.group(1)[0] == fence[0] and len(found.group(1)) >= len(fence):
                fence = ""
            continue
        if found:
            fence = found.group(1)
            cur.append((n, line))
            continue
        if not line.strip():
            if cur:
                out.append(cur)
                cur = []
            continue
        cur.append((n, line))
    if cur:
        out.append(cur)
    return out


def _items(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]] | None:
    """The top-level list items, when the lines are nothing but a list (else None)."""
    items: list[list[tuple[int, str]]] = []
    fence = ""
    for n, line in lines:
        if fence:
            if not items:
                return None
            items[-1].append((n, line))
            found = _FENCE.match(line.strip() and line.lstrip())
            if found and found.group(1)[0] == fence[0]:
                fence = ""
            continue
        if not line.strip():
            if items:
                items[-1].append((n, line))
            continue
        if _ITEM.match(line):
            items.append([(n, line)])
            continue
        if items and (line.startswith("  ") or line.startswith("\t")):
            found = _FENCE.match(line.lstrip())
            if found:
                fence = found.group(1)
            items[-1].append((n, line))
            continue
        return None
    return items or None


def _text(lines: list[tuple[int, str]]) -> tuple[str, int, int]:
    kept = [(n, line.rstrip()) for n, line in lines]
    while kept and not kept[0][1].strip():
        kept.pop(0)
    while kept and not kept[-1][1].strip():
        kept.pop()
    if not kept:
        return "", 0, 0
    return "\n".join(line for _n, line in kept), kept[0][0], kept[-1][0]


def _unbullet(text: str) -> str:
    first, _, rest = text.partition("\n")
    first = re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+", "", first)
    lines = [first] + [re.sub(r"^ {1,4}", "", line) for line in rest.splitlines()] if rest else [first]
    return "\n".join(lines).strip()


def split(text: str, name: str) -> list[Piece]:
    """The pieces of one rule file's text. ``name`` titles the text before the first heading."""
    raw = text.splitlines()
    meta, body_from = _frontmatter(raw)
    context = ""
    globs = meta.get("globs")
    if isinstance(globs, list):
        globs = ", ".join(str(g) for g in globs)
    if isinstance(globs, str) and globs.strip():
        context = f"(for files matching {globs.strip()}) "
    description = str(meta.get("description") or "").strip()
    root = _clean_heading(description) if description else name

    # sections: (heading path, own lines)
    sections: list[tuple[list[str], list[tuple[int, str]]]] = [([root], [])]
    path: list[tuple[int, str]] = []   # (level, heading)
    fence = ""
    skipping = False
    lines = [(i + 1, line) for i, line in enumerate(raw)][body_from:]
    any_heading = False
    for n, line in lines:
        if line.strip() == _ROSE_BEGIN:
            skipping = True
            continue
        if skipping:
            skipping = line.strip() != _ROSE_END
            continue
        found = _FENCE.match(line)
        if fence:
            sections[-1][1].append((n, line))
            if found and found.group(1)[0] == fence[0] and len(found.group(1)) >= len(fence):
                fence = ""
            continue
        if found:
            fence = found.group(1)
            sections[-1][1].append((n, line))
            continue
        heading = _HEADING.match(line)
        own = sections[-1][1]
        setext = bool(_SETEXT.match(line)) and bool(own) and own[-1][0] == n - 1 and bool(own[-1][1].strip()) \
            and not _ITEM.match(own[-1][1]) and (len(own) == 1 or not own[-2][1].strip() or own[-2][0] != n - 2)
        if heading or setext:
            if heading:
                level, title = len(heading.group(1)), heading.group(2)
            else:
                level, title = (1 if line.strip().startswith("=") else 2), own.pop()[1]
            title = _clean_heading(title) or "(untitled)"
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
            sections.append(([h for _l, h in path], []))
            any_heading = True
            continue
        sections[-1][1].append((n, line))

    pieces: list[Piece] = []
    seen: dict[str, int] = {}
    for heading_path, own in sections:
        if not own:
            continue
        label = SEP.join(heading_path)
        seen[label] = seen.get(label, 0) + 1
        key = label if seen[label] == 1 else f"{label} #{seen[label]}"
        body, start, end = _text(own)
        if not body:
            continue
        items = _items([(n, line) for n, line in own if start <= n <= end])
        if items is None and not any_heading and heading_path == [root]:
            blocks = _blocks([(n, line) for n, line in own if start <= n <= end])
            if len(blocks) >= 2:
                items = blocks
        if items is not None:
            for item in items:
                text, s, e = _text(item)
                text = _unbullet(text)
                if len(text) < MIN_CHARS:
                    continue
                pieces.append(Piece(f"{key} • {digest(text)}", label, _rule_title(label, text, root),
                                    context + text, s, e, True))
            continue
        if len(body) < MIN_CHARS:
            continue
        pieces.append(Piece(key, label, _section_title(heading_path, root), context + body, start, end, False))
    return pieces


def _section_title(heading_path: list[str], root: str) -> str:
    parts = heading_path[1:] if len(heading_path) > 1 and heading_path[0] == root else heading_path
    return _cap(SEP.join(parts[-2:]))


def _rule_title(label: str, text: str, root: str) -> str:
    from rose.lessons import derive_title

    section = label.split(SEP)[-1]
    short = derive_title(text)
    return _cap(short if section == root else f"{section}: {short}")


def _cap(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
