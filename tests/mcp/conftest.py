"""Helpers for the MCP tests: the rose under test as a command a real client (the SDK's, Claude Code, Codex) starts.

A hook or MCP command launched by another program runs whatever `rose` it names. `rose_launcher` writes a tiny
script that runs *this* rose (the package these tests imported, by its source folder) with this interpreter, so an
agent CLI started from a clean environment still runs the code under test.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

import rose

ROSE_SRC = Path(rose.__file__).resolve().parents[1]


def write_launcher(folder: Path, extra_env: dict[str, str] | None = None) -> Path:
    """``folder/rose``: ``exec <python> -m rose "$@"`` with this rose first on PYTHONPATH (and ``extra_env``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rose"
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in
                           {"PYTHONPATH": str(ROSE_SRC), **(extra_env or {})}.items())
    path.write_text(f"#!/bin/sh\n{assignments} exec {shlex.quote(sys.executable)} -m rose \"$@\"\n")
    os.chmod(path, 0o755)
    return path


@pytest.fixture
def launcher(tmp_path: Path) -> Path:
    # no model backend: `add` stores the lesson unreconciled at once, deterministically
    return write_launcher(tmp_path / "bin", {"ROSE_AGENT_BACKEND": "none", "ROSE_WARM_HELPER": "0",
                                             "ROSE_HOME": os.environ["ROSE_HOME"], "HOME": os.environ["HOME"]})
