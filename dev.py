#!/usr/bin/env python3
"""The project's two entry points, each usable on a fresh machine with only Python 3.10+ and git.

    python3 dev.py demo    set up a local virtual environment and run rose's main job
    python3 dev.py test    set up the same environment (plus test tools) and run the whole test suite

Both create `.venv/` on first use and reuse it afterwards; an install is redone only when
pyproject.toml changed since the last one. Extra arguments after `test` go to pytest.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".rose-install-stamp"
PYTEST_NO_TESTS_COLLECTED = 5


def _say(message: str) -> None:
    print(f"[dev] {message}", flush=True)


def _run(cmd: list[str], **kwargs) -> int:
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kwargs)


def _ensure_venv(extras: str) -> None:
    if sys.version_info < (3, 10):
        sys.exit(f"rose needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        _say(f"creating virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    _say(f"installing rose ({extras or 'runtime'}) into {VENV}")
    target = f".[{extras}]" if extras else "."
    rc = _run([PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", target])
    if rc != 0:
        sys.exit(f"pip install failed with exit code {rc}")
    STAMP.write_text(wanted)


def demo(args: list[str]) -> int:
    _ensure_venv("")
    return _run([PYTHON, "-m", "rose", "demo", *args])


def test(args: list[str]) -> int:
    _ensure_venv("test")
    # like an activated venv: its tools (rose, and node/npm when they came from PyPI) come first on PATH
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    setup = ROOT / "scripts" / "test-setup.sh"
    if setup.exists():
        rc = _run(["bash", setup], env=env)
        if rc != 0:
            _say(f"test setup failed (exit {rc}); see the message above")
            return rc
    rc = _run([PYTHON, "-m", "pytest", *args], env=env)
    if rc == PYTEST_NO_TESTS_COLLECTED:
        _say("pytest collected no tests: that is a failure here, not a pass")
        return 1
    return rc


COMMANDS = {"demo": demo, "test": test}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip())
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
