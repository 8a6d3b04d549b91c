"""`wiring_checks`: what is wired where, whether the command still resolves, whether the hooks would fire."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from rose.install import Agent, Level, InstallScope, install, wiring_checks
from rose.install.command import MARKER


@pytest.fixture
def rose_exe(tmp_path: Path) -> list[str]:
    """A real executable standing in for the rose console script (in a folder with a space)."""
    exe = tmp_path / "rose bin" / "rose"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return [str(exe)]


def _by_name(checks) -> dict:
    out: dict = {}
    for check in checks:
        out.setdefault(check.name, []).append(check)
    return out


def _levels(checks, name: str) -> list[Level]:
    return [c.level for c in _by_name(checks).get(name, [])]


def test_nothing_wired_is_info_without_the_cli_and_a_warning_with_it(home: Path, project: Path, tmp_path: Path,
                                                                     env: dict) -> None:
    checks = wiring_checks(project, home, env=env)
    assert _levels(checks, "claude hooks") == [Level.INFO]
    assert _levels(checks, "codex hooks") == [Level.INFO]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("claude", "codex"):
        (bindir / name).write_text("#!/bin/sh\n")
        (bindir / name).chmod(0o755)
    checks = wiring_checks(project, home, env={"PATH": str(bindir)})
    assert _levels(checks, "claude hooks") == [Level.WARN]
    assert "rose install" in _by_name(checks)["claude hooks"][0].detail


def test_installed_hooks_are_ok_per_agent_and_scope(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=rose_exe, env=env)
    install(Agent.CODEX, InstallScope.USER, project, home, rose=rose_exe, env=env)
    checks = wiring_checks(project, home, env=env)
    assert _levels(checks, "claude hooks (project)") == [Level.OK]
    assert str(project / ".claude" / "settings.json") in _by_name(checks)["claude hooks (project)"][0].detail
    assert _levels(checks, "codex hooks (user)") == [Level.OK]
    assert "claude hooks" not in _by_name(checks) and "codex hooks" not in _by_name(checks)
    assert all(c.level is not Level.FAIL for c in checks)


def test_a_command_that_no_longer_resolves_fails(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    install(Agent.CLAUDE, InstallScope.USER, project, home, rose=rose_exe, env=env)
    os.unlink(rose_exe[0])
    check = _by_name(wiring_checks(project, home, env=env))["claude hooks (user)"][0]
    assert check.level is Level.FAIL and "no longer exists" in check.detail and rose_exe[0] in check.detail


def test_invalid_settings_json_fails_because_claude_ignores_it(home: Path, project: Path, env: dict) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {}\n')
    check = _by_name(wiring_checks(project, home, env=env))["claude hooks (project)"][0]
    assert check.level is Level.FAIL and "not valid JSON" in check.detail


def test_partial_and_double_wiring_warn(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=rose_exe, env=env)
    install(Agent.CLAUDE, InstallScope.USER, project, home, rose=rose_exe, env=env)
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    del data["hooks"]["Stop"]
    path.write_text(json.dumps(data))
    checks = wiring_checks(project, home, env=env)
    partial = _by_name(checks)["claude hooks (project)"][0]
    assert partial.level is Level.WARN and "Stop missing" in partial.detail
    assert _levels(checks, "claude hooks") == [Level.WARN]
    assert "more than once" in _by_name(checks)["claude hooks"][0].detail


def test_disable_all_hooks_warns(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    install(Agent.CLAUDE, InstallScope.USER, project, home, rose=rose_exe, env=env)
    path = home / ".claude" / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "disableAllHooks": True}))
    assert Level.WARN in _levels(wiring_checks(project, home, env=env), "claude hooks (user)")


def test_plugin_is_seen_and_needs_rose_on_path(home: Path, project: Path, rose_exe: list) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enabledPlugins": {"rose@rose": True}}))
    without = _by_name(wiring_checks(project, home, env={"PATH": "/nonexistent"}))["claude plugin"][0]
    assert without.level is Level.FAIL and "finds no rose" in without.detail
    assert "python3 dev.py install" in without.detail and "rose-memory" not in without.detail
    with_rose = wiring_checks(project, home, env={"PATH": str(Path(rose_exe[0]).parent)})
    assert _levels(with_rose, "claude plugin") == [Level.OK]
    # not on PATH, but where `python3 dev.py install` links it: the plugin's hooks/rose runs that one
    link = home / ".local" / "bin" / "rose"
    link.parent.mkdir(parents=True)
    link.symlink_to(rose_exe[0])
    found = _by_name(wiring_checks(project, home, env={"PATH": "/nonexistent"}))["claude plugin"][0]
    assert found.level is Level.OK and str(link) in found.detail
    link.unlink()
    install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=rose_exe, env={})
    assert "more than once" in _by_name(wiring_checks(project, home, env={}))["claude hooks"][0].detail


def test_codex_trust_missing_or_modified_fails(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    install(Agent.CODEX, InstallScope.USER, project, home, rose=rose_exe, env=env)
    hooks = home / ".codex" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["command"] = f"{rose_exe[0]} hook codex Stop --verbose {MARKER}"
    hooks.write_text(json.dumps(data))
    check = _by_name(wiring_checks(project, home, env=env))["codex hooks (user)"][0]
    assert check.level is Level.FAIL and "Stop changed since they were trusted" in check.detail

    config = home / ".codex" / "config.toml"
    config.unlink()
    check = _by_name(wiring_checks(project, home, env=env))["codex hooks (user)"][0]
    assert check.level is Level.FAIL and "not trusted" in check.detail and "skips them silently" in check.detail


def test_codex_project_must_be_trusted(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    report = install(Agent.CODEX, InstallScope.PROJECT, project, home, rose=rose_exe, env=env)
    assert any("trust_level" in step for step in report.steps)
    check = _by_name(wiring_checks(project, home, env=env))["codex hooks (project)"][0]
    assert check.level is Level.FAIL and "not trusted in Codex" in check.detail
    config = home / ".codex" / "config.toml"
    config.write_text(config.read_text() + f'\n[projects."{os.path.realpath(project)}"]\ntrust_level = "trusted"\n')
    assert _levels(wiring_checks(project, home, env=env), "codex hooks (project)") == [Level.OK]
    assert not install(Agent.CODEX, InstallScope.PROJECT, project, home, rose=rose_exe, env=env).steps


def test_codex_project_trusted_through_its_git_root(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    (project / ".git").mkdir()
    sub = project / "pkg"
    sub.mkdir()
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[projects."{os.path.realpath(project)}"]\ntrust_level = "trusted"\n')
    report = install(Agent.CODEX, InstallScope.PROJECT, sub, home, rose=rose_exe, env=env)
    assert not report.steps
    assert any(f"run rose install in {os.path.realpath(project)}" in note for note in report.notes)


def test_codex_hooks_switched_off_fails(home: Path, project: Path, rose_exe: list, env: dict) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[features]\nhooks = false\n")
    report = install(Agent.CODEX, InstallScope.USER, project, home, rose=rose_exe, env=env)
    assert any("hooks = false" in step for step in report.steps)
    assert Level.FAIL in _levels(wiring_checks(project, home, env=env), "codex hooks")


def test_codex_hooks_file_with_keys_codex_rejects(home: Path, project: Path, env: dict) -> None:
    path = home / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {}, "version": 1}')
    check = _by_name(wiring_checks(project, home, env=env))["codex hooks (user)"][0]
    assert check.level is Level.FAIL and "version" in check.detail


def test_checks_serialise(home: Path, project: Path, env: dict) -> None:
    for check in wiring_checks(project, home, env=env):
        assert set(check.to_dict()) == {"name", "level", "detail", "agent", "scope", "path"}
        json.dumps(check.to_dict())
