"""install -> install -> uninstall, for both agents and both scopes, on the kinds of files users really have.

After the round trip every file, folder, permission and symlink under HOME and the project must be exactly as
before: files rose created are gone again (with the folders it created for them), files it changed are back byte
for byte, backups are gone.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rose.install import FileAction, Agent, InstallScope, install, uninstall
from rose.install.codex import hook_hash, trust_key
from rose.install.command import MARKER, hook_command
from rose.install.hooks import HOOKS
from rose.install.jsonhooks import rose_handlers

from .conftest import FAKE_ROSE, diff, parse_toml, snapshot

OTHER_HOOKS = {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/lint-prompt.sh", "timeout": 7}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard \"$1\" # mine"}]}],
}


def hooks_file(agent: Agent, scope: InstallScope, home: Path, project: Path) -> Path:
    base = home if scope is InstallScope.USER else project
    return base / (".claude/settings.json" if agent is Agent.CLAUDE else ".codex/hooks.json")


def _write(path: Path, data: bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)


def _settings(agent: Agent) -> dict:
    if agent is Agent.CODEX:
        return {"hooks": OTHER_HOOKS}
    return {"model": "opus", "permissions": {"allow": ["Bash(git status)"]}, "hooks": OTHER_HOOKS,
            "env": {"GREETING": "héllo ☃"}}


# Each variant lays out the user's files before rose is installed. ------------------------------------------------
Variant = Callable[[Agent, InstallScope, Path, Path], None]


def nothing(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    pass


def empty_agent_folder(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    folder = hooks_file(agent, scope, home, project).parent
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("my notes\n")


def two_space_indent(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    _write(hooks_file(agent, scope, home, project), (json.dumps(_settings(agent), indent=2) + "\n").encode())


def four_spaces_no_newline_unicode(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    text = json.dumps(_settings(agent), indent=4, ensure_ascii=False)
    _write(hooks_file(agent, scope, home, project), text.encode(), mode=0o600)


def tabs_crlf_escaped(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    text = json.dumps(_settings(agent), indent="\t", ensure_ascii=True).replace("\n", "\r\n") + "\r\n"
    _write(hooks_file(agent, scope, home, project), text.encode())


def one_line(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    _write(hooks_file(agent, scope, home, project), json.dumps(_settings(agent), separators=(",", ":")).encode())


def odd_layout(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    text = '{ "hooks" :{"Stop":[ ]} ,\n      "x": 1.50, "y": 1e3,  "z":[1,2 ,3]}\n\n'
    _write(hooks_file(agent, scope, home, project), text.encode())


def empty_object(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    _write(hooks_file(agent, scope, home, project), b"{}")


def empty_file(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    _write(hooks_file(agent, scope, home, project), b"")


def symlinked(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    # the user's file into their dotfiles; a project's to a shared folder inside it (one leading out of the project
    # is refused: tests/trust/test_agent_settings_files_never_hang_rose.py)
    base = home / "dotfiles" if scope is InstallScope.USER else project / "config"
    target = base / f"{agent.value}-{scope.value}.json"
    _write(target, (json.dumps(_settings(agent), indent=2) + "\n").encode())
    link = hooks_file(agent, scope, home, project)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def codex_config(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    """A lived-in config.toml (comments, tables, another hook's trust, no trailing newline) and AGENTS.md files."""
    two_space_indent(agent, scope, home, project)
    _write(home / ".codex" / "config.toml", (
        b'# my codex config\nmodel = "gpt-5"  # the default\n\n[projects."/somewhere/else"]\ntrust_level = "trusted"\n\n'
        b'[hooks.state."/somewhere/else/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n'
        b'[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]'), mode=0o600)
    _write(project / "AGENTS.md", b"# Agents\n\nUse tabs.\n")
    _write(home / ".codex" / "AGENTS.md", b"Be brief.")


def codex_config_empty_files(agent: Agent, scope: InstallScope, home: Path, project: Path) -> None:
    _write(home / ".codex" / "config.toml", b"")
    _write(project / "AGENTS.md", b"")
    _write(home / ".codex" / "AGENTS.md", b"")


VARIANTS = [nothing, empty_agent_folder, two_space_indent, four_spaces_no_newline_unicode, tabs_crlf_escaped,
            one_line, odd_layout, empty_object, empty_file, symlinked]
CASES = [(agent, scope, variant) for agent in Agent for scope in InstallScope for variant in VARIANTS]
CASES += [(Agent.CODEX, scope, v) for scope in InstallScope for v in (codex_config, codex_config_empty_files)]


@pytest.mark.parametrize(("agent", "scope", "variant"), CASES,
                         ids=[f"{a.value}-{s.value}-{v.__name__}" for a, s, v in CASES])
def test_round_trip_is_exact(agent: Agent, scope: InstallScope, variant: Variant, home: Path, project: Path,
                             env: dict) -> None:
    variant(agent, scope, home, project)
    before = snapshot(home, project)
    original = _json_or_empty(hooks_file(agent, scope, home, project))

    first = install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    assert first.changed
    _assert_installed(agent, scope, home, project, original)
    installed = snapshot(home, project)

    again = install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    assert not again.changed, again.render()
    assert all(c.action is FileAction.UNCHANGED for c in again.changes)
    assert snapshot(home, project) == installed

    removed = uninstall(agent, scope, project, home, env=env)
    assert removed.changed
    assert snapshot(home, project) == before, diff(before, snapshot(home, project))

    twice = uninstall(agent, scope, project, home, env=env)
    assert not twice.changed
    assert snapshot(home, project) == before


def _json_or_empty(path: Path) -> dict:
    return json.loads(path.read_text() or "{}") if path.exists() else {}


def _assert_installed(agent: Agent, scope: InstallScope, home: Path, project: Path, original: dict) -> None:
    path = hooks_file(agent, scope, home, project)
    data = json.loads(path.read_text())
    found = [f for f in rose_handlers(data, agent) if f.hook.managed]
    assert {f.event: f.handler for f in found} == {
        spec.event.value: {"type": "command", "command": hook_command(FAKE_ROSE, agent, spec.event.value),
                           "timeout": spec.timeout_s, "statusMessage": spec.status} for spec in HOOKS[agent]}
    for f in found:  # a group of its own, after the user's groups
        assert data["hooks"][f.event][f.group] == {"hooks": [f.handler]}
        assert f.group == len(original.get("hooks", {}).get(f.event, []))
    # everything of the user's is still there
    for key, value in original.items():
        if key != "hooks":
            assert data[key] == value
    for event, groups in original.get("hooks", {}).items():
        assert data["hooks"][event][:len(groups)] == groups
    if agent is Agent.CODEX:
        state = parse_toml((home / ".codex" / "config.toml").read_text())["hooks"]["state"]
        for f in found:
            key = trust_key(str(path), f.event, f.group, f.index)
            assert state[key]["trusted_hash"] == hook_hash(f.event, f.handler["command"], f.handler["timeout"],
                                                           status_message=f.handler.get("statusMessage"))
        agents = home / ".codex" / "AGENTS.md" if scope is InstallScope.USER else project / "AGENTS.md"
        assert "<!-- rose:begin -->" in agents.read_text()


@pytest.mark.parametrize("agent", list(Agent))
def test_both_scopes_installed_then_removed_in_either_order(agent: Agent, home: Path, project: Path,
                                                             env: dict) -> None:
    codex_config(agent, InstallScope.USER, home, project) if agent is Agent.CODEX else two_space_indent(
        agent, InstallScope.USER, home, project)
    before = snapshot(home, project)
    for scope in (InstallScope.PROJECT, InstallScope.USER):
        install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    for scope in (InstallScope.PROJECT, InstallScope.USER):
        uninstall(agent, scope, project, home, env=env)
    assert snapshot(home, project) == before, diff(before, snapshot(home, project))
    for scope in (InstallScope.USER, InstallScope.PROJECT):
        install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    for scope in (InstallScope.PROJECT, InstallScope.USER):
        uninstall(agent, scope, project, home, env=env)
    assert snapshot(home, project) == before, diff(before, snapshot(home, project))


@pytest.mark.parametrize("agent", list(Agent))
def test_backup_is_written_once_and_holds_the_users_file(agent: Agent, home: Path, project: Path,
                                                          env: dict) -> None:
    two_space_indent(agent, InstallScope.PROJECT, home, project)
    path = hooks_file(agent, InstallScope.PROJECT, home, project)
    original = path.read_bytes()
    backup = path.with_name(path.name + ".rose-backup")

    report = install(agent, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    assert backup.read_bytes() == original
    assert report.changes[0].backup == backup
    stamp = backup.stat().st_mtime_ns
    # rose moved: installing again rewrites its commands in place, the backup stays the user's own file
    moved = install(agent, InstallScope.PROJECT, project, home, rose=["/new/place/rose"], env=env)
    assert moved.changed and "updated UserPromptSubmit" in moved.changes[0].detail
    assert backup.read_bytes() == original and backup.stat().st_mtime_ns == stamp
    data = json.loads(path.read_text())
    assert data["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"].startswith("/new/place/rose hook ")

    uninstall(agent, InstallScope.PROJECT, project, home, env=env)
    assert path.read_bytes() == original and not backup.exists()


@pytest.mark.parametrize("agent", list(Agent))
def test_users_later_edits_survive_uninstall_and_the_backup_is_kept(agent: Agent, home: Path, project: Path,
                                                                     env: dict) -> None:
    two_space_indent(agent, InstallScope.PROJECT, home, project)
    path = hooks_file(agent, InstallScope.PROJECT, home, project)
    install(agent, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    data = json.loads(path.read_text())
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say done"}]})
    path.write_text(json.dumps(data, indent=2) + "\n")

    report = uninstall(agent, InstallScope.PROJECT, project, home, env=env)
    left = json.loads(path.read_text())
    assert MARKER not in path.read_text()
    assert left["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "say done"}]}]
    assert left["hooks"]["UserPromptSubmit"] == OTHER_HOOKS["UserPromptSubmit"]
    assert path.with_name(path.name + ".rose-backup").exists()
    assert any("pre-install copy" in note for note in report.notes)


def test_a_hand_wired_rose_hook_is_not_doubled_nor_removed(home: Path, project: Path, env: dict) -> None:
    path = project / ".claude" / "settings.json"
    handler = {"type": "command", "command": "rose hook claude UserPromptSubmit"}
    mine = {"hooks": {"UserPromptSubmit": [{"hooks": [handler]}]}}
    _write(path, json.dumps(mine).encode())
    report = install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    data = json.loads(path.read_text())
    assert data["hooks"]["UserPromptSubmit"] == mine["hooks"]["UserPromptSubmit"]
    assert set(data["hooks"]) == {"UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
    assert any("not written by rose install" in n for n in report.notes)
    uninstall(Agent.CLAUDE, InstallScope.PROJECT, project, home, env=env)
    assert json.loads(path.read_text()) == mine


def test_project_scope_says_plainly_where_the_hooks_went(home: Path, project: Path, env: dict) -> None:
    report = install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    path = project / ".claude" / "settings.json"
    assert report.summary == (f"hooks installed for this project only ({path}); use --scope user for every "
                              "repository")
    assert report.render().startswith(f"claude: {report.summary}")
    assert "'/opt/rose tools/bin/rose' hook claude <Event>" in report.render()
    user = install(Agent.CLAUDE, InstallScope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert user.summary == f"hooks installed for every repository ({home / '.claude' / 'settings.json'})"
    assert any("twice" in n for n in user.notes)


def test_config_dirs_from_the_environment_are_honoured(home: Path, project: Path, tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "CODEX_HOME": str(tmp_path / "cx")}
    install(Agent.CLAUDE, InstallScope.USER, project, home, rose=FAKE_ROSE, env=env)
    install(Agent.CODEX, InstallScope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert (tmp_path / "cc" / "settings.json").exists()
    assert (tmp_path / "cx" / "hooks.json").exists() and (tmp_path / "cx" / "config.toml").exists()
    assert not (home / ".claude").exists() and not (home / ".codex").exists()


def test_dry_run_writes_nothing(home: Path, project: Path, env: dict) -> None:
    before = snapshot(home, project)
    report = install(Agent.CODEX, InstallScope.USER, project, home, rose=FAKE_ROSE, env=env, dry_run=True)
    assert [c.action for c in report.changes] == [FileAction.CREATED] * 3
    assert snapshot(home, project) == before
    # it says what would be created, not that anything was
    text = report.render()
    assert "dry run: nothing written" in text and text.count("would create ") == 3 and "  created " not in text
    assert report.to_dict()["dry_run"] is True
    done = install(Agent.CODEX, InstallScope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert "would" not in done.render() and done.render().count("  created ") == 3
