"""The thin side of the warm helper, imported on every prompt: stdlib only, one round trip, never an error.

The helper is found by a socket path derived from the user, rose's own code and the environment variables that
change what a hook does (so a helper never serves a session whose environment it does not share). When none
answers, the caller does the work in-process and, on the hook path, starts one (detached, ROSE_CHILD=1) for the
next prompt.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported on the per-prompt path
    from typing import Any

NO_HELPER_ENV = "ROSE_WARM_HELPER"   # "0": never start a helper; hooks do all work in-process
SPAWN_GRACE_S = 30                   # do not start a second helper while the first may still be loading
CONNECT_TIMEOUT_S = 0.05             # a helper that is there answers a connect at once
DENSE_TIMEOUT_S = 0.5                # a dense query is a few milliseconds when warm
HOOK_TIMEOUT_S = 120.0               # a hook request may include a selector's model call (bounded by its own timeout)
# Variables that change what a hook or a model call does: a helper only serves the environment it was started in.
ENV_KEYS = ("HOME", "ROSE_HOME", "PATH", "TMPDIR", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
            "OPENAI_BASE_URL", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCAL_DENSE = None   # set inside the helper itself: recall there ranks in-process instead of calling itself


def helpers_allowed() -> bool:
    return os.environ.get(NO_HELPER_ENV, "1") != "0"


def _tempdir() -> str:
    # tempfile.gettempdir() without importing tempfile (and random, hashlib...) on every prompt
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name)
        if value and os.path.isdir(value):
            return value
    return "/tmp"


def _code_stamp() -> str:
    """Changes whenever rose's code does (an upgrade, or an edit in a development checkout)."""
    latest = 0
    for folder, _dirs, files in os.walk(_PACKAGE):
        for name in files:
            if name.endswith(".py"):
                latest = max(latest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    return f"{sys.prefix}|{_PACKAGE}|{latest}"   # one helper per installation (venv) and version of the code


def socket_path() -> str:
    """Short (Unix socket paths allow ~100 bytes) and private to this user."""
    key = "|".join([_code_stamp(), *(f"{k}={os.environ.get(k, '')}" for k in ENV_KEYS)])
    digest = format(zlib.crc32(key.encode()), "08x") + format(zlib.adler32(key.encode()), "08x")
    folder = os.path.join(_tempdir(), f"rose-{os.getuid() if hasattr(os, 'getuid') else 'u'}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.path.join(folder, f"warm-{digest}.sock")


def sibling(sock: str, suffix: str) -> str:
    """The helper's other files sit beside its socket: .pid, .log, .spawn."""
    return sock[: -len(".sock")] + suffix


def request(sock: str, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """One JSON line out, one JSON line back; None on any failure (no helper, too slow, garbage)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT_S)
            conn.connect(sock)
            conn.settimeout(timeout)
            conn.sendall(json.dumps(message).encode() + b"\n")
            chunks = []
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    break
        reply = json.loads(b"".join(chunks))
        return reply if isinstance(reply, dict) and "error" not in reply else None
    except (OSError, ValueError):
        return None


def spawn(sock: str) -> bool:
    """Start a helper unless helpers are off or one was started moments ago. Returns whether one started now."""
    if not helpers_allowed():
        return False
    marker = sibling(sock, ".spawn")
    try:
        if time.time() - os.stat(marker).st_mtime < SPAWN_GRACE_S:
            return False
    except FileNotFoundError:
        pass
    with open(marker, "w"):
        pass
    from pathlib import Path

    from rose.detach import python_module, spawn_detached

    return spawn_detached(python_module("rose.warm.server", sock), Path(sibling(sock, ".log")),
                          cwd=Path("/")) is not None


def run_hook(argv: list[str], payload: bytes) -> str | None:
    """Hand a whole hook invocation to the helper; None means do it here (and a helper is being started)."""
    sock = socket_path()
    reply = request(sock, {"op": "hook", "argv": argv, "stdin": payload.decode("utf-8", "surrogateescape"),
                           "cwd": os.getcwd()}, HOOK_TIMEOUT_S)
    if reply is None:
        spawn(sock)
        return None
    out = reply.get("stdout")
    return out if isinstance(out, str) else None


def dense(embed: dict[str, Any], query: str, dbs: list[str], k: int) -> dict[str, Any] | None:
    if LOCAL_DENSE is not None:
        return LOCAL_DENSE(embed, query, dbs, k)
    return request(socket_path(), {"op": "dense", "embed": embed, "query": query, "dbs": dbs, "k": k},
                   DENSE_TIMEOUT_S)
