"""The one piece of agent config evolution touches: a PreToolUse hook for guardrails, machine-local and reversible.

Guardrails need Claude Code to ask rose before a shell command runs. That hook is not part of `rose install` (every
tool call would pay for starting rose, with evolution off by default); it is added only while a guardrail of the
project is in trial or active, and removed when none is, in the project's `.claude/settings.local.json`: Claude
Code's own machine-local settings file, not committed. Only rose's own group (matcher `Bash`, a command marked
`# rose-managed`) is ever added or removed there; everything else in the file is left exactly as it was. The command
is the rose this machine runs (rose.install.command.rose_argv), never anything a repository names.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rose.text import load_json

EVENT = "PreToolUse"
MATCHER = "Bash"
TIMEOUT_S = 5


def settings_local(project_root: Path) -> Path:
    return project_root / ".claude" / "settings.local.json"


def _load(path: Path) -> dict[str, Any] | None:
    from rose.store import reader

    try:   # the repository's .claude/settings.local.json: a regular file, no link out of the repository
        text = reader.read_text(path, reader.RECORD, within=path.parent.parent)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError):   # UnsafeFile too: a file rose cannot read is never rewritten
        return None
    try:
        data = load_json(text) if text.strip() else {}
    except ValueError:
        return None   # a file rose cannot parse is never rewritten
    return data if isinstance(data, dict) else None


def _ours(data: dict[str, Any]) -> list[tuple[int, int]]:
    from rose.install.command import parse_rose_hook

    out = []
    for g, group in enumerate((data.get("hooks") or {}).get(EVENT) or []):
        for i, handler in enumerate((group.get("hooks") if isinstance(group, dict) else None) or []):
            hook = parse_rose_hook(handler.get("command")) if isinstance(handler, dict) else None
            if hook is not None and hook.managed and hook.event == EVENT:
                out.append((g, i))
    return out


def wired(project_root: Path) -> bool:
    from rose.evolve.placed import link_on_the_way

    path = settings_local(project_root)
    if link_on_the_way(project_root, path) is not None:
        return False   # what a link leads to is not this repository's settings
    data = _load(path)
    return bool(data and _ours(data))


def ensure(project_root: Path, wanted: bool) -> str:
    """Add (wanted) or remove rose's PreToolUse group; returns what changed ("" when nothing did)."""
    from rose.install.command import hook_command, rose_argv
    from rose.install.model import Agent
    from rose.store.atomic import write_text_atomic

    from rose.evolve.placed import link_on_the_way

    path = settings_local(project_root)
    link = link_on_the_way(project_root, path)
    if link is not None:   # a committed `.claude` link: another project's settings, or the user's own
        return f"{path} is not a settings file rose can read: {link} is a symbolic link, left as it is"
    data = _load(path)
    if data is None or not isinstance(data.get("hooks", {}), dict):
        return f"{path} is not a settings file rose can read: left as it is"
    mine = _ours(data)
    if wanted and mine:
        return ""
    if not wanted and not mine:
        return ""
    if wanted:
        handler = {"type": "command", "command": hook_command(rose_argv(), Agent.CLAUDE, EVENT), "timeout": TIMEOUT_S}
        data.setdefault("hooks", {}).setdefault(EVENT, []).append({"matcher": MATCHER, "hooks": [handler]})
    else:
        groups = data["hooks"][EVENT]
        for g, i in sorted(mine, reverse=True):
            del groups[g]["hooks"][i]
            if not groups[g]["hooks"] and set(groups[g]) <= {"hooks", "matcher"}:
                del groups[g]
        if not groups:
            del data["hooks"][EVENT]
        if not data["hooks"]:
            del data["hooks"]
    if not data and path.exists() and not wanted:
        path.unlink()
        return f"removed rose's guardrail hook (and the empty {path})"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    done = f"{'added' if wanted else 'removed'} rose's guardrail hook in {path}"
    if wanted:
        from rose.evolve.placed import exclude

        problem = exclude(project_root, path)
        if problem:
            done += f" ({problem})"
    return done
