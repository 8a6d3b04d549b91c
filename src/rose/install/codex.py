"""Codex: rose's four hooks in a hooks.json, the trust Codex needs before it runs them, and an AGENTS.md fallback.

    --scope user      $CODEX_HOME/hooks.json, else ~/.codex/hooks.json    AGENTS.md beside it
    --scope project   <project>/.codex/hooks.json                          <project>/AGENTS.md

Codex runs a hook only once it is trusted, and skips an untrusted one silently. Trust lives in the *user's*
config.toml (a project's own config cannot trust its hooks) as

    [hooks.state."<absolute path of hooks.json>:<event in snake_case>:<group>:<handler>"]
    trusted_hash = "sha256:<hex>"

where the hash is SHA-256 over the canonical JSON (sorted keys, no spaces) of the hook's normalized identity
``{"event_name": "user_prompt_submit", "hooks": [{"async": false, "command": ..., "timeout": N, "type":
"command"}]}`` (plus ``matcher`` and ``statusMessage`` when set; ``timeout`` defaults to 600, is at least 1, and
Codex clamps SessionEnd's to 3). That is how codex-rs computes ``currentHash`` (hooks/src/engine/discovery.rs,
``command_hook_hash`` / ``version_for_toml``); rose computes the same value for the handlers it wrote, appends
one marked table per hook at the end of config.toml (the user's bytes before it are untouched), and the tests check
the value against ``codex app-server``'s ``hooks/list`` and prove that ``codex exec`` runs the hooks without
``--dangerously-bypass-hook-trust``.

Project hooks load only in a trusted project (``[projects."<dir>"] trust_level = "trusted"``). That trusts far more
than rose's hooks (the project's whole .codex/ config), so rose does not write it: it tells the user the step.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from rose.install import agents_md, jsonhooks, mcpservers, toml
from rose.install.command import (
    command_executable,
    display_command,
    executable_resolves,
    hook_command,
    shell_join,
)
from rose.install.files import FileEdit, Plan, backup_path, decode, read_bytes
from rose.install.hooks import EVENTS, HOOKS
from rose.install.model import Agent, InstallError, Level, InstallScope, WiringCheck

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (~7 ms of `rose doctor`)
    from typing import Any

AGENT = Agent.CODEX
WHAT = "Codex skips a hooks.json it cannot parse, so its hooks are off until it is fixed."
DEFAULT_TIMEOUT_S = 600
SESSION_END_MAX_TIMEOUT_S = 3


# -- paths -----------------------------------------------------------------------------------------------------------
def codex_home(home: Path, env: Mapping[str, str]) -> Path:
    custom = env.get("CODEX_HOME")
    return Path(custom).expanduser() if custom else home / ".codex"


def hooks_path(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    if scope is InstallScope.USER:
        return codex_home(home, env) / "hooks.json"
    return cwd / ".codex" / "hooks.json"


def project_is_user(cwd: Path, home: Path, env: Mapping[str, str]) -> bool:
    """Run in the home folder itself (CODEX_HOME unset), the project's .codex/ is the user's own: one set of files,
    one scope."""
    return os.path.realpath(cwd / ".codex") == os.path.realpath(codex_home(home, env))


def config_path(home: Path, env: Mapping[str, str]) -> Path:
    return codex_home(home, env) / "config.toml"


def agents_md_path(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    return codex_home(home, env) / "AGENTS.md" if scope is InstallScope.USER else cwd / "AGENTS.md"


# -- trust -----------------------------------------------------------------------------------------------------------
def snake(event: str) -> str:
    """``UserPromptSubmit`` -> ``user_prompt_submit`` (the event part of a trust key)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def key_files(path: Path) -> list[str]:
    """The spellings of ``path`` Codex may use in a trust key: absolute, and resolved when that differs (Codex
    resolves a project folder from the working directory, which the OS reports with symlinks resolved)."""
    absolute = os.path.abspath(path)
    resolved = os.path.realpath(path)
    return [absolute] if resolved == absolute else [absolute, resolved]


def trust_key(file: str, event: str, group: int, handler: int) -> str:
    return f"{file}:{snake(event)}:{group}:{handler}"


