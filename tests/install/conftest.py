"""Fixtures for the install tests: a fake HOME and project, a hermetic environment, and tree snapshots that compare
every file's bytes and mode and every folder, so "uninstall gives back exactly what was there" is checked literally.
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `tests.support` must import however pytest was started
    sys.path.insert(0, str(ROOT))

# A rose command with a space in its path: every command rose writes must survive shell quoting.
FAKE_ROSE = ["/opt/rose tools/bin/rose"]


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return isolated_home


@pytest.fixture
def env() -> dict:
    """No CLAUDE_CONFIG_DIR / CODEX_HOME / PATH from the developer's shell."""
    return {"PATH": "/nonexistent"}


def parse_toml(text: str) -> dict:
    """The standard parser where there is one (3.11+), rose's own reader on 3.10."""
    try:
        import tomllib
    except ImportError:
        from rose.install import toml

        return toml.loads(text)
    return tomllib.loads(text)


Snapshot = dict


def snapshot(*roots: Path) -> Snapshot:
    """{relative path: (kind, mode, bytes)} for every folder, file and symlink under ``roots``."""
    out: dict = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = Path(folder) / name
                key = str(path)
                st = path.lstat()
                if stat.S_ISLNK(st.st_mode):
                    out[key] = ("link", os.readlink(path))
                elif stat.S_ISDIR(st.st_mode):
                    out[key] = ("dir", stat.S_IMODE(st.st_mode))
                else:
                    out[key] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return out


def diff(before: Snapshot, after: Snapshot) -> str:
    lines = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            lines.append(f"{key}:\n  before: {before.get(key)!r}\n  after:  {after.get(key)!r}")
    return "\n".join(lines)
