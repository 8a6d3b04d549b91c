"""The two stores a session sees: the project's store layered over the global one.

The project's store is the repository's committed `.rose/` (found by walking up from the working directory) or,
in a repository that has none, the user's own store for that repository under the global store:
`~/.rose/projects/<name>-<hash of the repository's root path>/`, created on the first lesson. So rose recalls and
learns in any repository with no per-repository step, a repository's own rules never leak into the global store,
and `rose init` later moves them into a committable `.rose/`. The repository is the nearest folder holding `.git`
(else the working directory itself).

Both stores are read. New lessons go to the project store unless they are global; an edit goes back to whichever
store holds the lesson, so a global lesson is never forked into a local copy that drifts.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from rose.text import load_json
from rose import config
from rose.errors import NodeNotFound, RoseError, StoreNotFound
from rose.model import Scope
# where the stores live is its own module, below config and trust, which need it too (re-exported here)
from rose.store.paths import GLOBAL_ENV as GLOBAL_ENV
from rose.store.paths import CONFIG_NAME, STORE_DIR, global_root, own_store_problem
from rose.store.index import damaged
from rose.store.store import Store
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rose.records import Node

PERSONAL_DIR = "projects"   # under the global store: one store per repository without its own .rose/


def repository_root(start: Path) -> Path:
    """The repository a folder belongs to: the nearest folder at or above it holding `.git`, else the folder."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def personal_root(repository: Path) -> Path:
    """Where the user's own store for a repository without a `.rose/` lives (keyed by the repository's path)."""
    import hashlib
    import re

    real = os.path.realpath(repository)
    name = re.sub(r"[^a-z0-9_-]+", "-", os.path.basename(real).lower()).strip("-")[:40] or "root"
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return global_root() / PERSONAL_DIR / f"{name}-{digest}"


OFF_FILE = "off.json"       # under the global store: repositories the user switched rose off in (`rose off`)
OFF_MARKER = ".rose-off"    # or a file of this name at a repository's root (a team can commit it)


def switched_off(repository: Path) -> str | None:
    """Why rose is off in this repository (`rose off`, or a .rose-off file at its root), or None when it is on."""

    if (repository / OFF_MARKER).exists():
        return f"{repository / OFF_MARKER} exists"
    from rose.store import reader

    try:   # rose writes it 0600: one another user made or could rewrite is not the user's word
        data = load_json(reader.read_private(global_root() / OFF_FILE, reader.RECORD))
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(data, dict) and os.path.realpath(repository) in data.get("off", []):
        return "switched off with `rose off`"
    return None


def switch(repository: Path, on: bool) -> bool:
    """`rose on` / `rose off` for a repository; returns whether anything changed."""
    import json

    from rose.store.atomic import file_lock, write_text_atomic

    path = global_root() / OFF_FILE
    key = os.path.realpath(repository)
    with file_lock(global_root() / "locks" / "off.lock"):
        try:
            data = load_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        off = [p for p in (data.get("off", []) if isinstance(data, dict) else []) if isinstance(p, str)]
        changed = (key in off) == on
        off = [p for p in off if p != key] + ([] if on else [key])
        if changed:
            write_text_atomic(path, json.dumps({"off": sorted(off)}, indent=1) + "\n", mode=0o600)
    return changed


def find_project_root(start: Path) -> Path | None:
    """The nearest `.rose/` at or above `start`, never the global store itself. A repository's store that holds a
    symlink where rose reads or writes, or that another user owns, raises UnsafeStore (`check_repository_store`)."""
    glob = global_root()
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / STORE_DIR
        if candidate.is_dir() and candidate.resolve() != glob:
            check_repository_store(candidate)
            return candidate
    return None


