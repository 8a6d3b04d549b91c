"""A real second Unix user for tests about other local users (CI runs as root, so it can make one).

    other = require_other_user()          # skips, with the reason, only where it cannot be made (not root)
    other.run(["mkdir", "/tmp/x"])        # a command run as that user (its uid and gid, no extra groups)
    shared_tmp()                          # a fresh folder in /tmp that both users can reach (pytest's are root-only)

The attacker's programs use the system's /usr/bin/python3 and coreutils: the test venv may sit under a folder the
second user cannot enter.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

NAME = "rose-other"
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class OtherUser:
    name: str
    uid: int
    gid: int

    def run(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 60)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
        return subprocess.run(argv, user=self.uid, group=self.gid, extra_groups=[], env=env, cwd="/tmp", **kwargs)

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
        return subprocess.Popen(argv, user=self.uid, group=self.gid, extra_groups=[], env=env, cwd="/tmp", **kwargs)


def require_other_user() -> OtherUser:
    if os.geteuid() != 0:
        pytest.skip("needs root to create a second Unix user (CI runs as root; elsewhere this test cannot run)")
    try:
        entry = pwd.getpwnam(NAME)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            pytest.skip("no useradd on this machine to create a second Unix user")
        subprocess.run([useradd, "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", NAME],
                       check=True, capture_output=True, timeout=60)
        entry = pwd.getpwnam(NAME)
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"{SYSTEM_PYTHON} is missing: the second user's programs need a Python it can run")
    return OtherUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def shared_tmp() -> Path:
    """A world-writable sticky folder in /tmp (like /tmp itself), removed by the caller."""
    folder = Path(tempfile.mkdtemp(prefix="rose-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    return folder
