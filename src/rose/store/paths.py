"""Where rose's stores live: the folder name of a store and the user's own (global) store. A leaf module: config
and trust, which sit below the store package, find the user's own files through it."""
from __future__ import annotations

from pathlib import Path

from rose import envvars

STORE_DIR = ".rose"
GLOBAL_ENV = envvars.HOME  # overrides where the global store lives (default ~/.rose)


def global_root() -> Path:
    from rose import environment

    override = environment.get(GLOBAL_ENV)
    return Path(override).expanduser().resolve() if override else (environment.home() / STORE_DIR).resolve()


CONFIG_NAME = "config.yaml"


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
