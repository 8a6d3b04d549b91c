"""Storage: files are the truth (nodes, episodes, routing), the SQLite index is derived, every write is atomic.

The names below are loaded on first use (PEP 562), so importing a leaf module of this package (``atomic``,
``frontmatter``, ``paths``: the file primitives config and trust use) does not load the stores, which import config.
"""
from __future__ import annotations


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.store.layers import Layers, find_project_root, global_root
    from rose.store.store import Store, family_slug

__all__ = ["Layers", "Store", "family_slug", "find_project_root", "global_root"]
_HOME = {"Layers": "rose.store.layers", "find_project_root": "rose.store.layers", "global_root": "rose.store.paths",
         "Store": "rose.store.store", "family_slug": "rose.store.store"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'rose.store' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
