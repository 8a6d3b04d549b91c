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
