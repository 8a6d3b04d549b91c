"""rose run in the home folder itself (a new terminal's folder, and `dev.py install`'s): the project's .claude/ and
.codex/ are the user's own ~/.claude and ~/.codex. One set of files is one scope: installed, checked and uninstalled
once, with the Codex trust and MCP entries in ~/.codex/config.toml both kept (planned as two scopes, the second
whole-file write undid the first)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.errors import InstallError
from rose.install import Agent, InstallScope, Level, install, uninstall, wiring_checks
from rose.install.files import FileEdit, apply
from rose.install.jsonhooks import rose_handlers

from .conftest import FAKE_ROSE, diff, parse_toml, snapshot

MINE = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "~/bin/notify.sh"}]}]}}


def _lay_out(home: Path) -> None:
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"model": "opus", **MINE}, indent=2) + "\n")
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "hooks.json").write_text(json.dumps(MINE, indent=2) + "\n")
    (home / ".codex" / "config.toml").write_text('model = "o4"\n\n[projects."/src/app"]\ntrust_level = "trusted"\n')


@pytest.mark.parametrize("scope", [InstallScope.PROJECT, InstallScope.USER])
def test_installed_in_the_home_folder_rose_is_wired_once_at_user_scope_and_every_check_passes(home, env, scope):
    _lay_out(home)
    for agent in (Agent.CLAUDE, Agent.CODEX):
        first = install(agent, scope, cwd=home, home=home, rose=FAKE_ROSE, env=env)
        again = install(agent, scope, cwd=home, home=home, rose=FAKE_ROSE, env=env)
        assert first.scope is again.scope is InstallScope.USER
        assert not any("also wired" in n for n in first.notes + again.notes), again.notes
        if scope is InstallScope.PROJECT:
            assert any("home folder" in n and "--scope user" in n for n in first.notes), first.notes
    config = parse_toml((home / ".codex" / "config.toml").read_text())
    states = json.dumps(config.get("hooks", {}))
    assert states.count("trusted_hash") == 4, "the Codex trust of rose's four hooks must be written"
    assert "rose" in config.get("mcp_servers", {}), "and the MCP server beside it, in the same file"
    assert config["projects"]["/src/app"] == {"trust_level": "trusted"} and config["model"] == "o4"
    claude = json.loads((home / ".claude" / "settings.json").read_text())
    assert len(rose_handlers(claude, Agent.CLAUDE)) == 4 and claude["model"] == "opus"
    checks = wiring_checks(home, home, env=env)   # FAKE_ROSE is no program here: that one problem is expected
    said = [(c.name, c.detail) for c in checks if c.level in (Level.FAIL, Level.WARN)]
    assert not [c for c in checks if c.scope is InstallScope.PROJECT and "hooks" in c.name], said
    for word in ("more than once", "not trusted", "missing", "changed since"):
        assert not any(word in detail for _name, detail in said), said
    assert {name for name, _detail in said} <= {f"{a} {w} (user)" for a in ("claude", "codex") for w in ("hooks", "mcp")}, said


def test_uninstalled_in_the_home_folder_at_either_scope_everything_is_as_before(home, env):
    _lay_out(home)
    before = snapshot(home)
    for agent in (Agent.CLAUDE, Agent.CODEX):
        install(agent, InstallScope.USER, cwd=home, home=home, rose=FAKE_ROSE, env=env)
    for agent in (Agent.CLAUDE, Agent.CODEX):   # what rose's own note used to advise there
        report = uninstall(agent, InstallScope.PROJECT, cwd=home, home=home, env=env)
        assert report.scope is InstallScope.USER
    assert diff(before, snapshot(home)) == ""


def test_a_project_elsewhere_keeps_its_own_scope(home, env, tmp_path):
    project = tmp_path / "app"
    project.mkdir()
    report = install(Agent.CODEX, InstallScope.PROJECT, cwd=project, home=home, rose=FAKE_ROSE, env=env)
    assert report.scope is InstallScope.PROJECT
    assert (project / ".codex" / "hooks.json").exists()


def test_two_edits_of_one_file_are_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b"a = 1\n")
    link = tmp_path / "link.toml"
    link.symlink_to(path)
    edits = [FileEdit(path, b"a = 1\n", b"a = 2\n"), FileEdit(link, b"a = 1\n", b"a = 3\n")]
    with pytest.raises(InstallError, match="two edits"):
        apply(edits)
    assert path.read_bytes() == b"a = 1\n"
