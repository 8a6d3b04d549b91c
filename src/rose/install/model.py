"""The typed records of `rose install` / `rose uninstall` / the wiring checks of `rose doctor`.

`Agent` is the hook adapters' own enum (one name for "claude" / "codex" across rose). `InstallScope` is where hooks are
wired: USER (every repository: the agent's settings under the home directory) or PROJECT (only the project the
command runs in). It is not the store scope of `rose.model.Scope` (project / global lessons).
"""
from __future__ import annotations

from enum import Enum
from pathlib import Path

from rose.errors import InstallError
from rose.hooks.adapters import Agent, HookName
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (~7 ms of `rose doctor`)
    from typing import Any

__all__ = [
    "Agent",
    "FileAction",
    "FileChange",
    "HookSpec",
    "InstallError",
    "InstallReport",
    "InstallScope",
    "Level",
    "WiringCheck",
]


class InstallScope(str, Enum):
    USER = "user"        # ~/.claude/settings.json, ~/.codex/hooks.json: every repository
    PROJECT = "project"  # <project>/.claude/settings.json, <project>/.codex/hooks.json: this project only


class Level(str, Enum):
    """Same values as `rose.doctor.Level`, so a wiring check converts to a doctor check one to one."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"


class FileAction(str, Enum):
    CREATED = "created"      # the file did not exist; rose wrote it
    UPDATED = "updated"      # rose changed an existing file (a backup was kept where needed)
    UNCHANGED = "unchanged"  # nothing to do: already as wanted (installing twice changes nothing)
    RESTORED = "restored"    # uninstall put the backup back byte for byte and removed the backup
    REMOVED = "removed"      # uninstall deleted a file rose had created




# what a dry run says of each change: what would happen, never what did
_WOULD = {FileAction.CREATED: "would create", FileAction.UPDATED: "would update", FileAction.UNCHANGED: "unchanged",
          FileAction.RESTORED: "would restore", FileAction.REMOVED: "would remove"}


class HookSpec(Record, frozen=True):
    """One hook rose wires: the event, its timeout in seconds (per agent), why that timeout, and the status line the
    agent shows while it runs (`statusMessage`: Claude Code's spinner, Codex's working line after ~300 ms)."""

    event: HookName
    timeout_s: int
    why: str
    status: str = ""


class FileChange(Record, frozen=True):
    path: Path
    action: FileAction
    detail: str = ""
    backup: Path | None = None  # where the pre-install copy is (kept until an exact restore)

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "action": self.action.value, "detail": self.detail,
                "backup": str(self.backup) if self.backup else None}


class InstallReport(Record):
    """What one `install` / `uninstall` call did for one agent and scope, in words a user can act on."""

    agent: Agent
    scope: InstallScope
    operation: str                    # "install" | "uninstall"
    summary: str                      # one plain sentence: what is wired where now
    command: str = ""                 # the hook command rose wired, with <Event> for the event
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth knowing, nothing to do
    steps: list[str] = field(default_factory=list)  # the user must do these for the hooks to fire
    skipped: bool = False             # `--agent auto` found no trace of this agent, so nothing was done for it
    dry_run: bool = False             # nothing was written: the changes are what would happen

    @property
    def changed(self) -> bool:
        return any(c.action is not FileAction.UNCHANGED for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent.value, "scope": self.scope.value, "operation": self.operation,
                "summary": self.summary, "command": self.command, "changed": self.changed,
                "changes": [c.to_dict() for c in self.changes], "notes": list(self.notes),
                "steps": list(self.steps), "skipped": self.skipped, "dry_run": self.dry_run}

    def render(self) -> str:
        lines = [f"{self.agent.value}: {self.summary}" + (" (dry run: nothing written)" if self.dry_run else "")]
        for change in self.changes:
            verb = _WOULD[change.action] if self.dry_run else change.action.value
            text = f"  {verb} {change.path}"
            if change.detail:
                text += f": {change.detail}"
            if change.backup and change.action is FileAction.UPDATED:
                text += f" (backup: {change.backup})"
            lines.append(text)
        if self.command:
            lines.append(f"  hook command: {self.command}")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  to do: {step}" for step in self.steps]
        return "\n".join(lines)


class WiringCheck(Record, frozen=True):
    """One line of `rose doctor` about hook wiring. `name` reads like "claude hooks (project)"."""

    name: str
    level: Level
    detail: str
    agent: Agent | None = None
    scope: InstallScope | None = None
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level.value, "detail": self.detail,
                "agent": self.agent.value if self.agent else None,
                "scope": self.scope.value if self.scope else None,
                "path": str(self.path) if self.path else None}