def check_repository_store(root: Path) -> None:
    """Raise UnsafeStore unless a repository's store at `root` may be read and written as this user's: one another
    user owns (the walk up passes folders others can write: `/tmp/.rose`; root's is trusted, as for the user's own
    store), or one holding a link where rose writes (`link_in_store`), is not. Asked again whenever such a store is
    opened, not only when it was first found: a pull can bring a link."""
    from rose.errors import UnsafeStore

    owner = os.lstat(root).st_uid
    if owner not in (os.geteuid(), 0):
        raise UnsafeStore(root, f"belongs to uid {owner}, not to you (uid {os.geteuid()}): another user's store "
                                "is never read or written as yours (`chown` it if it is yours)")
    link = link_in_store(root)
    if link is not None:
        raise UnsafeStore(link)


def sound_store(root: Path) -> bool:
    """May a store rose recorded earlier (another project the learner worked in) be opened and written now? The
    user's own stores (under the global one) are theirs; a repository's is checked as discovery checks it
    (`check_repository_store`), since the repository may have changed since."""
    from rose.errors import UnsafeStore

    if root.resolve().is_relative_to(global_root()):
        return True
    try:
        check_repository_store(root)
    except (UnsafeStore, OSError):
        return False
    return True


def link_in_store(root: Path) -> Path | None:
    """The first symlink among a committed store's own entries and the folders in nodes/ and archive/, or None.

    A repository is untrusted: git commits symlinks, and one at `.rose/`, `.rose/archive` or `.rose/nodes/<family>`
    would make rose's atomic writes, moves and new folders land wherever it points (a user's own folders). A few
    lstat calls from one directory read each, on every prompt: cheap."""
    if root.is_symlink():
        return root
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_symlink():
                return Path(entry.path)
            if entry.name in ("nodes", "archive") and entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as inner:
                    for sub in inner:
                        if sub.is_symlink():
                            return Path(sub.path)
    return None


def _move_lessons(source: Store, target: Store) -> int:
    """Move the committable part of one store into another, file by file (written, then removed)."""
    import shutil

    from rose.store.atomic import write_bytes_atomic

    moved, kept = 0, 0
    moved_ids: set[str] = set()
    for sub in ("nodes", "archive", "episodes", "routing"):   # the cold archive and its catalog too
        folder = source.root / sub
        if not folder.is_dir():
            continue
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
            dest = target.root / path.relative_to(source.root)
            data = path.read_bytes()
            if path == source.catalog_path and dest.exists():   # append-only: the two catalogs are unioned
                _union_lines(target, dest, data)
                path.unlink()
                continue
            if dest.exists() and _bytes_or_none(dest, target.root) != data:
                kept += 1          # a different file of that name is there already: this one stays where it is
                continue
            if not dest.exists():
                write_bytes_atomic(dest, data)
                moved += 1
            if sub in ("nodes", "archive") and path.suffix == ".md":
                moved_ids.add(path.stem)
            path.unlink()
    _move_usage(source, target, moved_ids)
    kept += _move_settings(source, target)
    _move_queue(source, target)
    if not kept:
        shutil.rmtree(source.root, ignore_errors=True)   # what is left is machine-local and derived
    return moved


def _bytes_or_none(path: Path, root: Path) -> bytes | None:
    """A file of the target store as rose.store.reader reads it; None for one it refuses (a FIFO, a device, a link
    out of the store, too big), which then counts as a different file in the way."""
    from rose.errors import UnsafeFile
    from rose.store import reader

    try:
        return reader.read_bytes(path, reader.LOG, within=root)
    except UnsafeFile:
        return None


def _move_settings(source: Store, target: Store) -> int:
    """The user's settings for the repository (`rose config set` in its personal store: recall or learning off,
    ...) go with its lessons and stay in force: written where the new store had none of its own, and pinned (`rose
    trust`), since they are the user's own choice. Returns 1 when the repository has settings of its own already:
    then the personal file stays where it is (and with it the personal store), so nothing is lost."""
    from rose import trust
    from rose.store.atomic import write_bytes_atomic
    from rose.store.store import FRESH_CONFIG

    fresh = FRESH_CONFIG.encode("utf-8")
    try:
        mine = source.config_path.read_bytes()
    except FileNotFoundError:
        return 0
    if mine == fresh:
        return 0
    from rose.errors import UnsafeFile
    from rose.store import reader

    try:
        theirs: bytes | None = reader.read_bytes(target.config_path, reader.SMALL, within=target.root)
    except FileNotFoundError:
        theirs = None
    except UnsafeFile:
        return 1   # something rose does not read is there (a FIFO, a link out): the personal file stays
    if theirs not in (None, fresh, mine):
        return 1
    write_bytes_atomic(target.config_path, mine)
    trust.pin(target.config_path)
    source.config_path.unlink()
    return 0


