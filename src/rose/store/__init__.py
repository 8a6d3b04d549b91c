"""Storage: files are the truth (nodes, episodes, routing), the SQLite index is derived, every write is atomic."""
from rose.store.layers import Layers, find_project_root, global_root
from rose.store.store import Store, family_slug

__all__ = ["Layers", "Store", "family_slug", "find_project_root", "global_root"]
