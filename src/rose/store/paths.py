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
