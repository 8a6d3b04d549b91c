"""Where rose's stores live: the folder name of a store and the user's own (global) store. A leaf module: config
and trust, which sit below the store package, find the user's own files through it."""
from __future__ import annotations

from pathlib import Path

from rose import envvars

STORE_DIR = ".rose"
GLOBAL_ENV = envvars.HOME  # overrides where the global store lives (default ~/.rose)


def inside(path: str, root: str) -> bool:
    """Is `path` `root` or under it (both as given: resolve links first where a link could lead out)?"""
    import os

    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def global_root() -> Path:
    from rose import environment

    override = environment.get(GLOBAL_ENV)
    return Path(override).expanduser().resolve() if override else (environment.home() / STORE_DIR).resolve()


CONFIG_NAME = "config.yaml"
LOCAL_DIR = "local"   # under the global store: each repository store's machine-local state (local_root)


def local_root(store_root: Path) -> Path:
    """Where a store's machine-local state lives: its index, session scratch, learning queue, judge cache, events,
    locks, logs, caches and evolution registry. The user's own stores (the global one and those under it) keep it
    inside; a repository's `.rose/` keeps it under the user's own store, `~/.rose/local/<its path, escaped>/`,
    because a file a repository can commit must never be read as rose's own record of this machine: a committed
    queue job would have the learner read a transcript of the repository's choosing, a committed judge cache would
    answer for the model, a committed registry would declare a guardrail live without a trial."""
    import os

    real, own = os.path.realpath(store_root), global_root()
    if inside(real, str(own)):
        return store_root
    return own / LOCAL_DIR / _escaped(real)


_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_NAME_MAX = 200   # bytes of a folder name (most file systems allow 255)


def _escaped(path: str) -> str:
    """A path as one folder name, one to one: bytes outside [A-Za-z0-9._-] as %XX (so it reads as the path it is,
    and needs no hashlib on an inspection command's start); a path too long for one name, by its SHA-256 instead
    (an escaped absolute path starts with %2F, so the two kinds never meet)."""
    raw = path.encode("utf-8", "surrogateescape")
    name = "".join(chr(b) if b in _KEPT else f"%{b:02X}" for b in raw)
    if len(name) <= _NAME_MAX:
        return name
    import hashlib

    return "sha256-" + hashlib.sha256(raw).hexdigest()


def store_of_local(name: str) -> str | None:
    """The store path a folder under LOCAL_DIR was named for (_escaped undone), or None (a hashed or foreign name)."""
    import re

    if not name.startswith("%2F") or re.search(r"%(?![0-9A-F]{2})", name):
        return None
    return bytes(re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), name), "latin-1") \
        .decode("utf-8", "surrogateescape")


def _not_trusted(st, uid: int, name: Path) -> str | None:   # noqa: ANN001 - an os.stat_result
    import stat

    if st.st_uid not in (uid, 0):
        return f"{name} belongs to uid {st.st_uid}, not to you (uid {uid}): fix its owner (`chown`) or remove it"
    if st.st_mode & 0o022:
        return (f"{name} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}): anyone could have "
                f"replaced what is in it; check it, then run `chmod go-w {name}`")
    return None


def own_store_problem(root: Path | None = None) -> str | None:
    """Why the user's own store at `root` (the global one by default) must not be trusted as theirs, in one line,
    or None: the folder (and its config.yaml, through a dotfile link to its target) must be the user's (or root's)
    and writable by nobody else, and no folder above it may let another user swap it (rose.ownership). A store
    that is not there yet is no problem: rose makes it 0700."""
    import os

    from rose.ownership import unsafe_parents

    root = global_root() if root is None else root
    uid = os.geteuid()
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"your own store {root} cannot be inspected ({exc.strerror or exc})"
    why = _not_trusted(st, uid, root) if os.path.isdir(root) else f"{root} is not a directory"
    if why is None:
        try:
            why = _not_trusted(os.stat(root / CONFIG_NAME), uid, root / CONFIG_NAME)
        except FileNotFoundError:
            pass   # no config.yaml: no settings to trust or refuse
        except OSError as exc:
            why = f"{root / CONFIG_NAME} cannot be inspected ({exc.strerror or exc})"
    if why is None:
        above = unsafe_parents(str(root), uid)
        why = f"{root} {above}" if above else None
    return None if why is None else f"your own store is not used: {why}"
