"""Claude Code: rose's four hooks in the settings.json of a scope.

    --scope user      $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json   (every repository)
    --scope project   <project>/.claude/settings.json                                  (this project only)

Claude Code silently ignores a settings file that fails its validation, so rose only ever adds the documented shape
(``{"hooks": [{"type": "command", "command": ..., "timeout": N}]}`` as a group of its own) and refuses to touch a file
it cannot parse. The Claude Code plugin in the repository (``.claude-plugin/``, ``hooks/hooks.json``) is the other
way in; it is detected here so the two are not both left running.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from rose.install import jsonhooks, mcpservers
from rose.install.command import (INSTALL_HINT, command_executable, display_command, executable_resolves,
                                  hook_command, user_install)
from rose.install.files import Plan, read_bytes
from rose.install.hooks import EVENTS, HOOKS
from rose.install.model import Agent, InstallError, Level, InstallScope, WiringCheck

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

AGENT = Agent.CLAUDE
WHAT = "Claude Code ignores a settings file it cannot parse, so its hooks are off until it is fixed."
PLUGIN_PREFIX = "rose@"


def config_dir(home: Path, env: Mapping[str, str]) -> Path:
    custom = env.get("CLAUDE_CONFIG_DIR")
    return Path(custom).expanduser() if custom else home / ".claude"


def settings_path(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    if scope is InstallScope.USER:
        return config_dir(home, env) / "settings.json"
    return cwd / ".claude" / "settings.json"


def project_is_user(cwd: Path, home: Path, env: Mapping[str, str]) -> bool:
    """Run in the home folder itself, the project's .claude/ is the user's own: one set of files, one scope."""
    return os.path.realpath(cwd / ".claude") == os.path.realpath(config_dir(home, env))


def where(scope: InstallScope, path: Path) -> str:
    if scope is InstallScope.PROJECT:
        return f"hooks installed for this project only ({path}); use --scope user for every repository"
    return f"hooks installed for every repository ({path})"


def mcp_path(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    """Where Claude Code reads MCP servers: its own state file (user), or the project's .mcp.json (project)."""
    if scope is InstallScope.USER:
        custom = env.get("CLAUDE_CONFIG_DIR")
        return (Path(custom).expanduser() if custom else home) / ".claude.json"
    return cwd / ".mcp.json"


MCP_WHAT = "Claude Code cannot load MCP servers from a file it cannot parse."


def plan_install(scope: InstallScope, cwd: Path, home: Path, argv: Sequence[str], env: Mapping[str, str],
                 mcp: bool = True) -> Plan:
    path = settings_path(scope, cwd, home, env)
    plan = jsonhooks.plan_install(path, AGENT, HOOKS[AGENT], lambda event: hook_command(argv, AGENT, event), WHAT)
    notes = []
    edits = [plan.edit]
    if mcp:
        mcp_edit, mcp_notes = mcpservers.plan_json_install(mcp_path(scope, cwd, home, env), argv, MCP_WHAT)
        edits.append(mcp_edit)
        notes += mcp_notes
        if scope is InstallScope.PROJECT and mcp_edit.before != mcp_edit.after:
            notes.append(f"Claude Code asks once before it starts the MCP server in {mcp_edit.path} (approve rose "
                         "there, or in /mcp)")
    merge = plan.merge
    if merge and merge.hand_wired:
        notes.append(f"{', '.join(merge.hand_wired)} already run(s) rose through a hook not written by rose install "
                     f"in {path}; rose left it as it is and did not add a second one")
    other = InstallScope.USER if scope is InstallScope.PROJECT else InstallScope.PROJECT
    other_path = settings_path(other, cwd, home, env)
    if not project_is_user(cwd, home, env) and _wired_events(other_path):
        notes.append(f"rose's hooks are also wired in {other_path} (--scope {other.value}): each event would run rose "
                     f"twice; remove one with `rose uninstall --agent claude --scope {other.value}`")
    if _plugin_enabled(cwd, home, env):
        notes.append("the rose Claude Code plugin is enabled too: each event would run rose twice; keep one "
                     "(`claude plugin disable rose@rose`, or `rose uninstall --agent claude`)")
    return Plan(where(scope, path), edits, display_command(argv, AGENT), notes=notes)


