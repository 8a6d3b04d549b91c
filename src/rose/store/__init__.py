"""Storage: files are the truth (nodes, episodes, routing), the SQLite index is derived, every write is atomic.

The names below are loaded on first use (PEP 562), so importing a leaf module of this package (``atomic``,
``frontmatter``, ``paths``: the file primitives config and trust use) does not load the stores, which import config.
"""
from __future__ import annotations

from rose import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.store.layers import Layers, find_project_root, global_root
    from rose.store.store import Store, family_slug

__all__ = ["Layers", "Store", "family_slug", "find_project_root", "global_root"]
_HOME = {"Layers": "layers", "find_project_root": "layers", "global_root": "paths", "Store": "store",
         "family_slug": "store"}


def __getattr__(name: str) -> Any:
    return lazy.export(__name__, _HOME, name, globals())


def __dir__() -> list[str]:
    return __all__
