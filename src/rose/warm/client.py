"""The thin side of the warm helper, imported on every prompt: stdlib only, one round trip, never an error.

One helper runs per user and installation. It lives in a private runtime folder: `$XDG_RUNTIME_DIR/rose` when
that is set and sound, else `$TMPDIR/rose-<uid>` (or `/tmp/rose-<uid>`). A folder in a shared place is used only
after lstat shows it is a real directory (not a symlink), owned by this user and closed to everyone else (mode
0700); a folder another user made first, or one opened to others, means no helper at all: the hook does its work
in-process and `rose doctor` says why. Every file in it is opened without following symlinks (O_NOFOLLOW, and
O_EXCL where it is created), and both ends of the socket check the other's uid (SO_PEERCRED), so another local user
can neither read a prompt nor answer one.

A request carries the caller's environment and working directory, and the helper runs it in them
(rose.environment), so one helper serves every shell of the user: a different PATH, HOME or API key is a different
request, not a different process. When no helper answers, the caller does the work in-process and, on the hook
path, starts one (detached, ROSE_CHILD=1) for the next prompt.
"""
from __future__ import annotations

import json
import os
import socket
import stat
import struct
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
PRIVATE = 0o700
MAX_SOCKET_PATH = 104                # bytes: sun_path holds 108 on Linux, 104 on macOS
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCAL_DENSE = None   # set inside the helper itself: recall there ranks in-process instead of calling itself


class Timeout(Exception):
    """The helper took the request but did not answer in time (the caller must not redo the work)."""


def helpers_allowed() -> bool:
    return os.environ.get(NO_HELPER_ENV, "1") != "0"


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def sound_folder(path: str, uid: int | None = None) -> str | None:
    """None when `path` is a real directory, owned by `uid`, closed to group and others; else why it is not."""
    uid = _uid() if uid is None else uid
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be inspected ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != uid:
        return f"belongs to uid {st.st_uid}, not to this user (uid {uid})"
    if st.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(st.st_mode):o}, needs 700)"
    return None


def runtime_dir() -> tuple[str | None, str]:
    """(the helper's private folder, or None; how it was chosen or why there is none)."""
    uid = _uid()
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg) and sound_folder(xdg, uid) is None:
        base, folder = xdg, os.path.join(xdg, "rose")
    else:
        base = next((v for v in (os.environ.get(n) for n in ("TMPDIR", "TEMP", "TMP")) if v and os.path.isdir(v)),
                    "/tmp")
        folder = os.path.join(base, f"rose-{uid}")
    try:
        os.mkdir(folder, PRIVATE)
    except FileExistsError:
        pass
    except OSError as exc:
        return None, f"cannot create {folder}: {exc.strerror or exc}"
    why = sound_folder(folder, uid)
    if why is not None:
        return None, f"{folder} {why}: no warm helper (hooks work in-process); remove it or fix its owner and mode"
    return folder, f"{folder} (private to this user, under {base})"


def installation() -> str:
    """Which installation of rose this is (its environment and package folder): one helper serves each."""
    return f"{sys.prefix}|{_PACKAGE}"


def code_stamp() -> str:
    """Changes whenever rose's code does (an upgrade, or an edit in a development checkout). The helper, not the
    hook, walks the package for it (now and then), and retires when it changed: the hook never pays for the walk."""
    latest = 0
    for folder, _dirs, files in os.walk(_PACKAGE):
        for name in files:
            if name.endswith(".py"):
                latest = max(latest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    return f"{installation()}|{latest}"




def socket_path() -> str | None:
    """The helper's socket for this user and installation, or None when there is no private folder for it."""
    folder, _why = runtime_dir()
    if folder is None:
        return None
    key = installation().encode()
    digest = format(zlib.crc32(key), "08x") + format(zlib.adler32(key), "08x")
    path = os.path.join(folder, f"warm-{digest}.sock")
    return path if len(path.encode()) <= MAX_SOCKET_PATH else None   # a longer one cannot be bound


def sibling(sock: str, suffix: str) -> str:
    """The helper's other files sit beside its socket: .pid, .log, .spawn, .lock."""
    return sock[: -len(".sock")] + suffix


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None where the platform cannot tell)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", raw)[1]


def request(sock: str, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """One JSON line out, one JSON line back. None when no helper of ours is there (do the work here); raises
    Timeout when one took the request and did not answer in time."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    with conn:
        try:
            conn.settimeout(CONNECT_TIMEOUT_S)
            conn.connect(sock)
            owner = peer_uid(conn)
            if owner is not None and owner != _uid():
                return None  # not our helper: never hand a prompt to another user's process
            conn.settimeout(timeout)
            conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            return None
        chunks = []
        try:
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    break
        except socket.timeout:
            raise Timeout() from None
        except OSError:
            return None
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return reply if isinstance(reply, dict) and "error" not in reply else None


def _open_private(path: str, flags: int) -> int:
    """Open a file in the private folder without following a symlink; refuse one that is not ours."""
    fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    st = os.fstat(fd)
    if st.st_uid != _uid() or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise PermissionError(f"{path} is not a regular file of this user")
    return fd


def spawn(sock: str | None) -> bool:
    """Start a helper unless helpers are off or one was started moments ago. Returns whether one started now."""
    if sock is None or not helpers_allowed():
        return False
    marker = sibling(sock, ".spawn")
    try:
        st = os.lstat(marker)
        if stat.S_ISREG(st.st_mode) and st.st_uid == _uid() and time.time() - st.st_mtime < SPAWN_GRACE_S:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        os.close(_open_private(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
    except OSError:
        return False
    from pathlib import Path

    from rose.detach import python_module, spawn_detached

    return spawn_detached(python_module("rose.warm.server", sock), Path(sibling(sock, ".log")),
                          cwd=Path("/")) is not None


def run_hook(argv: list[str], payload: bytes, timeout: float) -> str | None:
    """Hand a whole hook invocation to the helper. None means do it here (and a helper is being started); on a
    helper that took it and ran out of time, the fail-open notice itself (the work is not done twice)."""
    sock = socket_path()
    if sock is None:
        return None
    message = {"op": "hook", "argv": argv, "stdin": payload.decode("utf-8", "surrogateescape"),
               "cwd": os.getcwd(), "env": dict(os.environ)}
    try:
        reply = request(sock, message, timeout)
    except Timeout:
        return json.dumps({"systemMessage": f"⋯ ROSE · recall ran out of time ({timeout:.0f}s): skipped this time"},
                          ensure_ascii=False)
    if reply is None:
        spawn(sock)
        return None
    out = reply.get("stdout")
    return out if isinstance(out, str) else None


def dense(embed: dict[str, Any], query: str, dbs: list[str], k: int,
          timeout: float = DENSE_TIMEOUT_S) -> dict[str, Any] | None:
    if LOCAL_DENSE is not None:
        return LOCAL_DENSE(embed, query, dbs, k)
    sock = socket_path()
    if sock is None:
        return None
    try:
        return request(sock, {"op": "dense", "embed": embed, "query": query, "dbs": dbs, "k": k}, timeout)
    except Timeout:
        return None
