"""The thin side of the warm helper, imported on every prompt: one round trip, never an error; the stdlib and two
leaf modules of rose's (errors, envvars) only.

One helper runs per user and installation. It lives in a private runtime folder: `$XDG_RUNTIME_DIR/rose` when
that is set and sound, else `$TMPDIR/rose-<uid>` (or `/tmp/rose-<uid>`). A folder in a shared place is used only
after lstat shows it is a real directory (not a symlink), owned by this user and closed to everyone else (mode
0700), and only when every folder above it is root's or this user's and none is writable by others without the
sticky bit (rose.ownership.unsafe_parents: else another user could rename it away and put theirs in its place); a
folder another user made first, one opened to others, or one under such a parent means no helper (and no bytecode
cache, rose.launcher) at all: the hook does its work in-process and `rose doctor` says why. Every file in it is
opened without following symlinks (O_NOFOLLOW, and O_EXCL where it is created), and both ends of the socket check
the other's uid (SO_PEERCRED), so another local user can neither read a prompt nor answer one.

A request carries the caller's environment and working directory, and the helper runs it in them
(rose.environment), so one helper serves every shell of the user: a different PATH, HOME or API key is a different
request, not a different process. When no helper answers, the caller does the work in-process and, on the hook
path, starts one (detached, ROSE_CHILD=1) for the next prompt.
"""
from __future__ import annotations

import _socket   # the C module under `socket`: its Python layer (enums of every constant, selectors) and json's
import os        # (its regular expressions) were a third of this hook's own CPU; a prompt needs neither. Nor
import stat      # struct or zlib (1.0 M and 0.7 M instructions to import, of a bare interpreter's 39 M): the peer's
import sys       # credentials are read with int.from_bytes, the socket's name hashed here (_digest)
import time

from rose.text import load_json
from rose import envvars  # a leaf module, no imports of its own beyond the stdlib
from rose.ownership import not_own, unsafe_parents  # another

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported on the per-prompt path
    from collections.abc import Callable
    from typing import Any

NO_HELPER_ENV = envvars.WARM_HELPER  # "0": never start a helper; hooks do all work in-process
SPAWN_GRACE_S = 30                   # do not start a second helper while the first may still be loading
CONNECT_TIMEOUT_S = 0.05             # a helper that is there answers a connect at once
DENSE_TIMEOUT_S = 0.5                # a dense query is a few milliseconds when warm
PRIVATE = 0o700
MAX_SOCKET_PATH = 104                # bytes: sun_path holds 108 on Linux, 104 on macOS
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# set inside the helper itself: recall there ranks in-process instead of calling itself
LOCAL_DENSE: Callable[[dict[str, Any], str, list[str], int], dict[str, Any] | None] | None = None
# ... and a store's periodic full scan (one stat per lesson file) runs in its background: (store root, scope)
BACKGROUND_SYNC: Callable[[str, str], None] | None = None


def __getattr__(name: str) -> Any:
    """`client.Timeout` (rose.errors.HelperTimeout), loaded when first named: the error tree imports enum, which
    the per-prompt hook does not need."""
    if name == "Timeout":
        from rose.errors import HelperTimeout

        return HelperTimeout
    raise AttributeError(name)


_TIMED_OUT = object()   # _exchange's answer when a helper took the request and did not reply in time


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
    return not_own(st, uid, folder=True) or unsafe_parents(path, uid)


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
    above = unsafe_parents(folder, uid)   # checked before the mkdir: nothing is made where it could be swapped
    if above is not None:
        return None, f"{folder} {above}: no warm helper and no bytecode cache (hooks work in-process)"
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
    path = os.path.join(folder, f"warm-{_digest(installation().encode())}.sock")
    return path if len(path.encode()) <= MAX_SOCKET_PATH else None   # a longer one cannot be bound


def _digest(key: bytes) -> str:
    """16 hex digits that tell installations apart in a socket's name (FNV-1a, 64 bits): a name, not a secret (the
    folder is private, and both ends check the other's uid)."""
    value = 0xCBF29CE484222325
    for byte in key:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(value, "016x")


def sibling(sock: str, suffix: str) -> str:
    """The helper's other files sit beside its socket: .pid, .log, .spawn, .lock."""
    return sock[: -len(".sock")] + suffix


def peer_uid(conn: Any) -> int | None:
    """The uid of the process at the other end of a Unix socket (None where the platform cannot tell)."""
    if not hasattr(_socket, "SO_PEERCRED"):
        return None
    raw = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)   # struct ucred: pid, uid, gid (32 bits)
    return int.from_bytes(raw[4:8], sys.byteorder)


