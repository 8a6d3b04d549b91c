"""The two stores a session sees: the project's `.rose/` (found by walking up) layered over the global one.

Both are read. New lessons go to the project store unless they are global; an edit goes back to whichever store
holds the lesson, so a global lesson is never forked into a local copy that drifts.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rose import config
from rose.errors import NodeNotFound, StoreNotFound
from rose.model import Node, Scope
from rose.store.store import Store

STORE_DIR = ".rose"
GLOBAL_ENV = "ROSE_HOME"  # overrides where the global store lives (default ~/.rose)


def global_root() -> Path:
    override = os.environ.get(GLOBAL_ENV)
    return Path(override).expanduser().resolve() if override else (Path.home() / STORE_DIR).resolve()


def find_project_root(start: Path) -> Path | None:
    """The nearest `.rose/` at or above `start`, never the global store itself."""
    glob = global_root()
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / STORE_DIR
        if candidate.is_dir() and candidate.resolve() != glob:
            return candidate
    return None


@dataclass
class Layers:
    project: Store | None
    global_: Store | None
    cwd: Path

    @classmethod
    def discover(cls, cwd: Path | None = None) -> Layers:
        cwd = (cwd or Path.cwd()).resolve()
        project_root = find_project_root(cwd)
        glob = global_root()
        return cls(
            project=Store(project_root, Scope.PROJECT) if project_root else None,
            global_=Store(glob, Scope.GLOBAL) if glob.is_dir() else None,
            cwd=cwd,
        )

    def stores(self) -> list[Store]:
        return [s for s in (self.project, self.global_) if s is not None]

    def __iter__(self) -> Iterator[Store]:
        return iter(self.stores())

    @property
    def empty(self) -> bool:
        return not self.stores()

    def require_any(self) -> list[Store]:
        if self.empty:
            raise StoreNotFound(self.cwd)
        return self.stores()

    def writable(self, scope: Scope) -> Store:
        """The store a new lesson of this scope goes to (the global one is created on first use)."""
        if scope is Scope.GLOBAL:
            if self.global_ is None:
                self.global_ = Store.create(global_root(), Scope.GLOBAL)
            return self.global_
        if self.project is None:
            raise StoreNotFound(self.cwd)
        return self.project

    def init_project(self) -> Store:
        if self.project is None:
            self.project = Store.create(self.cwd / STORE_DIR, Scope.PROJECT)
        else:
            Store.create(self.project.root, Scope.PROJECT)
        return self.project

    def sync(self) -> None:
        for store in self.stores():
            store.sync()

    def locate(self, node_id: str) -> tuple[Store, Node]:
        for store in self.stores():
            if store.has(node_id):
                return store, store.get(node_id)
        raise NodeNotFound(node_id)

    def id_taken(self, node_id: str) -> bool:
        return any(s.has(node_id) for s in self.stores())

    def config_paths(self) -> list[Path]:
        return [s.config_path for s in (self.global_, self.project) if s is not None]

    def settings(self) -> config.Settings:
        first = self.stores()[0] if self.stores() else None
        return config.load(self.config_paths(), cache=first.root / "cache" / "settings.json" if first else None)

    def close(self) -> None:
        for store in self.stores():
            store.close()
