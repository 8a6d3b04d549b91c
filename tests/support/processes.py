"""Process helpers for tests and benchmarks: is a pid still running, and ending the warm helpers a run started."""
from __future__ import annotations

import os
import signal
from pathlib import Path


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