def hook_hash(event: str, command: str, timeout: Any = None, matcher: str | None = None,
              status_message: str | None = None) -> str:
    """Codex's ``currentHash`` of a command hook (see the module docstring)."""
    seconds = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else DEFAULT_TIMEOUT_S
    seconds = max(1, seconds)
    if snake(event) == "session_end":
        seconds = min(seconds, SESSION_END_MAX_TIMEOUT_S)
    handler: dict[str, Any] = {"type": "command", "command": command, "timeout": seconds, "async": False}
    if status_message is not None:
        handler["statusMessage"] = status_message
    identity: dict[str, Any] = {"event_name": snake(event), "hooks": [handler]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib   # here: ~8 ms (OpenSSL's library) that `rose doctor` spends only when a Codex hook is there

    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def wanted_trust(path: Path, data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """{trust key: (hash, event)} for every rose-managed handler in the hooks file ``path`` holding ``data``."""
    out = {}
    for f in jsonhooks.rose_handlers(data, AGENT):
        if not f.hook.managed:
            continue
        group = data["hooks"][f.event][f.group]
        status = f.handler.get("statusMessage")
        digest = hook_hash(f.event, str(f.handler.get("command")), f.handler.get("timeout"),
                           group.get("matcher") if isinstance(group.get("matcher"), str) else None,
                           status if isinstance(status, str) else None)
        for file in key_files(path):
            out[trust_key(file, f.event, f.group, f.index)] = (digest, f.event)
    return out


def _state_key(header: str) -> str | None:
    try:
        parts = toml.header_key(header)
    except toml.TomlError:
        return None
    return parts[2] if len(parts) == 3 and parts[:2] == ["hooks", "state"] else None


def _owned_by(path: Path):
    files = set(key_files(path))

    def select(header: str) -> bool:
        key = _state_key(header)
        return key is not None and key.rsplit(":", 3)[0] in files

    return select


def _load_config(path: Path) -> tuple[bytes | None, str, dict[str, Any]]:
    raw = read_bytes(path)
    text = decode(path, raw) if raw is not None else ""
    try:
        return raw, text, toml.loads(text)
    except toml.TomlError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); rose left it untouched (Codex cannot start with it "
                           "either: fix it, then run the command again)") from None


def _state(config: dict[str, Any]) -> Any:
    return toml.dig(config, "hooks", "state")


def plan_trust(config: Path, hooks_file: Path, wanted: dict[str, tuple[str, str]]) -> tuple[FileEdit, list[str]]:
    """The config.toml edit that trusts exactly ``wanted`` for ``hooks_file`` (rose's tables for that file are
    replaced, everyone else's left alone), and the steps left to the user when that cannot be done safely."""
    raw, text, parsed = _load_config(config)
    select = _owned_by(hooks_file)
    mine_now = {key: toml.dig(parsed, "hooks", "state", key, "trusted_hash")
                for key in (_state_key(h) for h in toml.marked_headers(text) if select(h)) if key}
    base, _removed = toml.remove_marked_tables(text, select)
    try:
        base_parsed = toml.loads(base)
    except toml.TomlError as exc:
        return FileEdit(config, raw, raw, "left untouched"), [
            f"rose could not take its old trust entries out of {config} cleanly ({exc}); edit it by hand"]
    hooks_value, state = toml.dig(base_parsed, "hooks"), _state(base_parsed)
    if (hooks_value is not None and not isinstance(hooks_value, dict)) or (state is not None
                                                                          and not isinstance(state, dict)):
        return FileEdit(config, raw, raw, "left untouched"), [
            f"{config} defines `hooks` in a form rose does not edit (an inline table?); trust rose's hooks in Codex "
            "instead (`/hooks` in the Codex TUI)"]
    steps: list[str] = []
    tables: list[tuple[str, str, dict[str, str]]] = []
    to_write: dict[str, str] = {}
    for key, (digest, event) in wanted.items():
        existing = state.get(key) if isinstance(state, dict) else None
        if existing is None:
            tables.append((f"trust for rose's {event} hook (rose uninstall removes this)",
                           f"hooks.state.{toml.quote(key)}", {"trusted_hash": digest}))
            to_write[key] = digest
        elif not (isinstance(existing, dict) and existing.get("trusted_hash") == digest):
            steps.append(f'{config} already has [hooks.state.{toml.quote(key)}] with another hash; set its '
                         f'trusted_hash to "{digest}", or trust rose\'s {event} hook in Codex (`/hooks`)')
        # else: already trusted by the user (e.g. in /hooks): nothing to add
    if mine_now == to_write:
        return FileEdit(config, raw, raw, "rose's hooks already trusted"), steps
    after = toml.append_tables(base, tables)
    problem = _check_trust(after, to_write)
    if problem:
        return FileEdit(config, raw, raw, "left untouched"), steps + [
            f"rose could not add its trust entries to {config} safely ({problem}); trust rose's hooks in Codex "
            "instead (`/hooks` in the Codex TUI)"]
    detail = f"trusted rose's hooks ({len(tables)} entries)" if tables else "removed rose's old trust entries"
    pristine = not toml.marked_headers(text)  # back up the user's own file, never one holding rose's tables
    return FileEdit(config, raw, after.encode("utf-8"), detail, keep_backup=pristine), steps


def _check_trust(text: str, wanted: dict[str, str]) -> str | None:
    try:
        parsed = toml.loads(text)
    except toml.TomlError as exc:
        return f"the result would not parse: {exc}"
    for key, digest in wanted.items():
        if toml.dig(parsed, "hooks", "state", key, "trusted_hash") != digest:
            return f"the trust entry for {key} would not read back"
    return None


def plan_untrust(config: Path, hooks_file: Path, *, mcp: bool = False) -> FileEdit:
    """Take rose's trust entries for ``hooks_file`` out of ``config`` (and, with ``mcp``, rose's MCP server table,
    which the user scope keeps in the same file)."""
    raw = read_bytes(config)
    if raw is None:
        return FileEdit(config, None, None, "no rose trust entries")
    text = decode(config, raw)
    owned = _owned_by(hooks_file)
    trusts = sum(1 for header in toml.marked_headers(text) if owned(header))
    after, removed = toml.remove_marked_tables(text, (lambda h: owned(h) or mcpservers.is_mcp_header(h))
                                               if mcp else owned)
    if not removed:
        return FileEdit(config, raw, raw, "no rose trust entries")
    detail = "; ".join(part for part in (f"removed rose's {trusts} trust entries" if trusts else "",
                                         "removed rose's MCP server" if removed > trusts else "") if part)
    backup = read_bytes(backup_path(config))
    if backup is not None and decode(config, backup).rstrip() == after.rstrip():
        return FileEdit(config, raw, backup, detail + "; put the pre-install file back", drop_backup=True)
    if backup is None and not after.strip():
        return FileEdit(config, raw, None, detail + "; rose had created the file",
                        prune_dir=config.parent.name == ".codex")
    return FileEdit(config, raw, after.encode("utf-8"), detail)


# -- project trust ---------------------------------------------------------------------------------------------------
def git_root(path: Path) -> Path | None:
    here = Path(os.path.realpath(path))
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def project_trust(config: dict[str, Any], project: Path) -> str | None:
    """Codex's trust_level for ``project`` (looked up as Codex does: the folder itself, then its git root)."""
    projects = toml.dig(config, "projects")
    if not isinstance(projects, dict):
        return None
    candidates = [os.path.abspath(project), os.path.realpath(project)]
    root = git_root(project)
    if root is not None:
        candidates.append(str(root))
    for candidate in candidates:
        level = toml.dig(projects, candidate, "trust_level")
        if isinstance(level, str):
            return level
    return None


def _trust_project_step(project: Path, config: Path) -> str:
    folder = os.path.realpath(project)
    return (f"Codex loads {folder}/.codex/ only in a trusted project: start `codex` there once and choose to trust "
            f"it, or add to {config}:  [projects.{toml.quote(folder)}] trust_level = \"trusted\"")


# -- plans -----------------------------------------------------------------------------------------------------------
def agents_command(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """How AGENTS.md names rose: plain ``rose`` when that is what PATH finds, else the absolute command."""
    import shutil

    found = shutil.which("rose", path=env.get("PATH"))
    if found and len(argv) == 1 and os.path.realpath(found) == os.path.realpath(argv[0]):
        return "rose"
    return shell_join(argv)


def mcp_config_path(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    """Where rose's MCP server goes: the user's config.toml, or the project's own .codex/config.toml."""
    return config_path(home, env) if scope is InstallScope.USER else cwd / ".codex" / "config.toml"


def _with_mcp(edit: FileEdit, argv: Sequence[str]) -> tuple[FileEdit, list[str]]:
    """The user config.toml edit (rose's trust entries) with rose's MCP server table added on top: one edit, since
    both change the same file."""
    text = decode(edit.path, edit.after) if edit.after is not None else ""
    after, detail, notes = mcpservers.with_toml_server(edit.path, text, argv)
    if after == text:
        return edit, notes
    original = decode(edit.path, edit.before) if edit.before is not None else ""
    pristine = edit.before is not None and not toml.marked_headers(original)
    parts = [edit.detail if edit.before != edit.after else "", detail]
    return FileEdit(edit.path, edit.before, after.encode("utf-8"), "; ".join(p for p in parts if p),
                    keep_backup=pristine), notes


def plan_install(scope: InstallScope, cwd: Path, home: Path, argv: Sequence[str], env: Mapping[str, str],
                 mcp: bool = True) -> Plan:
    path = hooks_path(scope, cwd, home, env)
    config = config_path(home, env)
    hooks = jsonhooks.plan_install(path, AGENT, HOOKS[AGENT], lambda event: hook_command(argv, AGENT, event), WHAT)
    trust_edit, steps = plan_trust(config, path, wanted_trust(path, hooks.data))
    md = agents_md.plan_install(agents_md_path(scope, cwd, home, env), agents_command(argv, env))
    notes = []
    edits = [hooks.edit, trust_edit, md]
    if mcp and scope is InstallScope.USER:
        edits[1], mcp_notes = _with_mcp(trust_edit, argv)
        notes += mcp_notes
    elif mcp:
        mcp_edit, mcp_notes = mcpservers.plan_toml_install(mcp_config_path(scope, cwd, home, env), argv)
        edits.append(mcp_edit)
        notes += mcp_notes
    if hooks.merge and hooks.merge.hand_wired:
        notes.append(f"{', '.join(hooks.merge.hand_wired)} already run(s) rose through a hook not written by rose "
                     f"install in {path}; rose left it as it is (trust it in Codex with /hooks)")
    other = InstallScope.USER if scope is InstallScope.PROJECT else InstallScope.PROJECT
    other_path = hooks_path(other, cwd, home, env)
    if not project_is_user(cwd, home, env) and _wired(other_path):
        notes.append(f"rose's hooks are also wired in {other_path} (--scope {other.value}): each event would run rose "
                     f"twice; remove one with `rose uninstall --agent codex --scope {other.value}`")
    _raw, _text, parsed = _load_config(config)
    if toml.dig(parsed, "features", "hooks") is False:
        steps.append(f"hooks are switched off in {config} ([features] hooks = false): set it to true")
    if scope is InstallScope.PROJECT and project_trust(parsed, cwd) != "trusted":
        steps.append(_trust_project_step(cwd, config))
    if scope is InstallScope.PROJECT:
        summary = f"hooks installed for this project only ({path}); use --scope user for every repository"
    else:
        summary = f"hooks installed for every repository ({path})"
    return Plan(summary, edits, display_command(argv, AGENT), notes=notes, steps=steps)


def plan_uninstall(scope: InstallScope, cwd: Path, home: Path, env: Mapping[str, str]) -> Plan:
    path = hooks_path(scope, cwd, home, env)
    config = config_path(home, env)
    before = read_bytes(path)
    hooks = jsonhooks.plan_uninstall(path, AGENT, WHAT)
    notes = []
    if hooks.removed and before is not None:
        shifted = _shifted_groups(jsonhooks.parse(path, before, WHAT)[0])
        if shifted:
            notes.append(f"your own {', '.join(shifted)} hook(s) in {path} came after rose's and move up one place; "
                         "Codex keys trust by position, so it will ask you to trust them again (/hooks)")
    edits = [hooks.edit, plan_untrust(config, path, mcp=scope is InstallScope.USER),
             agents_md.plan_uninstall(agents_md_path(scope, cwd, home, env))]
    if scope is InstallScope.PROJECT:
        edits.append(mcpservers.plan_toml_uninstall(mcp_config_path(scope, cwd, home, env)))
    summary = f"removed rose's hooks from {path}" if hooks.removed else f"no rose hooks to remove in {path}"
    return Plan(summary, edits, notes=notes)


def _shifted_groups(data: dict[str, Any]) -> list[str]:
    out = []
    for f in jsonhooks.rose_handlers(data, AGENT):
        if f.hook.managed and len(data["hooks"][f.event]) > f.group + 1:
            out.append(f.event)
    return sorted(set(out))


def _wired(path: Path) -> bool:
    try:
        data, _style = jsonhooks.parse(path, read_bytes(path), WHAT)
    except InstallError:
        return False
    return bool(jsonhooks.rose_handlers(data, AGENT))


# -- doctor ----------------------------------------------------------------------------------------------------------
def checks(cwd: Path, home: Path, env: Mapping[str, str], cli_found: bool) -> list[WiringCheck]:
    out: list[WiringCheck] = []
    config = config_path(home, env)
    try:
        _raw, _text, parsed = _load_config(config)
    except InstallError as exc:
        return [WiringCheck("codex config", Level.FAIL, str(exc), AGENT, None, config)]
    state = _state(parsed)
    wired = []
    if toml.dig(parsed, "features", "hooks") is False:
        out.append(WiringCheck("codex hooks", Level.FAIL, f"{config} sets [features] hooks = false: no hook runs",
                               AGENT, None, config))
    scopes = (InstallScope.USER,) if project_is_user(cwd, home, env) else (InstallScope.USER, InstallScope.PROJECT)
    for scope in scopes:
        path = hooks_path(scope, cwd, home, env)
        name = f"codex hooks ({scope.value})"
        try:
            raw = read_bytes(path)
            data, _style = jsonhooks.parse(path, raw, WHAT)
        except InstallError as exc:
            out.append(WiringCheck(name, Level.FAIL, str(exc), AGENT, scope, path))
            continue
        extra = sorted(set(data) - {"hooks", "description"})
        if extra:
            out.append(WiringCheck(name, Level.FAIL, f"{path} has top-level keys Codex rejects ({', '.join(extra)}): "
                                   "it skips the whole file", AGENT, scope, path))
        found = jsonhooks.rose_handlers(data, AGENT)
        if not found:
            continue
        wired.append(str(path))
        out += _scope_checks(name, scope, path, data, found, state, parsed, cwd, config, env)
    registered: list[tuple[str, Path, Any, bool, str | None]] = []
    for scope in scopes:
        mcp_file = mcp_config_path(scope, cwd, home, env)
        entry, managed, problem = mcpservers.toml_entry(mcp_file)
        registered.append((scope.value, mcp_file, entry, managed, None if scope is InstallScope.USER else problem))
    out += mcpservers.checks(AGENT.value, registered, env.get("PATH"))
    if not wired:
        level = Level.WARN if cli_found else Level.INFO
        out.append(WiringCheck("codex hooks", level, "not wired: `rose install --agent codex` (this project) or "
                               "`rose install --agent codex --scope user` (every repository)", AGENT))
    elif len(wired) > 1:
        out.append(WiringCheck("codex hooks", Level.WARN, "wired more than once (" + "; ".join(wired) + "): each "
                               "event runs rose once per place; keep one", AGENT))
    return out


def _scope_checks(name: str, scope: InstallScope, path: Path, data: dict[str, Any], found: list[jsonhooks.Found],
                  state: Any, parsed: dict[str, Any], cwd: Path, config: Path,
                  env: Mapping[str, str]) -> list[WiringCheck]:
    out = []
    events = {f.hook.event for f in found}
    missing = [e for e in EVENTS if e not in events]
    problems = []
    programs = sorted({command_executable(str(f.handler.get("command"))) or "" for f in found})
    broken = [p for p in programs if not executable_resolves(p, env.get("PATH"))]
    if broken:
        problems.append(f"the hook command's program {', '.join(broken)} no longer exists: run `rose install` again")
    untrusted, modified, disabled = [], [], []
    for f in found:
        group = data["hooks"][f.event][f.group]
        status = f.handler.get("statusMessage")
        digest = hook_hash(f.event, str(f.handler.get("command")), f.handler.get("timeout"),
                           group.get("matcher") if isinstance(group.get("matcher"), str) else None,
                           status if isinstance(status, str) else None)
        dug = [toml.dig(state, trust_key(file, f.event, f.group, f.index)) if isinstance(state, dict) else None
               for file in key_files(path)]
        entries = [e for e in dug if isinstance(e, dict)]
        if any(e.get("enabled") is False for e in entries):
            disabled.append(f.event)
        elif any(e.get("trusted_hash") == digest for e in entries):
            continue
        elif entries:
            modified.append(f.event)
        else:
            untrusted.append(f.event)
    if untrusted:
        problems.append(f"{', '.join(untrusted)} not trusted in {config}, so Codex skips them silently: run "
                        "`rose install --agent codex` again, or trust them in Codex (/hooks)")
    if modified:
        problems.append(f"{', '.join(modified)} changed since they were trusted, so Codex skips them: run "
                        "`rose install --agent codex` again")
    if disabled:
        problems.append(f"{', '.join(disabled)} disabled in Codex (enabled = false in {config})")
    if scope is InstallScope.PROJECT:
        level = project_trust(parsed, cwd)
        if level != "trusted":
            what = "marked untrusted" if level else "not trusted"
            problems.append(f"this project is {what} in Codex, so it does not load {path.parent}/: "
                            + _trust_project_step(cwd, config).split(": ", 1)[1])
    if problems:
        out.append(WiringCheck(name, Level.FAIL, f"{path}: " + "; ".join(problems), AGENT, scope, path))
    if missing:
        out.append(WiringCheck(name, Level.WARN, f"{path}: {', '.join(sorted(events))} wired, {', '.join(missing)} "
                               "missing: run `rose install --agent codex` again", AGENT, scope, path))
    if not problems and not missing:
        out.append(WiringCheck(name, Level.OK, f"{', '.join(EVENTS)} in {path}, trusted", AGENT, scope, path))
    return out
