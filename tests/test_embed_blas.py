"""numpy's BLAS runs on one thread in rose's processes (rose.embed.load_numpy): OpenBLAS's spinning threads cost
~60 ms of CPU per spaced query; a user's own choice of threads stands."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parent.parent / "src")
PROBE = ("import os; from rose.embed import load_numpy; np = load_numpy(); m = np.ones((2000, 64), dtype=np.float32);"
         " m @ np.ones(64, dtype=np.float32); print(os.environ['OPENBLAS_NUM_THREADS'],"
         " len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else -1)")


def _probe(extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update({"PYTHONPATH": SRC, **extra})
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True,
                          timeout=120).stdout.split()


def test_numpy_loaded_by_rose_uses_one_blas_thread() -> None:
    pytest.importorskip("numpy")
    setting, threads = _probe({})
    assert setting == "1"
    if threads != "-1":
        assert int(threads) == 1   # no BLAS worker threads were started


def test_a_users_own_thread_count_is_kept() -> None:
    pytest.importorskip("numpy")
    assert _probe({"OPENBLAS_NUM_THREADS": "2"})[0] == "2"
