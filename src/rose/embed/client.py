"""Talking to the warm helper (rose.embed.daemon) from the per-prompt hook: a few stdlib imports and one round trip.

The helper is found by a socket path derived from the user and the embedder configuration; when none answers in
CLIENT_TIMEOUT_S the caller goes lexical-only and, on the hook path, starts one (detached, ROSE_CHILD=1).
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

NO_HELPER_ENV = "ROSE_WARM_HELPER"   # "0": never start a helper (hooks search lexically; commands load the model)
SPAWN_GRACE_S = 30                   # do not start a second helper while the first may still be loading
CLIENT_TIMEOUT_S = 0.3               # the hook's whole budget for dense search


def _tempdir() -> Path:
    # tempfile.gettempdir() without importing tempfile (and random, and hashlib's friends) on every prompt
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name)
        if value and os.path.isdir(value):
            return Path(value)
    return Path("/tmp")


def socket_path(embedder_key: str) -> Path:
    """Short (Unix sockets allow ~100 bytes), per user and per embedder configuration."""
    digest = hashlib.sha256(f"{Path.home()}|{embedder_key}".encode()).hexdigest()[:12]
    folder = _tempdir() / f"rose-{os.getuid() if hasattr(os, 'getuid') else 'u'}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"embed-{digest}.sock"


def query(sock: Path, text: str, dbs: list[str], k: int, timeout: float = CLIENT_TIMEOUT_S) -> dict[str, Any] | None:
    """Ask a running helper; None when there is none or it is too slow (the caller goes lexical-only)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(timeout)
            client.connect(str(sock))
            client.sendall(json.dumps({"query": text, "dbs": dbs, "k": k}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = client.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = json.loads(data)
        return reply if isinstance(reply, dict) and "ranks" in reply else None
    except (OSError, ValueError):
        return None


def helpers_allowed() -> bool:
    return os.environ.get(NO_HELPER_ENV, "1") != "0"


def spawn(sock: Path, provider_args: list[str]) -> bool:
    """Start a helper unless one was started moments ago. Returns whether one was started now."""
    if not helpers_allowed():
        return False
    marker = sock.with_suffix(".spawn")
    try:
        if time.time() - marker.stat().st_mtime < SPAWN_GRACE_S:
            return False
    except FileNotFoundError:
        pass
    marker.touch()
    import subprocess
    import sys

    log = sock.with_suffix(".log")
    env = {**os.environ, "ROSE_CHILD": "1"}
    with open(os.devnull, "rb") as devnull, open(log, "ab") as out:
        subprocess.Popen([sys.executable, "-m", "rose.embed.daemon", "--socket", str(sock), *provider_args],
                         stdin=devnull, stdout=out, stderr=out, start_new_session=True, env=env, close_fds=True)
    return True
