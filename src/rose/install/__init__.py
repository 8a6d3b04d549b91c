"""Wiring rose into the agents: `rose install`, `rose uninstall`, and the hook checks of `rose doctor`.

    install(Agent.CLAUDE, InstallScope.PROJECT, cwd, home)  -> InstallReport   (idempotent: twice changes nothing)
    uninstall(Agent.CODEX, InstallScope.USER, cwd, home)    -> InstallReport   (removes exactly what install added)
    wiring_checks(cwd, home)                         -> list[WiringCheck]

One module per agent (claude.py, codex.py) plans its edits; files.py applies them (backups, atomic writes);
jsonhooks.py, toml.py and agents_md.py are the format helpers. See docs/integration.md.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from rose.install import claude, codex
from rose.install.command import INSTALL_HINT, ephemeral, rose_argv
from rose.mcp import sdk_available
from rose.install.files import Plan, apply, refuse_links_out
from rose.install.hooks import HOOKS
from rose.install.model import (
    FileAction,
    Agent,
    FileChange,
    HookSpec,
    InstallError,
    InstallReport,
    Level,
    InstallScope,
    WiringCheck,
)

__all__ = [
    "HOOKS",
    "Agent",
    "FileAction",
    "FileChange",
    "HookSpec",
    "InstallError",
    "InstallReport",
    "InstallScope",
    "Level",
    "WiringCheck",
    "agents_for",
    "install",
    "install_agents",
    "render_reports",
    "rose_argv",
    "uninstall",
    "wiring_checks",
]

_MODULES = {Agent.CLAUDE: claude, Agent.CODEX: codex}
_CLI_NAMES = {Agent.CLAUDE: "claude", Agent.CODEX: "codex"}


def agents_for(choice: str, home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Agent]:
    """``claude`` | ``codex`` | ``all`` | ``auto`` -> the agents to act on. ``auto``: every agent whose CLI is on PATH
    or whose config folder exists, Claude Code when none is found."""
    if choice == "all":
        return [Agent.CLAUDE, Agent.CODEX]
    if choice != "auto":
        return [Agent(choice)]
    env = os.environ if env is None else env
    home = Path(home) if home is not None else Path.home()
    found = [a for a in (Agent.CLAUDE, Agent.CODEX) if _absent(a, home, env) is None]
    return found or [Agent.CLAUDE]


def _absent(agent: Agent, home: Path, env: Mapping[str, str]) -> str | None:
    """Why ``agent`` looks absent ("no codex on PATH and no ~/.codex"), or None when its CLI or folder is there."""
    folder = claude.config_dir(home, env) if agent is Agent.CLAUDE else codex.codex_home(home, env)
    name = _CLI_NAMES[agent]
    if shutil.which(name, path=env.get("PATH")) or folder.is_dir():
        return None
    shown = str(folder)
    if shown.startswith(str(home) + os.sep):
        shown = "~" + shown[len(str(home)):]
    return f"no {name} on PATH and no {shown}"


def install_agents(choice: str, scope: InstallScope = InstallScope.PROJECT, cwd: Path | None = None, home: Path | None = None,
                   *, rose: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
                   dry_run: bool = False, mcp: bool = True) -> list[InstallReport]:
    """`rose install --agent CHOICE`: one report per agent. With ``auto``, an agent that left no trace (no CLI on PATH,
    no config folder) gets a report that says it was skipped and why, and how to wire it anyway; when neither agent
    is found, Claude Code is wired all the same and its report says so."""
    _agent, scope, cwd, home, env = _norm(Agent.CLAUDE, scope, cwd, home, env)
    chosen = agents_for(choice, home, env)
    reports = []
    for agent in (Agent.CLAUDE, Agent.CODEX):
        why = _absent(agent, home, env) if choice == "auto" else None
        if agent in chosen:
            report = install(agent, scope, cwd, home, rose=rose, env=env, dry_run=dry_run, mcp=mcp)
            if why:
                report.notes.append(f"{why}: wired anyway (the default when no agent is found), so the hooks run "
                                    f"once {'Claude Code' if agent is Agent.CLAUDE else 'Codex'} is installed")
            reports.append(report)
        elif why:
            reports.append(InstallReport(agent, scope, "install", f"skipped ({why})", skipped=True,
                                         notes=[f"`rose install --agent {agent.value}` wires it anyway"]))
    return reports


def install(agent: Agent, scope: InstallScope = InstallScope.PROJECT, cwd: Path | None = None, home: Path | None = None, *,
            rose: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
            dry_run: bool = False, mcp: bool = True) -> InstallReport:
    """Wire rose's four hooks (UserPromptSubmit, PreCompact, Stop, SessionEnd) for ``agent`` at ``scope``, and
    register rose's MCP server (`rose mcp`) beside them unless ``mcp`` is False (rose.install.mcpservers).

    ``rose`` is the argv that runs rose (default: `rose_argv()`, the console script beside this interpreter); the
    MCP server is registered for that default only when this interpreter has the MCP SDK (the `mcp` extra).
    Every file is planned before any is written: a malformed file raises InstallError and nothing changes."""
    agent, scope, cwd, home, env = _norm(agent, scope, cwd, home, env)
    scope, home_note = _in_home(agent, scope, cwd, home, env, "wired")
    argv = list(rose) if rose else rose_argv()
    no_sdk = mcp and not rose and not sdk_available()
    plan = _MODULES[agent].plan_install(scope, cwd, home, argv, env, mcp=mcp and not no_sdk)
    if no_sdk:
        plan.notes = [*(plan.notes or []), "rose's MCP server was not registered: the MCP SDK is not installed for "
                      "this rose (`pip install 'rose-memory[mcp]'`, which `python3 dev.py install` includes); run "
                      "rose install again afterwards"]
    if scope is InstallScope.PROJECT:
        plan.notes = [*(plan.notes or []), *_subfolder_note(agent, cwd)]
    plan.notes = [*home_note, *(plan.notes or [])]
    if ephemeral(argv):
        plan.steps = [*(plan.steps or []), f"this rose runs from a temporary environment ({argv[0]}) that can vanish "
                      f"with its cache, and the hooks with it: install rose for good ({INSTALL_HINT}) and run "
                      "`rose install` again with that rose"]
    if scope is InstallScope.PROJECT:
        refuse_links_out(plan.edits, cwd)
    return _report(agent, scope, "install", plan, dry_run)


def uninstall(agent: Agent, scope: InstallScope = InstallScope.PROJECT, cwd: Path | None = None, home: Path | None = None, *,
              env: Mapping[str, str] | None = None, dry_run: bool = False) -> InstallReport:
    """Remove exactly what `install` added for ``agent`` at ``scope``; files rose created are deleted, files it
    changed are put back byte for byte from their backup when nothing else changed in them since."""
    agent, scope, cwd, home, env = _norm(agent, scope, cwd, home, env)
    scope, home_note = _in_home(agent, scope, cwd, home, env, "unwired")
    plan = _MODULES[agent].plan_uninstall(scope, cwd, home, env)
    plan.notes = [*home_note, *(plan.notes or [])]
    if scope is InstallScope.PROJECT:
        refuse_links_out(plan.edits, cwd)
    return _report(agent, scope, "uninstall", plan, dry_run)


def _in_home(agent: Agent, scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str],
             done: str) -> tuple[InstallScope, list[str]]:
    """The scope to act at, and a note. Run in the home folder itself, the project's agent folder is the user's own
    (~/.claude, ~/.codex): planned as two scopes, the same files would be edited twice, the second write over the
    first. There the project scope is the user scope, and the note says so."""
    if scope is InstallScope.PROJECT and _MODULES[agent].project_is_user(cwd, home, env):
        return InstallScope.USER, [f"{cwd} is your home folder, whose {'.claude' if agent is Agent.CLAUDE else '.codex'}"
                                   f"/ holds your user settings: rose is {done} at --scope user (every repository)"]
    return scope, []


def wiring_checks(cwd: Path | None = None, home: Path | None = None, *,
                  env: Mapping[str, str] | None = None) -> list[WiringCheck]:
    """For `rose doctor`: per agent and scope, what is wired where, whether the hook command still resolves, and
    whether the hooks would fire (settings file valid, Codex trust in place, Codex project trusted)."""
    _agent, _scope, cwd, home, env = _norm(Agent.CLAUDE, InstallScope.PROJECT, cwd, home, env)
    out: list[WiringCheck] = []
    for agent, module in _MODULES.items():
        cli_found = shutil.which(_CLI_NAMES[agent], path=env.get("PATH")) is not None
        out += module.checks(cwd, home, env, cli_found)
    return out


def _subfolder_note(agent: Agent, cwd: Path) -> list[str]:
    root = codex.git_root(cwd)
    if root is None or str(root) == os.path.realpath(cwd):
        return []
    if agent is Agent.CLAUDE:  # seen with claude-code 2.1.332: no walking up to the repository root
        return [f"Claude Code reads {cwd}/.claude/ only when started in {cwd} itself; to cover the whole "
                f"repository, run rose install in {root}"]
    return [f"Codex loads {cwd}/.codex/ only when started in {cwd} or below; to cover the whole repository, run "
            f"rose install in {root}"]


def render_reports(reports: Sequence[InstallReport]) -> str:
    return "\n".join(r.render() for r in reports)


def _norm(agent: Agent | str, scope: InstallScope | str, cwd: Path | None, home: Path | None,
          env: Mapping[str, str] | None) -> tuple[Agent, InstallScope, Path, Path, Mapping[str, str]]:
    return (Agent(agent), InstallScope(scope), Path(os.path.abspath(cwd if cwd is not None else os.getcwd())),
            Path(os.path.abspath(home if home is not None else Path.home())), os.environ if env is None else env)


def _report(agent: Agent, scope: InstallScope, operation: str, plan: Plan, dry_run: bool) -> InstallReport:
    if dry_run:
        changes = [FileChange(e.path, e.action(), e.detail) for e in plan.edits if not (e.noop and e.before is None)]
    else:
        changes = [c for c, e in zip(apply(plan.edits), plan.edits) if not (e.noop and e.before is None)]
    notes = list(plan.notes or [])
    if operation == "uninstall":
        notes += [f"{c.path} changed since rose installed, so rose removed only its own part and kept the "
                  f"pre-install copy at {c.backup} (delete it when you no longer need it)"
                  for c in changes if c.action is FileAction.UPDATED and c.backup is not None]
    return InstallReport(agent, scope, operation, plan.summary, plan.command, changes, notes,
                         list(plan.steps or []), dry_run=dry_run)