def _move_queue(source: Store, target: Store) -> None:
    """Sessions waiting to be learned from (queue/, and queue/dead/ set aside) go with the lessons: a job names a
    session and its transcript, not a store, and the learner finds it in the new store's queue."""
    from rose.store.atomic import write_bytes_atomic

    if not source.queue_dir.is_dir():
        return
    for path in sorted(source.queue_dir.rglob("*.json")):
        dest = target.queue_dir / path.relative_to(source.queue_dir)
        if not dest.exists():
            write_bytes_atomic(dest, path.read_bytes())
        path.unlink()


def _union_lines(target: Store, dest: Path, data: bytes) -> None:
    """Append to an append-only log of the target the lines of `data` it lacks (what git's union merge does)."""
    from rose.store.atomic import write_bytes_atomic

    from rose.store import reader

    with target.lock():
        have = reader.read_bytes(dest, reader.LOG, within=target.root)   # UnsafeFile for a FIFO: never waited on
        known = set(have.splitlines())
        extra = [line for line in data.splitlines() if line.strip() and line not in known]
        if extra:
            head = have if not have or have.endswith(b"\n") else have + b"\n"
            write_bytes_atomic(dest, head + b"\n".join(extra) + b"\n")


def _move_usage(source: Store, target: Store, ids: set[str]) -> None:
    """The moved lessons' usage records go with them (rids kept, so moving twice counts once)."""
    from rose.store import usage

    try:
        data = source.usage_path.read_bytes()
    except FileNotFoundError:
        return
    records = [r for r in usage.parse_lines(data, final=True)[0] if r["id"] in ids]
    if records:
        with target.lock():
            target._append_usage(records)


def _is_store(root: Path) -> bool:
    """Is the user's own folder a store yet (lessons or settings in it)? It can hold nothing but the machine-local
    state of repository stores (paths.local_root), which makes no global store."""
    return (root / "nodes").is_dir() or (root / CONFIG_NAME).is_file()


def _own_or_pinned(path: Path):
    def check() -> bool:
        if path.resolve().is_relative_to(global_root()):
            return True
        from rose import trust

        return trust.is_trusted(path)
    return check


