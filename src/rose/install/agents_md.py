"""The AGENTS.md block: a few lines between ``<!-- rose:begin -->`` and ``<!-- rose:end -->`` telling Codex it can
ask rose itself (``rose recall``, ``rose search``), the fallback for when its hooks do not run.

The block goes at the end, after one blank line, and is replaced in place when it is there already. Removing it
takes the block and that blank line, which gives back the user's file exactly whenever it ended with a newline; for
the rare file that did not (or was empty) rose keeps a backup, because then that cannot be told apart afterwards.
"""
from __future__ import annotations

from pathlib import Path

from rose.install.files import FileEdit, backup_path, decode, read_bytes

BEGIN = "<!-- rose:begin -->"
END = "<!-- rose:end -->"


def block(rose: str) -> str:
    return (
        f"{BEGIN}\n"
        "## Memory (rose)\n"
        "\n"
        "rose keeps lessons learned in earlier sessions, and its hooks add the relevant ones to your context. When a\n"
        "task may depend on something learned before and no lesson was shown, ask rose yourself:\n"
        "\n"
        f'- `{rose} recall --prompt "<the task in one sentence>"`: the lessons rose would inject for that task\n'
        f"- `{rose} search <words>`: lessons matching the words, with their files (markdown under `.rose/nodes/`)\n"
        f"{END}\n"
    )


def _span(lines: list[str]) -> tuple[int, int] | None:
    """(first line, line after the last) of the block, or None."""
    starts = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    for start in starts:
        for end in range(start + 1, len(lines)):
            if lines[end].strip() == END:
                return start, end + 1
    return None


def with_block(text: str, rose: str) -> str:
    lines = text.splitlines(keepends=True)
    span = _span(lines)
    new = block(rose)
    if span:
        tail = "".join(lines[span[1]:])
        return "".join(lines[:span[0]]) + new + tail
    prefix = text
    if prefix and not prefix.endswith("\n"):
        prefix += "\n"
    if prefix.strip():
        prefix += "\n"
    return prefix + new


def without_block(text: str) -> tuple[str, bool]:
    lines = text.splitlines(keepends=True)
    span = _span(lines)
    if not span:
        return text, False
    start, end = span
    if start > 0 and not lines[start - 1].strip() and end == len(lines):
        start -= 1  # the blank line rose put before a block at the end
    return "".join(lines[:start] + lines[end:]), True


def plan_install(path: Path, rose: str) -> FileEdit:
    raw = read_bytes(path)
    text = decode(path, raw) if raw is not None else ""
    after = with_block(text, rose)
    # only a file without a trailing newline (or an empty one) cannot be given back exactly without a copy
    needs_backup = raw is not None and BEGIN not in text and (not raw.strip() or not raw.endswith(b"\n"))
    detail = "added the rose block" if BEGIN not in text else "updated the rose block"
    if after == text:
        return FileEdit(path, raw, raw, "the rose block is in place")
    return FileEdit(path, raw, after.encode("utf-8"), detail, keep_backup=needs_backup)


def plan_uninstall(path: Path) -> FileEdit:
    raw = read_bytes(path)
    if raw is None:
        return FileEdit(path, None, None, "no rose block")
    text = decode(path, raw)
    after, found = without_block(text)
    if not found:
        return FileEdit(path, raw, raw, "no rose block")
    backup = read_bytes(backup_path(path))
    if backup is not None and decode(path, backup).rstrip() == after.rstrip():
        return FileEdit(path, raw, backup, "removed the rose block; put the pre-install file back", drop_backup=True)
    if backup is None and not after.strip():
        return FileEdit(path, raw, None, "removed the rose block; rose had created the file",
                        prune_dir=path.parent.name == ".codex")
    return FileEdit(path, raw, after.encode("utf-8"), "removed the rose block")
