"""The hooks JSON both agents read: ``{"hooks": {"<Event>": [{"matcher"?, "hooks": [{"type": "command", ...}]}]}}``.

Claude Code keeps it inside settings.json beside the user's other settings; Codex has a hooks.json of the same shape.
This module reads such a file strictly (a malformed file is an error that names the line, and is left untouched),
adds rose's handlers as groups of their own at the end of each event's list (so the positions of the user's own
groups never move), updates them in place, removes exactly them, and writes the result back in the file's own
indentation, newline and escaping style.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from rose.text import load_json
from rose.install.command import RoseHook, parse_rose_hook
from rose.install.files import FileEdit, backup_path, decode, read_bytes
from rose.install.model import Agent, HookSpec, InstallError
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (~7 ms of `rose doctor`)
    from typing import Any

    JsonObject = dict[str, Any]
# a \uXXXX escape of a non-ASCII character: the file was written with ensure_ascii, keep writing it that way
_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")


class JsonStyle(Record, frozen=True):
    indent: str | None = "  "  # None: everything on one line
    newline: str = "\n"
    trailing_newline: bool = True
    ensure_ascii: bool = False

    @classmethod
    def of(cls, text: str) -> JsonStyle:
        newline = "\r\n" if "\r\n" in text else "\n"
        body = text.strip()
        indent: str | None = None
        if "\n" in body:
            found = re.search(r"\n([ \t]+)\S", body)
            indent = found.group(1) if found else ""
        non_ascii_raw = any(ord(ch) > 127 for ch in text)
        escaped = _NON_ASCII_ESCAPE.search(text)
        return cls(indent=indent, newline=newline, trailing_newline=text.endswith("\n"),
                   ensure_ascii=bool(escaped) and not non_ascii_raw)

    def render(self, data: Any) -> bytes:
        if self.indent is None:
            text = json.dumps(data, ensure_ascii=self.ensure_ascii)
        else:
            text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        if self.trailing_newline:
            text += "\n"
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        return text.encode("utf-8")


NEW_FILE_STYLE = JsonStyle()
AGENT_DIRS = (".claude", ".codex")  # a folder of these names that rose emptied is removed with the file


def parse(path: Path, raw: bytes | None, what: str) -> tuple[JsonObject, JsonStyle]:
    """The file's JSON object and style ({} and the default style when there is no file).

    Raises InstallError, naming the file, line and column, when it is not a JSON object or its ``hooks`` is not
    ``{event: [group, ...]}``: rose never rewrites a file it cannot read."""
    data, style = parse_object(path, raw, what)
    shape_problem = hooks_shape_problem(data)
    if shape_problem:
        raise InstallError(f"{path}: {shape_problem}; rose left it untouched")
    return data, style


def parse_object(path: Path, raw: bytes | None, what: str) -> tuple[JsonObject, JsonStyle]:
    """Any agent JSON file rose edits (settings, .mcp.json): its object and style, or InstallError naming the file,
    line and column when it is not a JSON object."""
    if raw is None:
        return {}, NEW_FILE_STYLE
    text = decode(path, raw)
    if not text.strip():
        return {}, NEW_FILE_STYLE
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); rose left "
                           f"it untouched. {what} Fix the file or move it away, then run the command again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds a JSON {type(data).__name__}, not an object; rose left it untouched")
    return data, JsonStyle.of(text)


def hooks_shape_problem(data: JsonObject) -> str | None:
    hooks = data.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        return f'"hooks" is a {type(hooks).__name__}, expected an object of events'
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            return f'"hooks.{event}" is a {type(groups).__name__}, expected a list of matcher groups'
        for i, group in enumerate(groups):
            if not isinstance(group, dict):
                return f'"hooks.{event}[{i}]" is a {type(group).__name__}, expected an object'
            if "hooks" in group and not isinstance(group["hooks"], list):
                return f'"hooks.{event}[{i}].hooks" is not a list'
    return None


class Found(Record, frozen=True):
    """A handler that runs rose, at ``hooks[event][group][index]``."""

    event: str
    group: int
    index: int
    hook: RoseHook
    handler: JsonObject


def rose_handlers(data: JsonObject, agent: Agent) -> list[Found]:
    out = []
    for event, groups in (data.get("hooks") or {}).items():
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for i, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not isinstance(handler, dict):
                    continue
                hook = parse_rose_hook(handler.get("command"))
                if hook is not None and hook.agent is agent:
                    out.append(Found(event, g, i, hook, handler))
    return out


def handler_for(spec: HookSpec, command: str) -> JsonObject:
    handler: JsonObject = {"type": "command", "command": command, "timeout": spec.timeout_s}
    if spec.status:
        handler["statusMessage"] = spec.status
    return handler


class Merge(Record):
    data: JsonObject
    added: list[str]
    updated: list[str]
    hand_wired: list[str]  # events already running rose through a hook not written by rose install: left alone


def add_hooks(data: JsonObject, agent: Agent, specs: Iterable[HookSpec], command_for: Callable[[str], str]) -> Merge:
    """A copy of ``data`` with rose's handler for each spec: updated in place when rose's own entry exists (so its
    position is stable), appended as a group of its own otherwise, left alone when a hand-wired rose hook already
    runs that event. Duplicate rose-managed entries of one event (only ever made by hand-editing) collapse to the
    first."""
    data = load_json(json.dumps(data))  # deep copy: the caller's dict stays the file as read
    merge = Merge(data, [], [], [])
    found = rose_handlers(data, agent)
    for spec in specs:
        event = spec.event.value
        wanted = handler_for(spec, command_for(event))
        mine = [f for f in found if f.event == event and f.hook.managed and f.hook.event == event]
        if mine:
            first = mine[0]
            handler = data["hooks"][event][first.group]["hooks"][first.index]
            if handler != wanted:
                handler.clear()
                handler.update(wanted)
                merge.updated.append(event)
            _remove_handlers(data, mine[1:])
            continue
        if any(f.event == event and not f.hook.managed and f.hook.event == event for f in found):
            merge.hand_wired.append(event)
            continue
        hooks = data.setdefault("hooks", {})
        hooks.setdefault(event, []).append({"hooks": [wanted]})
        merge.added.append(event)
    return merge


def remove_hooks(data: JsonObject, agent: Agent) -> tuple[JsonObject, list[str]]:
    """A copy of ``data`` without any rose-managed handler of ``agent``: a group left with no handler goes, an event
    left with no group goes, and ``hooks`` goes when that emptied it. Returns (data, events removed)."""
    data = load_json(json.dumps(data))
    mine = [f for f in rose_handlers(data, agent) if f.hook.managed]
    _remove_handlers(data, mine)
    return data, sorted({f.event for f in mine})


def _remove_handlers(data: JsonObject, found: list[Found]) -> None:
    hooks = data.get("hooks") or {}
    touched_events = set()
    # delete from the back so earlier indices stay valid
    for f in sorted(found, key=lambda f: (f.event, f.group, f.index), reverse=True):
        groups = hooks[f.event]
        handlers = groups[f.group]["hooks"]
        del handlers[f.index]
        if not handlers and set(groups[f.group]) <= {"hooks", "matcher"}:
            del groups[f.group]
        touched_events.add(f.event)
    for event in touched_events:
        if not hooks[event]:
            del hooks[event]
    if touched_events and not hooks:
        del data["hooks"]


def pruned(data: Any) -> Any:
    """``data`` without empty hook containers, to compare two files modulo those."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        kept = {}
        for event, groups in hooks.items():
            if isinstance(groups, list):
                groups = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == []
                                                    and set(g) <= {"hooks", "matcher"})]
                if not groups:
                    continue
            kept[event] = groups
        if kept:
            out["hooks"] = kept
        else:
            del out["hooks"]
    return out