class Layers(Record):
    """The stores a folder sees: its project store (or the user's own for it) over the global one."""
    project: Store | None
    global_: Store | None
    cwd: Path
    personal: bool = False   # the project store is the user's own one for a repository without a .rose/
    refused: str | None = None   # why the user's own store is not used (paths.own_store_problem), in one line

    @classmethod
    def discover(cls, cwd: Path | None = None) -> Layers:
        from rose import environment

        cwd = (cwd or Path(environment.cwd())).resolve()
        project_root = find_project_root(cwd)
        personal = False
        glob = global_root()
        refused = own_store_problem(glob)   # another user's, or open to them: neither its lessons nor its settings
        if project_root is not None and refused is not None:
            project_root = None   # its machine-local state (index, queue, ...) is kept in the store refused
        if project_root is None and refused is None:
            mine = personal_root(repository_root(cwd))
            if (mine / "nodes").is_dir():
                refused = own_store_problem(mine)   # the user's own store for this repository: the same rule
                if refused is None:
                    project_root, personal = mine, True
        return cls(
            project=Store(project_root, Scope.PROJECT) if project_root else None,
            global_=Store(glob, Scope.GLOBAL) if _is_store(glob) and refused is None else None,
            cwd=cwd,
            personal=personal,
            refused=refused,
        )

    @classmethod
    def users_own(cls, cwd: Path) -> Layers:
        """The user's global store alone, for a folder whose repository store is refused (UnsafeStore): a
        repository's prank costs its own lessons, never the user's."""
        glob = global_root()
        refused = own_store_problem(glob)
        return cls(project=None, global_=Store(glob, Scope.GLOBAL) if _is_store(glob) and refused is None else None,
                   cwd=cwd.resolve(), refused=refused)

    def project_root(self) -> Path:
        """The repository the project store is about (its folder, not the store's)."""
        if self.project is not None and not self.personal:
            return self.project.root.parent
        return repository_root(self.cwd)

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
        if self.refused is not None and (scope is Scope.GLOBAL or self.project is None):
            raise RoseError(self.refused)
        if scope is Scope.GLOBAL:
            if self.global_ is None:
                self.global_ = Store.create(global_root(), Scope.GLOBAL)
            return self.global_
        if self.project is None:
            # a repository without a .rose/: the user's own store for it, under the global store
            if self.global_ is None:
                self.global_ = Store.create(global_root(), Scope.GLOBAL)
            self.project = Store.create(personal_root(repository_root(self.cwd)), Scope.PROJECT)
            self.personal = True
        return self.project

    def owner(self) -> Store:
        """The store a session's own records live in (its scratch, its queued learning, its episodes): the project's,
        created for a repository that has none yet (the user's own store for it). One place for both the hooks and
        the learner, so what recall served is what attribution reads."""
        return self.writable(Scope.PROJECT)

    def init_project(self) -> tuple[Store, int]:
        """A committable `.rose/` for this repository (at its root). Lessons the user's own store held for it move
        in (each file written there before it is removed here: nothing is lost), with the user's settings for it
        and the sessions waiting to be learned from. Refused in the home folder, whose `.rose/` is the global
        store. Returns (store, files moved)."""
        if self.project is not None and not self.personal:
            Store.create(self.project.root, Scope.PROJECT)
            return self.project, 0
        root = repository_root(self.cwd)
        if os.path.realpath(root / STORE_DIR) == os.path.realpath(global_root()):
            raise RoseError(f"{root} holds your own global store ({global_root()}), not a repository's: run "
                            "`rose init` in a repository (your global store needs no init)")
        target = Store.create(root / STORE_DIR, Scope.PROJECT)
        moved = 0
        if self.project is not None and self.personal:
            moved = _move_lessons(self.project, target)
            self.project.close()
        self.project, self.personal = target, False
        return target, moved

    def sync(self) -> None:
        for store in self.stores():
            store.sync()

    def locate(self, node_id: str) -> tuple[Store, Node]:
        found = self._holder(node_id)
        if found is None:   # a file the index has not met yet (a pull, a lesson written by hand): catch up, once
            for store in self.stores():
                store.sync()
            found = self._holder(node_id)
        if found is None:
            raise NodeNotFound(node_id)
        return found, found.get(node_id)

    def _holder(self, node_id: str) -> Store | None:
        return next((store for store in self.stores() if store.has(node_id)), None)

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
        return config.load(list(self.config_sources()), cache=first.cache_dir / "settings.json" if first else None)

    def heal(self, exc: BaseException) -> list[Store]:
        """After an error from SQLite: when it says a database is damaged, discard the index of each store found
        damaged (derived data: rebuilt from the lesson files) and return those stores; the caller may try again.
        Damage no check can place discards every index here: rebuilding a sound one loses nothing."""
        if not damaged(exc):
            return []
        healed = [store for store in self.stores() if store.heal_index()]
        return healed or [store for store in self.stores() if store.heal_index(unplaced=True)]

    def healed_after(self, exc: BaseException) -> str | None:
        """heal(exc), said for a person: what was discarded, or None (not damage, or healing failed too: the first
        error is the one to report)."""
        try:
            healed = self.heal(exc)
        except Exception:  # noqa: BLE001 - healing is a second try: its own failure leaves the first error to report
            return None
        if not healed:
            return None
        where = ", ".join(str(store.index_db_path) for store in healed)
        return (f"the index was damaged ({exc}): {where} was discarded; it is derived from the lesson files, which "
                "are not touched, and the next command builds it again. Run the command again.")

    def close(self) -> None:
        for store in self.stores():
            store.close()
