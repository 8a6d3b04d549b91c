"""`rose doctor` and `rose install` read the agents' settings files of the folder they run in: the repository's
`.claude/settings.json`, `.claude/settings.local.json`, `.mcp.json`, `.codex/hooks.json`, AGENTS.md. git commits
symlinks: one to /dev/zero read until memory ran out, one to a FIFO (or /dev/stdin) waited for a writer for ever.
Such a file is refused before a byte is read, named on its line, and every other check still runs. A link to a
regular file (a dotfiles checkout) is still followed, as before."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

MEMORY_BOUND = 2 << 30   # the child's address space: a read of /dev/zero ends in a MemoryError, not in the machine's swap


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND, MEMORY_BOUND))


def _doctor(project: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "rose", "doctor"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, preexec_fn=_bounded)


def test_settings_files_linked_to_a_device_or_a_fifo_are_refused_unread(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").symlink_to("/dev/zero")
    fifo = tmp_path / "nobody-writes-here"
    os.mkfifo(fifo)
    (project / ".claude" / "settings.json").symlink_to(fifo)
    (project / ".mcp.json").symlink_to("/dev/zero")
    done = _doctor(project)                                  # bounded by the timeout: a hang fails the test
    out = done.stdout
    assert "could not check" not in out, out                 # no MemoryError swallowed into an empty line
    for name in ("settings.local.json", "settings.json", ".mcp.json"):
        line = next((line for line in out.splitlines() if name in line and "not a regular file" in line), None)
        assert line is not None, (name, out)
    assert "warm helper" in out                              # the checks after them ran

    # a link to a regular file (a dotfiles checkout) is still read where it leads
    from rose.install.files import read_bytes

    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"permissions": {}}\n')
    (project / ".claude" / "settings.json").unlink()
    (project / ".claude" / "settings.json").symlink_to(dotfiles)
    assert read_bytes(project / ".claude" / "settings.json") == b'{"permissions": {}}\n'
    assert read_bytes(project / "missing.json") is None


def test_a_project_install_never_writes_through_a_link_out_of_the_project(project: Path, tmp_path: Path) -> None:
    """`rose install --scope project` in a clone edits the project's AGENTS.md, .claude/settings.json, .mcp.json:
    committed links there had rose append its block to ~/.bashrc (whose backticks every new shell then ran) and
    its hooks to another project's or the user's own settings, with a backup beside them."""
    from rose.install import Agent, InstallError, InstallScope, install

    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    bashrc = home / ".bashrc"
    bashrc.write_text("export EDITOR=vim\n")
    elsewhere = tmp_path / "other-project" / ".claude"
    elsewhere.mkdir(parents=True)
    (elsewhere / "settings.json").write_text("{}\n")
    (project / "AGENTS.md").symlink_to(bashrc)
    (project / ".claude").symlink_to(elsewhere)
    before = {p: p.read_bytes() for p in (bashrc, elsewhere / "settings.json")}
    for agent in (Agent.CODEX, Agent.CLAUDE):
        try:
            install(agent, InstallScope.PROJECT, project, home, rose=["/usr/bin/rose"], env={"PATH": "/usr/bin"})
        except InstallError as refused:
            assert "outside this project" in str(refused)
        else:
            raise AssertionError(f"{agent.value}: a link out of the project was written through")
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in elsewhere.iterdir()) == ["settings.json"] and not (home / ".bashrc.rose-backup").exists()
