"""rose's MCP server (`rose mcp`) in each agent's configuration: the entry `rose install` adds beside the hooks.

    Claude Code  --scope user     $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json: ``mcpServers.rose``
                 --scope project  <project>/.mcp.json: ``mcpServers.rose`` (Claude Code asks once before it starts a
                                  server from a project's .mcp.json; rose does not pre-approve it, see below)
    Codex        --scope user     $CODEX_HOME/config.toml, else ~/.codex/config.toml: ``[mcp_servers.rose]``
                 --scope project  <project>/.codex/config.toml (Codex loads it only in a trusted project)

These are the files `claude mcp add --scope user|project` and `codex mcp add` write (checked with claude-code
2.1.332 and codex 0.171.0). The entry names rose's own absolute command, as the hooks do (rose.install.command):
nothing inside a repository chooses the program. rose's JSON entry carries ``env.ROSE_MANAGED`` and its TOML table
the ``# rose-managed:`` comment, so uninstall removes exactly rose's entry and never a server named ``rose`` that
the user wrote themselves (that one is left alone, with a note). rose does not add ``rose`` to Claude Code's
``enabledMcpjsonServers``: that approval goes by name, so a later change to the project's .mcp.json would then run
whatever the repository put under that name without asking.

JSON files are edited like the hooks' settings (rose.install.jsonhooks): parsed strictly, written back in the file's
own style, a backup of the user's own file kept until an exact restore.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rose.text import load_json
from rose import envvars
from rose.install import toml
from rose.install.files import FileEdit, backup_path, decode, read_bytes
from rose.install.jsonhooks import JsonStyle, parse_object
from rose.install.model import InstallError

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (~7 ms of `rose doctor`)
    from typing import Any

SERVER = "rose"
MANAGED_ENV = envvars.MANAGED
MANAGED_VALUE = "rose install"
SUBCOMMAND = "mcp"
TOML_HEADER = f"mcp_servers.{SERVER}"
TOML_COMMENT = "rose's MCP server (rose uninstall removes this)"


def server_argv(argv: Sequence[str]) -> list[str]:
    """The whole command line of the server: rose's own command, then ``mcp``."""
    return [*argv, SUBCOMMAND]


def claude_entry(argv: Sequence[str]) -> dict[str, Any]:
    full = server_argv(argv)
    return {"type": "stdio", "command": full[0], "args": full[1:], "env": {MANAGED_ENV: MANAGED_VALUE}}


def is_managed(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("env"), dict) and \
        entry["env"].get(MANAGED_ENV) == MANAGED_VALUE


