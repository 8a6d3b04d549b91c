"""Is a file or folder rose trusts its own? One check for every place that asks: the warm helper's private folder,
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