def _exchange(sock: str, line: bytes, timeout: float, whole: bool = False) -> bytes | object | None:
    """One line out, one line back (`whole`: everything up to the helper's close), to a helper of this user only.
    None when no such helper is there (do the work here); _TIMED_OUT when one took the request and did not answer
    in time."""
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        try:
            conn.settimeout(CONNECT_TIMEOUT_S)
            conn.connect(sock)
            owner = peer_uid(conn)
            if owner is not None and owner != _uid():
                return None  # not our helper: never hand a prompt to another user's process
            conn.settimeout(timeout)
            conn.sendall(line)
        except OSError:
            return None
        chunks = []
        try:
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if not whole and chunk.endswith(b"\n"):
                    break
        except TimeoutError:
            return _TIMED_OUT
        except OSError:
            return None
        return b"".join(chunks)
    finally:
        conn.close()


def request(sock: str, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """One JSON line out, one JSON line back. None when no helper of ours is there (do the work here); raises
    Timeout when one took the request and did not answer in time."""
    import json

    data = _exchange(sock, json.dumps(message).encode() + b"\n", timeout)
    if data is _TIMED_OUT:
        from rose.errors import HelperTimeout

        raise HelperTimeout()
    if not isinstance(data, bytes):
        return None
    try:
        reply = load_json(data)
    except ValueError:
        return None
    return reply if isinstance(reply, dict) and "error" not in reply else None


_ESCAPES: dict[int, str] = {}


def quoted(text: str) -> str:
    """`text` as a JSON string, as json.loads reads it back (non-ASCII kept, control characters, quotes,
    backslashes and lone surrogates escaped): the hook's request is written without importing json."""
    if not _ESCAPES:
        table = {c: f"\\u{c:04x}" for c in [*range(0x20), *range(0xD800, 0xE000)]}
        table.update({0x22: '\\"', 0x5C: "\\\\"})
        _ESCAPES.update(table)
    return '"' + text.translate(_ESCAPES) + '"'


RAW_REPLY = b"="   # a hook's reply line: this mark, then the hook's stdout as it is (one JSON object has no newline)


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


def timeout_notice(timeout: float) -> str:
    """The hook's answer when the helper took it and did not answer in time (the caller logs the skip)."""
    return '{"systemMessage": ' + quoted(f"⋯ ROSE · recall ran out of time ({timeout:.0f}s): skipped this time") + "}"


def hook_request(argv: list[str], payload: bytes, cwd: str, env: dict[str, str]) -> bytes:
    """The `hook` request line, written by hand (see quoted): what json.dumps would write, read by json.loads."""
    pairs = ", ".join(f"{quoted(k)}: {quoted(v)}" for k, v in env.items())
    return (f'{{"op": "hook", "reply": "raw", "argv": [{", ".join(quoted(a) for a in argv)}], '
            f'"stdin": {quoted(payload.decode("utf-8", "surrogateescape"))}, "cwd": {quoted(cwd)}, '
            f'"env": {{{pairs}}}}}\n').encode()


def run_hook(argv: list[str], payload: bytes, timeout: float) -> str | None:
    """Hand a whole hook invocation to the helper. None means do it here (and a helper is being started); on a
    helper that took it and ran out of time, the fail-open notice itself (the work is not done twice)."""
    sock = socket_path()
    if sock is None:
        return None
    data = _exchange(sock, hook_request(argv, payload, os.getcwd(), dict(os.environ)), timeout)
    if data is _TIMED_OUT:
        return timeout_notice(timeout)
    if not isinstance(data, bytes) or not data.startswith(RAW_REPLY) or not data.endswith(b"\n"):
        spawn(sock)   # no helper, or one that could not run it (its error reply): here, and a helper for next time
        return None
    return data[len(RAW_REPLY):-1].decode("utf-8", "surrogateescape")


# The inspection commands the helper may answer: they write nothing a user sees (an index catches up, as it would
# in-process) and never ask. The helper narrows further (route and recall, by their flags and settings) and answers
# anything else, or anything it cannot run exactly as a fresh process would, with "not served".
SERVED_COMMANDS = frozenset({"status", "search", "recall", "trace", "tree", "list", "show", "route", "credit",
                             "conflicts", "evolution", "events"})
# Those that rank vectors: in a process of their own each pays numpy's import and the vectors' load, most of its
# cost (about 15x / 30x bare Python at 10,000 / 50,000 lessons, 2x-4x served). Run with no helper up, one is started
# beside it, as a prompt starts one, so the next is served; the others cost a process about what they cost served.
RANKING_COMMANDS = frozenset({"search", "recall", "trace"})
COMMAND_TIMEOUT_S = 120.0   # bounds a hung helper only: a command at 50,000 lessons takes about a second
COMMAND_REPLY = b"C"        # a served command's reply: this mark, "code stdout-bytes stderr-bytes\n", then both


def command_request(argv: list[str], cwd: str, env: dict[str, str], streams: list[tuple[str, str]]) -> bytes:
    """The `command` request line, written by hand like hook_request: json.loads reads it."""
    pairs = ", ".join(f"{quoted(k)}: {quoted(v)}" for k, v in env.items())
    codecs = ", ".join(f"[{quoted(e)}, {quoted(r)}]" for e, r in streams)
    return (f'{{"op": "command", "argv": [{", ".join(quoted(a) for a in argv)}], "cwd": {quoted(cwd)}, '
            f'"streams": [{codecs}], "env": {{{pairs}}}}}\n').encode()


def parse_command_reply(data: bytes) -> tuple[int, bytes, bytes] | None:
    """(exit code, stdout bytes, stderr bytes) of a served command; None for anything else (not served, an error,
    a reply cut short)."""
    if not data.startswith(COMMAND_REPLY):
        return None
    head, sep, body = data[len(COMMAND_REPLY):].partition(b"\n")
    fields = head.split()
    if not sep or len(fields) != 3 or not all(f.isdigit() for f in fields):
        return None
    code, n_out, n_err = (int(f) for f in fields)
    if len(body) != n_out + n_err:
        return None
    return code, body[:n_out], body[n_out:]


def run_command(argv: list[str]) -> int | None:
    """Have the warm helper answer an inspection command (its imports and indexes are warm): its exit code once its
    output is written here, or None to run it in-process (not such a command, helpers off, no helper of this user,
    one that would not or could not serve it). With no helper up, a command that ranks starts one for the next
    (RANKING_COMMANDS); one that is up and declines (its model still loading, a selector that asks) is left alone."""
    if not argv or argv[0] not in SERVED_COMMANDS or not helpers_allowed():
        return None
    out, err = sys.stdout, sys.stderr
    if out is None or err is None or not hasattr(out, "buffer") or not hasattr(err, "buffer"):
        return None
    sock = socket_path()
    if sock is None:
        return None
    try:
        cwd = os.getcwd()
    except OSError:   # a folder removed under the shell: in-process, which says so as it always has
        return None
    line = command_request(argv, cwd, dict(os.environ),
                           [(out.encoding, out.errors or "strict"), (err.encoding, err.errors or "strict")])
    data = _exchange(sock, line, COMMAND_TIMEOUT_S, whole=True)
    if data is None and argv[0] in RANKING_COMMANDS and not {"-h", "--help"} & set(argv):
        spawn(sock)   # nobody listening: this one runs here, the next is served
    reply = parse_command_reply(data) if isinstance(data, bytes) else None
    if reply is None:
        return None   # it wrote nothing: the command runs here, as if no helper were up
    code, stdout, stderr = reply
    try:
        for stream, data in ((out, stdout), (err, stderr)):
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()
    except BrokenPipeError:
        return 0   # as the command itself would: a reader that went away (`| head`) is not a failure
    return code


def embed_spec(es: Any) -> dict[str, Any]:
    """An embedding configuration (rose.config.EmbedSettings) as a request carries it: the helper's key for it."""
    return {"provider": es.provider.value, "base_url": es.base_url, "model": es.model, "api_key_env": es.api_key_env}


def dense(embed: dict[str, Any], query: str, dbs: list[str], k: int,
          timeout: float = DENSE_TIMEOUT_S) -> dict[str, Any] | None:
    if LOCAL_DENSE is not None:
        return LOCAL_DENSE(embed, query, dbs, k)
    sock = socket_path()
    if sock is None:
        return None
    from rose.errors import HelperTimeout

    try:
        return request(sock, {"op": "dense", "embed": embed, "query": query, "dbs": dbs, "k": k}, timeout)
    except HelperTimeout:
        return None


def catch_up(embed: dict[str, Any], dbs: list[str], timeout: float = CONNECT_TIMEOUT_S * 4,
             ids: dict[str, list[str]] | None = None) -> bool:
    """Ask a running helper to embed what these indexes lack, in its own time; `ids` ({db: [lesson id, ...]}):
    only these lessons. False when none answered (the vectors then come with the next `rose index`, command that
    ranks in-process, or helper's periodic catch-up)."""
    sock = socket_path()
    if sock is None or not helpers_allowed():
        return False
    from rose.errors import HelperTimeout

    message: dict[str, Any] = {"op": "catch_up", "embed": embed, "dbs": dbs}
    if ids is not None:
        message["ids"] = ids
    try:
        reply = request(sock, message, timeout)
    except HelperTimeout:
        return False
    return bool(reply and reply.get("started"))
