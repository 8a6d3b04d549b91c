"""A project-scope install backs up the repository's own agent settings beside them: that backup is named in the
clone's own ignore list (.git/info/exclude, never committed), so `git add -A` does not commit it, and the line goes
with the backup on uninstall."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rose.install import Agent, InstallScope, install, uninstall

from .conftest import FAKE_ROSE


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("agent, settings", [(Agent.CLAUDE, ".claude/settings.json"),
                                             (Agent.CODEX, ".codex/config.toml")])
def test_the_backup_of_a_committed_settings_file_is_never_committed(home: Path, project: Path, env: dict,
                                                                     agent: Agent, settings: str) -> None:
    _git(project, "init", "-q")
    mine = project / settings
    mine.parent.mkdir(parents=True)
    mine.write_text('{"permissions": {"allow": ["Bash(make)"]}}\n' if agent is Agent.CLAUDE else 'model = "o3"\n')
    exclude = project / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    install(agent, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    backup = mine.with_name(mine.name + ".rose-backup")
    assert backup.is_file()
    assert _git(project, "check-ignore", str(backup.relative_to(project))).strip()
    assert backup.name not in _git(project, "status", "--porcelain", "--untracked-files=all")
    uninstall(agent, InstallScope.PROJECT, project, home, env=env)
    assert not backup.exists()
    assert exclude.read_bytes() == before   # the clone's ignore list is as it was
