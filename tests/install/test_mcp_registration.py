"""rose install registers rose's MCP server (`<rose> mcp`) for both agents and both scopes; uninstall removes exactly it.

The files are the ones `claude mcp add --scope user|project` and `codex mcp add` write. Round trips are checked byte
for byte on files that already hold the user's own servers and settings, and a server named `rose` that the user
wrote is never touched.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose.install import Agent, Scope, install, uninstall
from rose.install.mcpservers import MANAGED_ENV, plan_json_install

from .conftest import FAKE_ROSE, diff, parse_toml, snapshot

CLAUDE_STATE = {"numStartups": 7, "theme": "dark", "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp",
                                                                             "args": [], "env": {"TOKEN": "x"}}},
                "projects": {"/work/app": {"allowedTools": []}}, "tipsHistory": {"a": 1}}


def _mcp_file(agent: Agent, scope: Scope, home: Path, project: Path) -> Path:
    if agent is Agent.CLAUDE:
        return home / ".claude.json" if scope is Scope.USER else project / ".mcp.json"
    return home / ".codex" / "config.toml" if scope is Scope.USER else project / ".codex" / "config.toml"


def _entry(agent: Agent, path: Path):
    if agent is Agent.CLAUDE:
        return json.loads(path.read_text())["mcpServers"]["rose"]
    return parse_toml(path.read_text())["mcp_servers"]["rose"]


@pytest.mark.parametrize("scope", list(Scope))
@pytest.mark.parametrize("agent", list(Agent))
def test_install_registers_rose_mcp_with_roses_own_absolute_command(agent: Agent, scope: Scope, home: Path,
                                                                    project: Path, env: dict) -> None:
    report = install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    path = _mcp_file(agent, scope, home, project)
    entry = _entry(agent, path)
    assert entry["command"] == FAKE_ROSE[0] and entry["args"] == ["mcp"]
    if agent is Agent.CLAUDE:
        assert entry["type"] == "stdio" and entry["env"] == {MANAGED_ENV: "rose install"}
    else:
        assert "# rose-managed: rose's MCP server" in path.read_text()
    assert any(c.path == path for c in report.changes)
    # twice changes nothing
    again = install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    assert not again.changed, again.render()


@pytest.mark.parametrize("scope", list(Scope))
@pytest.mark.parametrize("agent", list(Agent))
def test_round_trip_over_the_users_own_servers_is_byte_for_byte(agent: Agent, scope: Scope, home: Path,
                                                                 project: Path, env: dict) -> None:
    path = _mcp_file(agent, scope, home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    if agent is Agent.CLAUDE:
        path.write_text(json.dumps(CLAUDE_STATE, indent=2))   # Claude Code writes it so: no trailing newline
        os.chmod(path, 0o600)
    else:
        path.write_text('# mine\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--port", "0"]\n')
    before = snapshot(home, project)
    install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    assert _entry(agent, path)["args"] == ["mcp"]
    if agent is Agent.CLAUDE:
        data = json.loads(path.read_text())
        assert data["mcpServers"]["github"] == CLAUDE_STATE["mcpServers"]["github"] and data["numStartups"] == 7
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    else:
        assert parse_toml(path.read_text())["mcp_servers"]["docs"]["command"] == "docs-mcp"
    uninstall(agent, scope, project, home, env=env)
    assert diff(before, snapshot(home, project)) == ""


@pytest.mark.parametrize("agent", list(Agent))
def test_a_server_named_rose_that_the_user_wrote_is_left_alone(agent: Agent, home: Path, project: Path,
                                                               env: dict) -> None:
    path = _mcp_file(agent, Scope.USER, home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    if agent is Agent.CLAUDE:
        path.write_text(json.dumps({"mcpServers": {"rose": {"command": "my-rose", "args": ["mcp"]}}}, indent=2))
    else:
        path.write_text('[mcp_servers.rose]\ncommand = "my-rose"\nargs = ["mcp"]\n')
    report = install(agent, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert _entry(agent, path)["command"] == "my-rose"
    assert any("did not write" in note for note in report.notes), report.render()
    uninstall(agent, Scope.USER, project, home, env=env)
    assert _entry(agent, path)["command"] == "my-rose"


@pytest.mark.parametrize("agent", list(Agent))
def test_no_mcp_wires_the_hooks_only(agent: Agent, home: Path, project: Path, env: dict) -> None:
    install(agent, Scope.PROJECT, project, home, rose=FAKE_ROSE, env=env, mcp=False)
    assert not _mcp_file(agent, Scope.PROJECT, home, project).exists()


def test_moving_rose_updates_its_entry_in_place(home: Path, project: Path, env: dict) -> None:
    install(Agent.CLAUDE, Scope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    install(Agent.CLAUDE, Scope.PROJECT, project, home, rose=["/elsewhere/python", "-m", "rose"], env=env)
    entry = _entry(Agent.CLAUDE, project / ".mcp.json")
    assert entry["command"] == "/elsewhere/python" and entry["args"] == ["-m", "rose", "mcp"]


def test_claude_config_dir_moves_the_user_file(home: Path, project: Path, tmp_path: Path) -> None:
    custom = tmp_path / "claude-config"
    install(Agent.CLAUDE, Scope.USER, project, home, rose=FAKE_ROSE, env={"PATH": "/nonexistent",
                                                                         "CLAUDE_CONFIG_DIR": str(custom)})
    assert _entry(Agent.CLAUDE, custom / ".claude.json")["command"] == FAKE_ROSE[0]
    assert not (home / ".claude.json").exists()


def test_a_malformed_file_is_an_error_and_nothing_is_written(home: Path, project: Path, env: dict) -> None:
    from rose.install import InstallError

    (project / ".mcp.json").write_text('{"mcpServers": [1, 2]}')
    with pytest.raises(InstallError, match="mcpServers"):
        install(Agent.CLAUDE, Scope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    assert not (project / ".claude").exists()
    edit, _notes = plan_json_install(project / "other.json", FAKE_ROSE, "")
    assert edit.before is None and json.loads(edit.after)["mcpServers"]["rose"]["args"] == ["mcp"]


def test_without_the_sdk_the_default_rose_is_not_registered_and_the_report_says_why(home: Path, project: Path,
                                                                                    env: dict, monkeypatch) -> None:
    import rose.install as wiring

    monkeypatch.setattr(wiring, "sdk_available", lambda: False)
    report = install(Agent.CLAUDE, Scope.PROJECT, project, home, env=env)
    assert not (project / ".mcp.json").exists()
    assert any("MCP SDK is not installed" in note for note in report.notes)
    monkeypatch.setattr(wiring, "sdk_available", lambda: True)
    install(Agent.CLAUDE, Scope.PROJECT, project, home, env=env)
    assert _entry(Agent.CLAUDE, project / ".mcp.json")["args"][-1] == "mcp"


@pytest.mark.parametrize("agent", list(Agent))
def test_doctor_names_where_rose_mcp_is_registered_and_a_command_that_moved(agent: Agent, home: Path,
                                                                            project: Path, tmp_path: Path) -> None:
    from rose.install import wiring_checks

    rose = tmp_path / "bin" / "rose"
    rose.parent.mkdir()
    rose.write_text("#!/bin/sh\n")
    rose.chmod(0o755)
    install(agent, Scope.USER, project, home, rose=[str(rose)], env={"PATH": "/nonexistent"})
    checks = {c.name: c for c in wiring_checks(project, home, env={"PATH": "/nonexistent"})}
    mine = checks[f"{agent.value} mcp (user)"]
    assert mine.level.value == "ok" and f"{rose} mcp" in mine.detail
    rose.unlink()
    checks = {c.name: c for c in wiring_checks(project, home, env={"PATH": "/nonexistent"})}
    assert checks[f"{agent.value} mcp (user)"].level.value == "fail"