def same_json(a: bytes | None, b: bytes | None) -> bool:
    """Do two file contents hold equal JSON (modulo empty hook containers)? False if either is unreadable."""
    if a is None or b is None:
        return False
    try:
        return pruned(load_json(a.decode("utf-8-sig") or "{}")) == pruned(load_json(b.decode("utf-8-sig") or "{}"))
    except (ValueError, UnicodeDecodeError):
        return False


# -- plans ---------------------------------------------------------------------------------------------------------
class JsonPlan(Record):
    edit: FileEdit
    data: JsonObject  # the file's JSON after the edit
    merge: Merge | None = None
    removed: list[str] | None = None


def plan_install(path: Path, agent: Agent, specs: Iterable[HookSpec], command_for: Callable[[str], str],
                 what: str) -> JsonPlan:
    raw = read_bytes(path)
    data, style = parse(path, raw, what)
    merge = add_hooks(data, agent, specs, command_for)
    changed = bool(merge.added or merge.updated) or merge.data != data
    after = style.render(merge.data) if changed else raw
    # the backup is the user's own file: taken only while it holds nothing of rose's (a file rose created has none)
    pristine = not any(f.hook.managed for f in rose_handlers(data, agent))
    edit = FileEdit(path, raw, after, _describe(merge), keep_backup=pristine)
    return JsonPlan(edit, merge.data, merge=merge)


def plan_uninstall(path: Path, agent: Agent, what: str) -> JsonPlan:
    raw = read_bytes(path)
    data, style = parse(path, raw, what)
    remaining, removed = remove_hooks(data, agent)
    if not removed:
        return JsonPlan(FileEdit(path, raw, raw, "no rose hooks"), data, removed=[])
    detail = "removed " + ", ".join(sorted(removed, key=_event_order)) + " hooks"
    backup = read_bytes(backup_path(path))
    rendered = style.render(remaining)
    if backup is not None and same_json(rendered, backup):
        edit = FileEdit(path, raw, backup, detail + "; put the pre-install file back", drop_backup=True)
    elif backup is None and not remaining:
        edit = FileEdit(path, raw, None, detail + "; rose had created the file",
                        prune_dir=path.parent.name in AGENT_DIRS)
    else:
        edit = FileEdit(path, raw, rendered, detail)
    return JsonPlan(edit, remaining, removed=removed)


def _event_order(event: str) -> tuple[int, str]:
    order = ("UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")
    return (order.index(event) if event in order else len(order), event)


def _describe(merge: Merge) -> str:
    parts = []
    if merge.added:
        parts.append("added " + ", ".join(merge.added))
    if merge.updated:
        parts.append("updated " + ", ".join(merge.updated))
    if merge.hand_wired:
        parts.append("left the hand-wired rose hook of " + ", ".join(merge.hand_wired) + " as it is")
    return "; ".join(parts) or "rose's hooks already in place"
