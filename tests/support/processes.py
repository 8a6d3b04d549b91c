"""Process helpers for tests and benchmarks: is a pid still running; warm helpers a run starts, kept in a folder of
its own and ended with it."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped by its session) is not alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def stop_warm_helpers(folder: Path) -> None:
    """Warm helpers exit on their own when idle; a test or benchmark run ends the ones it started under `folder`."""
    for pid_file in folder.rglob("warm-*.pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


@contextlib.contextmanager
def helpers_under(folder: Path, env: Any, idle_s: float | None = None) -> Iterator[Path]:
    """Warm helpers of this run kept under `folder` (their sockets and pid files there, never the machine's own
    runtime folder), allowed, and ended with the folder afterwards. `env`: a pytest MonkeyPatch (setenv, delenv)."""
    env.setenv("TMPDIR", str(folder))
    env.delenv("XDG_RUNTIME_DIR", raising=False)
    env.setenv("ROSE_WARM_HELPER", "1")
    if idle_s is not None:
        env.setenv("ROSE_WARM_IDLE_S", str(idle_s))
    try:
        yield folder
    finally:
        stop_warm_helpers(folder)
        shutil.rmtree(folder, ignore_errors=True)
