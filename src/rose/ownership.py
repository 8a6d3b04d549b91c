"""Is a file or folder rose trusts its own, and could another user swap it through a folder above it? One check for
every place that asks: the warm helper's private folder (and the bytecode cache in it), the user's own store,
and the derived caches rose reads back (the vector file beside index.db, the tokenizer's table). A leaf module of
the standard library alone: the per-prompt hook's client uses it.
"""
from __future__ import annotations

import os
import stat


def not_own(st: os.stat_result, uid: int, *, folder: bool = False) -> str | None:
    """Why what `st` describes (read by lstat, or fstat of a descriptor opened without following links) is not
    this user's private file, or folder when `folder`: a link, another kind, another user's, open to group or
    others. None when it is."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not (stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)):
        return "is not a directory" if folder else "is not a regular file"
    if st.st_uid != uid:
        return f"belongs to uid {st.st_uid}, not to this user (uid {uid})"
    if st.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(st.st_mode):o}, needs {700 if folder else 600})"
    return None


def open_parent(st: os.stat_result, uid: int) -> str | None:
    """Why a folder above something private lets another user rename that thing away and put their own in its
    place: another user's (not root's, not this user's), or writable by group or others without the sticky bit
    (which keeps a name in a shared folder such as /tmp to its owner). None when it does not."""
    if st.st_uid not in (0, uid):
        return f"belongs to uid {st.st_uid} (neither root nor this user, uid {uid})"
    if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"is writable by other users without the sticky bit (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def unsafe_parents(path: str, uid: int) -> str | None:
    """Why another user could swap `path` (a private folder or file) for one of their own through a folder above
    it, or None: every folder up to / as written, and again as the links in it resolve, must pass open_parent
    (a link in the chain is judged by its owner; its target's chain is checked too)."""
    path = os.path.abspath(path)
    chains = [path, os.path.realpath(path)]
    for chain in dict.fromkeys(chains):
        current = os.path.dirname(chain)
        while True:
            try:
                st = os.lstat(current)
            except OSError as exc:
                return f"has a parent {current} that cannot be inspected ({exc.strerror or exc})"
            why = open_parent(st, uid)
            if why is not None:
                return f"has a parent {current} that {why}: another user could swap it for their own"
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return None