def entry_command(entry: Any) -> list[str]:
    """A JSON entry's command line (command, then args), [] when it has none."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return []
    args = given if isinstance(given := entry.get("args"), list) else []
    return [entry["command"], *[str(a) for a in args]]


# -- JSON (Claude Code) ----------------------------------------------------------------------------------------------
def parse_json(path: Path, raw: bytes | None, what: str) -> tuple[dict[str, Any], JsonStyle]:
    data, style = parse_object(path, raw, what)
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise InstallError(f'{path}: "mcpServers" is a {type(servers).__name__}, expected an object; rose left it '
                           "untouched")
    return data, style


def plan_json_install(path: Path, argv: Sequence[str], what: str) -> tuple[FileEdit, list[str]]:
    """The edit that puts rose's entry in ``path`` (updated in place when it is rose's already), and notes."""
    raw = read_bytes(path)
    data, style = parse_json(path, raw, what)
    servers = data.get("mcpServers") or {}
    current = servers.get(SERVER)
    wanted = claude_entry(argv)
    if current is not None and not is_managed(current):
        return FileEdit(path, raw, raw, "left the user's own MCP server named rose as it is"), [
            f"{path} already has an MCP server named {SERVER} that rose install did not write; rose left it as it is"]
    if current == wanted:
        return FileEdit(path, raw, raw, "rose's MCP server already registered"), []
    after = load_json(json.dumps(data))  # deep copy: the file as read stays as read
    after.setdefault("mcpServers", {})[SERVER] = wanted
    detail = "updated rose's MCP server" if current is not None else "registered rose's MCP server"
    return FileEdit(path, raw, style.render(after), detail, keep_backup=current is None), []


def plan_json_uninstall(path: Path, what: str) -> FileEdit:
    raw = read_bytes(path)
    if raw is None:
        return FileEdit(path, None, None, "no rose MCP server")
    data, style = parse_json(path, raw, what)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not is_managed(servers.get(SERVER)):
        return FileEdit(path, raw, raw, "no rose MCP server")
    remaining = load_json(json.dumps(data))
    del remaining["mcpServers"][SERVER]
    if not remaining["mcpServers"]:
        del remaining["mcpServers"]
    detail = "removed rose's MCP server"
    rendered = style.render(remaining)
    backup = read_bytes(backup_path(path))
    if backup is not None and _same_json(rendered, backup):
        return FileEdit(path, raw, backup, detail + "; put the pre-install file back", drop_backup=True)
    if backup is None and not remaining:
        return FileEdit(path, raw, None, detail + "; rose had created the file")
    return FileEdit(path, raw, rendered, detail)


def _same_json(a: bytes, b: bytes) -> bool:
    try:
        return load_json(a.decode("utf-8-sig") or "{}") == load_json(b.decode("utf-8-sig") or "{}")
    except (ValueError, UnicodeDecodeError):
        return False


def json_entry(path: Path) -> tuple[Any, str | None]:
    """(rose's entry in ``path`` or None, why it cannot be read) for `rose doctor`."""
    try:
        data, _style = parse_json(path, read_bytes(path), "")
    except InstallError as exc:
        return None, str(exc)
    servers = data.get("mcpServers")
    return (servers.get(SERVER) if isinstance(servers, dict) else None), None


# -- TOML (Codex) ----------------------------------------------------------------------------------------------------
def toml_values(argv: Sequence[str]) -> dict[str, str | list[str]]:
    full = server_argv(argv)
    return {"command": full[0], "args": full[1:]}


def is_mcp_header(header: str) -> bool:
    try:
        return toml.header_key(header) == ["mcp_servers", SERVER]
    except toml.TomlError:
        return False


def with_toml_server(path: Path, text: str, argv: Sequence[str]) -> tuple[str, str, list[str]]:
    """``text`` (config.toml as it will be) with rose's marked ``[mcp_servers.rose]`` table, a detail and notes.
    A table of that name the user wrote is left alone; rose's own is replaced only when it differs."""
    try:
        parsed = toml.loads(text)
    except toml.TomlError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); rose left it untouched (Codex cannot start with it "
                           "either: fix it, then run the command again)") from None
    mine = any(is_mcp_header(h) for h in toml.marked_headers(text))
    current = toml.dig(parsed, "mcp_servers", SERVER)
    values = toml_values(argv)
    if current is not None and not mine:
        return text, "left the user's own MCP server named rose as it is", [
            f"{path} already has [mcp_servers.{SERVER}] that rose install did not write; rose left it as it is"]
    if mine and isinstance(current, dict) and {k: current.get(k) for k in values} == values and \
            set(current) == set(values):
        return text, "rose's MCP server already registered", []
    base, _removed = toml.remove_marked_tables(text, is_mcp_header)
    servers = toml.dig(toml.loads(base), "mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        return text, "left untouched", [f"{path} defines mcp_servers in a form rose does not edit (an inline "
                                        "table?); register rose yourself: `codex mcp add rose -- "
                                        + " ".join(server_argv(argv)) + "`"]
    after = toml.append_tables(base, [(TOML_COMMENT, TOML_HEADER, values)])
    check = toml.dig(toml.loads(after), "mcp_servers", SERVER)
    if not isinstance(check, dict) or check.get("command") != values["command"]:
        return text, "left untouched", [f"rose could not add its MCP server to {path} safely; register it "
                                        "yourself: `codex mcp add rose -- " + " ".join(server_argv(argv)) + "`"]
    return after, ("updated rose's MCP server" if mine else "registered rose's MCP server"), []


def without_toml_server(text: str) -> tuple[str, int]:
    return toml.remove_marked_tables(text, is_mcp_header)


def plan_toml_install(path: Path, argv: Sequence[str]) -> tuple[FileEdit, list[str]]:
    """A config.toml of its own (a project's .codex/config.toml) with rose's MCP server."""
    raw = read_bytes(path)
    text = decode(path, raw) if raw is not None else ""
    after, detail, notes = with_toml_server(path, text, argv)
    if after == text:
        return FileEdit(path, raw, raw, detail), notes
    pristine = raw is not None and not toml.marked_headers(text)
    return FileEdit(path, raw, after.encode("utf-8"), detail, keep_backup=pristine), notes


def plan_toml_uninstall(path: Path) -> FileEdit:
    raw = read_bytes(path)
    if raw is None:
        return FileEdit(path, None, None, "no rose MCP server")
    text = decode(path, raw)
    after, removed = without_toml_server(text)
    if not removed:
        return FileEdit(path, raw, raw, "no rose MCP server")
    detail = "removed rose's MCP server"
    backup = read_bytes(backup_path(path))
    if backup is not None and decode(path, backup).rstrip() == after.rstrip():
        return FileEdit(path, raw, backup, detail + "; put the pre-install file back", drop_backup=True)
    if backup is None and not after.strip():
        return FileEdit(path, raw, None, detail + "; rose had created the file",
                        prune_dir=path.parent.name == ".codex")
    return FileEdit(path, raw, after.encode("utf-8"), detail)


def toml_entry(path: Path) -> tuple[Any, bool, str | None]:
    """(the ``[mcp_servers.rose]`` table or None, whether rose wrote it, why the file cannot be read)."""
    raw = read_bytes(path)
    if raw is None:
        return None, False, None
    try:
        text = decode(path, raw)
        parsed = toml.loads(text)
    except (InstallError, toml.TomlError) as exc:
        return None, False, str(exc)
    return (toml.dig(parsed, "mcp_servers", SERVER), any(is_mcp_header(h) for h in toml.marked_headers(text)), None)


def toml_command(entry: Any) -> list[str]:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return []
    args = given if isinstance(given := entry.get("args"), list) else []
    return [entry["command"], *[str(a) for a in args]]



# -- doctor ----------------------------------------------------------------------------------------------------------
def checks(agent_name: str, found: list[tuple[str, Path, Any, bool, str | None]], path_env: str | None) -> list[Any]:
    """`rose doctor` lines about rose's MCP server: one per (scope, file) where an entry named rose is, each
    ``(scope, path, entry, rose wrote it, why unreadable)``."""
    from rose.install.command import executable_resolves
    from rose.install.model import Agent, Level, InstallScope, WiringCheck

    agent = Agent(agent_name)
    out = []
    for scope, path, entry, managed, problem in found:
        name = f"{agent_name} mcp ({scope})"
        if problem:
            out.append(WiringCheck(name, Level.FAIL, problem, agent, InstallScope(scope), path))
            continue
        if entry is None:
            continue
        argv = entry_command(entry) if agent is Agent.CLAUDE else toml_command(entry)
        if not argv:
            out.append(WiringCheck(name, Level.WARN, f"{path}: the MCP server named rose has no command",
                                   agent, InstallScope(scope), path))
        elif not executable_resolves(argv[0], path_env):
            out.append(WiringCheck(name, Level.FAIL, f"{path}: rose's MCP server runs {argv[0]}, which no longer "
                                   "exists: run `rose install` again", agent, InstallScope(scope), path))
        else:
            who = "" if managed else " (not written by rose install)"
            out.append(WiringCheck(name, Level.OK, f"`{' '.join(argv)}` in {path}{who}", agent, InstallScope(scope), path))
    return out
