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
    from rose import environment

    override = environment.get(GLOBAL_ENV)
    return Path(override).expanduser().resolve() if override else (environment.home() / STORE_DIR).resolve()


def find_project_root(start: Path) -> Path | None:
    """The nearest `.rose/` at or above `start`, never the global store itself."""
    glob = global_root()
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / STORE_DIR
        if candidate.is_dir() and candidate.resolve() != glob:
            return candidate
    return None


def _own_or_pinned(path: Path):
    def check() -> bool:
        if path.resolve().is_relative_to(global_root()):
            return True
        from rose import trust

        return trust.is_trusted(path)
    return check


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

    def config_sources(self) -> list[config.Source]:
        """The global store's file is the user's own; a project's is a repository's unless pinned by `rose trust`
        (or it lives under the user's own global store)."""
        out = []
        if self.global_ is not None:
            out.append(config.Source(self.global_.config_path, own=True))
        if self.project is not None:
            out.append(config.Source(self.project.config_path, own=_own_or_pinned(self.project.config_path)))
        return out

    def set_setting(self, key: str, value: str, scope: Scope) -> tuple[object, Path, str]:
        """`rose config set`: validate, write, and keep the user's own trust intact. Returns (value, file, note).

        A privileged key the user sets in a project file is their own choice, so the file is re-pinned when, before
        the edit, it was trusted or held no privileged key at all (then its privileged keys are exactly the user's).
        Otherwise the key is written but stays ignored until the user reviews the file and runs `rose trust`."""
        from rose import trust

        store = self.writable(scope)
        knob = config._knob(key)
        note = ""
        with store.lock():
            path = store.config_path
            before_ok = scope is Scope.GLOBAL or trust.is_trusted(path) or \
                not config.privileged_keys(config.read_overrides(path))
            stored = config.set_in_file(path, key, value)
            if knob.privileged and scope is Scope.PROJECT:
                if before_ok:
                    trust.pin(path)
                    note = "this file is trusted as it is now (your own edit); any other change lapses that"
                else:
                    note = ("ignored until you trust this file: it holds privileged keys you have not reviewed "
                            "(`rose trust` after reading it)")
        return stored, path, note

    def settings(self) -> config.Settings:
        first = self.stores()[0] if self.stores() else None
        return config.load(self.config_sources(), cache=first.root / "cache" / "settings.json" if first else None)

    def close(self) -> None:
        for store in self.stores():
            store.close()