def plan_uninstall(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Plan:
    path = settings_path(scope, cwd, home, env)
    plan = jsonhooks.plan_uninstall(path, AGENT, WHAT)
    mcp_edit = mcpservers.plan_json_uninstall(mcp_path(scope, cwd, home, env), MCP_WHAT)
    if plan.removed:
        summary = f"removed rose's hooks from {path}"
    else:
        summary = f"no rose hooks to remove in {path}"
    if mcp_edit.before != mcp_edit.after:
        summary += f"; removed rose's MCP server from {mcp_edit.path}"
    return Plan(summary, [plan.edit, mcp_edit])


# -- doctor --------------------------------------------------------------------------------------------------------
def _load(path: Path) -> dict | None:
    """The settings object, None when the file does not exist; InstallError when it is unreadable."""
    raw = read_bytes(path)
    data, _style = jsonhooks.parse(path, raw, WHAT)
    return data if raw is not None else None


def _wired_events(path: Path) -> list[str]:
    try:
        data = _load(path)
    except InstallError:
        return []
    return sorted({f.hook.event for f in jsonhooks.rose_handlers(data or {}, AGENT)})


def _plugin_enabled(cwd: Path, home: Path, env: Mapping[str, str]) -> bool:
    for path in _all_settings(cwd, home, env):
        try:
            data = _load(path) or {}
        except InstallError:
            continue
        plugins = data.get("enabledPlugins")
        if isinstance(plugins, dict) and any(k.startswith(PLUGIN_PREFIX) and v for k, v in plugins.items()):
            return True
    return False


def _all_settings(cwd: Path, home: Path, env: Mapping[str, str]) -> list[Path]:
    return [settings_path(InstallScope.USER, cwd, home, env), settings_path(InstallScope.PROJECT, cwd, home, env),
            cwd / ".claude" / "settings.local.json"]


def checks(cwd: Path, home: Path, env: Mapping[str, str], cli_found: bool) -> list[WiringCheck]:
    out: list[WiringCheck] = []
    wired_in: list[str] = []
    scoped = [(InstallScope.USER, settings_path(InstallScope.USER, cwd, home, env)),
              (InstallScope.PROJECT, settings_path(InstallScope.PROJECT, cwd, home, env)),
              (InstallScope.PROJECT, cwd / ".claude" / "settings.local.json")]
    if project_is_user(cwd, home, env):   # in the home folder: the project's settings.json is the user's, once
        del scoped[1]
    for scope, path in scoped:
        name = f"claude hooks ({scope.value})"
        try:
            data = _load(path)
        except InstallError as exc:
            out.append(WiringCheck(name, Level.FAIL, f"{exc}", AGENT, scope, path))
            continue
        if data is None:
            continue
        if data.get("disableAllHooks") is True:
            out.append(WiringCheck(name, Level.WARN, f"{path} sets disableAllHooks: no hook runs, rose's included",
                                   AGENT, scope, path))
        found = jsonhooks.rose_handlers(data, AGENT)
        if not found:
            continue
        wired_in.append(str(path))
        out += _handler_checks(name, found, scope, path, env)
    registered: list[tuple[str, Path, Any, bool, str | None]] = []
    for scope in (InstallScope.USER, InstallScope.PROJECT):
        path = mcp_path(scope, cwd, home, env)
        entry, problem = mcpservers.json_entry(path)
        registered.append((scope.value, path, entry, mcpservers.is_managed(entry), problem))
    out += mcpservers.checks(AGENT.value, registered, env.get("PATH"))
    plugin = _plugin_enabled(cwd, home, env)
    if plugin:
        wired_in.append("the rose plugin")
        out.append(_plugin_check(home, env))
    if not wired_in:
        level = Level.WARN if cli_found else Level.INFO
        out.append(WiringCheck("claude hooks", level, "not wired: `rose install --agent claude` (this project) or "
                               "`rose install --agent claude --scope user` (every repository)", AGENT))
    elif len(wired_in) > 1:
        out.append(WiringCheck("claude hooks", Level.WARN, "wired more than once (" + "; ".join(wired_in) + "): each "
                               "event runs rose once per place; keep one", AGENT))
    return out


def _plugin_check(home: Path, env: Mapping[str, str]) -> WiringCheck:
    """The plugin's hooks (hooks/rose) run `rose` from PATH, else where `python3 dev.py install` puts it."""
    if executable_resolves("rose", env.get("PATH")):
        return WiringCheck("claude plugin", Level.OK, "rose@rose is enabled; its hooks run `rose` from PATH", AGENT)
    for path in user_install(home, env):
        if executable_resolves(str(path)):
            return WiringCheck("claude plugin", Level.OK, f"rose@rose is enabled; `rose` is not on PATH, so its hooks "
                               f"run {path}", AGENT)
    return WiringCheck("claude plugin", Level.FAIL, "rose@rose is enabled but finds no rose (none on PATH, none in "
                       f"{user_install(home, env)[0].parent}), so its hooks only say so on each prompt: run "
                       f"{INSTALL_HINT}", AGENT)


def _handler_checks(name: str, found: list[jsonhooks.Found], scope: InstallScope, path: Path,
                    env: Mapping[str, str]) -> list[WiringCheck]:
    out = []
    events = {f.hook.event for f in found}
    missing = [e for e in EVENTS if e not in events]
    misplaced = [f for f in found if f.hook.event != f.event]
    broken = sorted({str(command_executable(str(f.handler.get("command")))) for f in found
                     if not executable_resolves(str(command_executable(str(f.handler.get("command"))) or ""),
                                                env.get("PATH"))})
    if broken:
        out.append(WiringCheck(name, Level.FAIL, f"{path}: the hook command's program {', '.join(broken)} no longer "
                               "exists (rose moved or was uninstalled): run `rose install` again", AGENT, scope, path))
    if misplaced:
        out.append(WiringCheck(name, Level.WARN, f"{path}: " + ", ".join(f"hooks.{f.event} runs `hook claude "
                               f"{f.hook.event}`" for f in misplaced), AGENT, scope, path))
    if missing:
        out.append(WiringCheck(name, Level.WARN, f"{path}: {', '.join(sorted(events))} wired, {', '.join(missing)} "
                               "missing: run `rose install` again", AGENT, scope, path))
    elif not broken:
        kind = "" if all(f.hook.managed for f in found) else " (some wired by hand)"
        out.append(WiringCheck(name, Level.OK, f"{', '.join(EVENTS)} in {path}{kind}", AGENT, scope, path))
    return out
