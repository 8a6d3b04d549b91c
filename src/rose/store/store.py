"""One store on disk (a project's `.rose/` or the global `~/.rose`): the files, and the index derived from them.

    .rose/
      config.yaml          settings overrides            committed
      nodes/<family>/*.md  the lessons (the DAG)         committed
      episodes/*.json      the replay corpus             committed
      routing/*.yaml       selection rules               committed
      index.md             one line per lesson, regenerated on every write (what a selector greps)
      index.db             SQLite FTS index, derived     machine-local
      sessions/*.json      per-session scratch           machine-local
      events.jsonl         telemetry                     machine-local
      judge-cache.json     cached judgements             machine-local
      locks/ logs/ queue/ cache/  machine-local

Every write is atomic and redacted; every read-modify-write holds the store lock.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rose.errors import CorruptFile, NodeNotFound
from rose.model import Episode, Node, Scope, new_episode_id, new_node_id, valid_episode_id, valid_node_id
from rose.store import events
from rose.store.atomic import LOCK_TIMEOUT_S, file_lock, write_text_atomic
from rose.store.index import Index, IndexRow, SyncReport

GITIGNORE = """\
# Written by rose. Lessons (nodes/), episodes/, routing/ and config.yaml are worth committing;
# everything below is machine-local or derived and is rebuilt on demand.
index.md
index.db
index.db-*
sessions/
events.jsonl
events.1.jsonl
judge-cache.json
locks/
logs/
queue/
cache/
*.tmp
"""

_FAMILY_CHARS = re.compile(r"[^a-z0-9_-]+")


def family_slug(name: str) -> str:
    slug = _FAMILY_CHARS.sub("-", name.strip().lower()).strip("-")
    return slug[:48] or "general"


def redact_node(node: Node) -> Node:
    """Redact every field of a node that can carry text, in place: what a folder is named after (family) and what
    index.md lists (tags) included. Returns the node."""
    from rose.redact import redact, redact_data

    node.family = redact(node.family)
    node.title = redact(node.title)
    node.gist = redact(node.gist)
    node.body = redact(node.body)
    node.conflict = redact(node.conflict)
    node.tags = [redact(t) for t in node.tags]
    node.evidence = [redact(e) for e in node.evidence]
    node.preserve = [redact(p) for p in node.preserve]
    node.gaps = [redact(g) for g in node.gaps]
    if node.spans is not None:
        node.spans = [redact(x) for x in node.spans]
    for claim in node.dropped:
        claim.claim = redact(claim.claim)
    for trial in node.trials:
        trial.attached = [redact(a) for a in trial.attached]
        trial.claims = [redact(c) for c in trial.claims]
        trial.queue = [[redact(q) for q in entry] for entry in trial.queue]
    node.extra = redact_data(node.extra)
    return node


class Store:
    def __init__(self, root: Path, scope: Scope):
        self.root = root
        self.scope = scope
        self._index: Index | None = None
        self.wait_s = LOCK_TIMEOUT_S   # how long a lock or a busy index is waited for (bounded on the prompt path)

    def bound_waits(self, seconds: float) -> None:
        """Wait at most `seconds` for this store's locks and its index: the prompt hook serves what it can instead
        of waiting behind a learner (LockTimeout / sqlite3.OperationalError reach the caller)."""
        self.wait_s = seconds
        if self._index is not None:
            self._index.set_busy_timeout(seconds)

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r}, {self.scope.value})"

    # -- layout ----------------------------------------------------------------------------------------------
    nodes_dir = property(lambda self: self.root / "nodes")
    episodes_dir = property(lambda self: self.root / "episodes")
    sessions_dir = property(lambda self: self.root / "sessions")
    routing_dir = property(lambda self: self.root / "routing")
    logs_dir = property(lambda self: self.root / "logs")
    queue_dir = property(lambda self: self.root / "queue")
    config_path = property(lambda self: self.root / "config.yaml")
    events_path = property(lambda self: self.root / "events.jsonl")
    judge_cache_path = property(lambda self: self.root / "judge-cache.json")
    index_md_path = property(lambda self: self.root / "index.md")
    index_db_path = property(lambda self: self.root / "index.db")
    lock_path = property(lambda self: self.root / "locks" / "store.lock")

    @classmethod
    def create(cls, root: Path, scope: Scope) -> Store:
        """Create the folder layout (idempotent) and return the store."""
        for sub in ("nodes", "episodes", "sessions", "routing", "locks", "logs"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        if not (root / ".gitignore").exists():
            write_text_atomic(root / ".gitignore", GITIGNORE)
        if not (root / "config.yaml").exists():
            write_text_atomic(root / "config.yaml", "# rose settings: `rose config` lists every key.\n")
        store = cls(root, scope)
        if not store.index_md_path.exists():
            with store.lock():
                store._write_index_md()
        return store

    @contextmanager
    def lock(self) -> Iterator[None]:
        with file_lock(self.lock_path, timeout_s=self.wait_s):
            yield

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = Index(self.root, self.index_db_path, busy_timeout_s=self.wait_s)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def node_path(self, node: Node) -> Path:
        return self.nodes_dir / family_slug(node.family) / f"{node.id}.md"

    # -- nodes: reading --------------------------------------------------------------------------------------
    def read_node_file(self, path: Path) -> Node:
        try:
            text = path.read_bytes().decode("utf-8")  # bytes: keep \r\n in bodies exactly as written
        except UnicodeDecodeError:
            raise CorruptFile(path, "not valid UTF-8 text") from None
        from rose.store.frontmatter import parse_node  # PyYAML loads only when a file is actually parsed

        try:
            return parse_node(text)
        except ValueError as exc:
            raise CorruptFile(path, str(exc)) from None

    def _parse_for_index(self, path: Path) -> Node:
        """A file for the index: parsed, then redacted, so a secret written into a lesson by hand never reaches
        index.db, index.md or a model (the file itself is the user's and is left as it is)."""
        try:
            return redact_node(self.read_node_file(path))
        except CorruptFile as exc:
            raise ValueError(exc.reason) from None

    def sync(self, quick: bool = False) -> SyncReport:
        """Catch the index up with hand-edited, added or deleted files; regenerate index.md if anything moved.
        `quick` is for the per-prompt path (see Index.sync)."""
        report = self.index.sync(self.nodes_dir, self._parse_for_index, quick=quick)
        if report.changed or not self.index_md_path.exists():
            with self.lock():
                self._write_index_md()
        return report

    def rebuild_index(self) -> SyncReport:
        with self.lock():
            report = self.index.rebuild(self.nodes_dir, self._parse_for_index)
            self._write_index_md()
        return report

    def has(self, node_id: str) -> bool:
        return self.index.has_id(node_id)

    def get(self, node_id: str) -> Node:
        rel = self.index.path_of(node_id)
        if rel is None:
            raise NodeNotFound(node_id)
        path = self.root / rel
        if not path.exists():  # deleted behind our back: let the index catch up, then report
            self.sync()
            raise NodeNotFound(node_id)
        return self.read_node_file(path)

    def rows(self) -> list[IndexRow]:
        return self.index.rows()

    def iter_nodes(self) -> Iterator[Node]:
        """Every readable node (corrupt files are skipped here and reported by sync/problems)."""
        for row in self.index.rows():
            try:
                yield self.read_node_file(self.root / row.path)
            except (CorruptFile, FileNotFoundError):
                continue

    # -- nodes: writing --------------------------------------------------------------------------------------
    def new_id(self, taken: Callable[[str], bool] | None = None) -> str:
        while True:
            node_id = new_node_id()
            if self.has(node_id) or (taken is not None and taken(node_id)):
                continue
            if any(self.nodes_dir.glob(f"*/{node_id}.md")):  # a corrupt file holds that id: never reuse it
                continue
            return node_id

    def save(self, node: Node) -> Node:
        """Write one node atomically (redacted) and update the index and index.md, under the store lock."""
        with self.lock():
            saved = self._save_unlocked(node)
            self._write_index_md()
        return saved

    def save_many(self, nodes: list[Node]) -> None:
        with self.lock():
            for node in nodes:
                self._save_unlocked(node)
            self._write_index_md()

    def _save_unlocked(self, node: Node) -> Node:
        if not valid_node_id(node.id):
            raise ValueError(f"refusing to write a node whose id breaks the id grammar: {node.id[:80]!r}")
        redact_node(node)
        path = self.node_path(node)
        old_rel = self.index.path_of(node.id)
        from rose.store.frontmatter import render_node

        write_text_atomic(path, render_node(node))
        rel = path.relative_to(self.root).as_posix()
        if old_rel and old_rel != rel:  # the family changed: the old file goes, the new one is the node
            try:
                os.unlink(self.root / old_rel)
            except FileNotFoundError:
                pass
            self.index.remove_path(old_rel)
        st = path.stat()
        self.index.upsert(node, rel, st.st_mtime_ns, st.st_size)
        return node

    def update(self, node_id: str, change: Callable[[Node], Any]) -> Node:
        """Read-modify-write one node under the lock, so concurrent updates never lose each other's changes."""
        with self.lock():
            self.index.sync(self.nodes_dir, self._parse_for_index)
            node = self.get(node_id)
            change(node)
            self._save_unlocked(node)
            self._write_index_md()
        return node

    def embed_missing(self, embedder: Any, batch: int = 256) -> int:
        """Give every node without a vector in this embedder's space one (new, hand-edited, or model switched).

        The model runs outside the store lock; a vector is only stored if its node's text is still the text that
        was embedded, so a concurrent edit never ends up with a stale vector.
        """
        from rose.embed import node_text, to_blob
        from rose.store.index import text_hash

        done = 0
        while True:
            rows = self.index.missing_embeddings(embedder.name, limit=batch)
            if not rows:
                return done
            vectors = embedder.embed([node_text(t, tags.split(), g, b) for _i, t, tags, g, b in rows])
            with self.lock():
                stored = self.index.set_embeddings(embedder.name, [
                    (r[0], to_blob(v), text_hash(r[1], r[2], r[3], r[4])) for r, v in zip(rows, vectors)])
            if stored == 0:
                return done  # everything changed under us: the next catch-up takes it from here
            done += stored

    def _write_index_md(self) -> None:
        lines = ["# rose index: id | family | level | title | tags | gist | path", ""]
        for r in self.index.rows():
            gist = r.gist.replace("\n", " ").replace("|", "/")
            title = r.title.replace("\n", " ").replace("|", "/")
            lines.append(f"{r.id} | {r.family} | L{r.level} | {title} | {' '.join(r.tags)} | {gist} | {r.path}")
        write_text_atomic(self.index_md_path, "\n".join(lines) + "\n")

    # -- episodes --------------------------------------------------------------------------------------------
    def new_episode_id(self) -> str:
        while True:
            episode_id = new_episode_id()
            if not (self.episodes_dir / f"{episode_id}.json").exists():
                return episode_id

    def save_episode(self, episode: Episode) -> None:
        from rose.redact import redact_data

        if not valid_episode_id(episode.id):
            raise ValueError(f"refusing to write an episode whose id breaks the id grammar: {episode.id[:80]!r}")
        data = redact_data(episode.to_dict())
        write_text_atomic(self.episodes_dir / f"{episode.id}.json",
                          json.dumps(data, ensure_ascii=False, indent=2) + "\n")

    def get_episode(self, episode_id: str) -> Episode:
        if not valid_episode_id(episode_id):
            raise NodeNotFound(episode_id)
        path = self.episodes_dir / f"{episode_id}.json"
        if not path.exists():
            raise NodeNotFound(episode_id)
        return self._read_episode(path)

    def _read_episode(self, path: Path) -> Episode:
        try:
            return Episode.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError, AttributeError) as exc:
            raise CorruptFile(path, f"not a valid episode: {exc}") from None

    def episodes(self) -> tuple[list[Episode], list[CorruptFile]]:
        found, bad = [], []
        if self.episodes_dir.is_dir():
            for path in sorted(self.episodes_dir.glob("*.json")):
                try:
                    found.append(self._read_episode(path))
                except CorruptFile as exc:
                    bad.append(exc)
        return found, bad

    # -- machine-local state ---------------------------------------------------------------------------------
    def read_json(self, path: Path, default: Any) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return default
        except (ValueError, UnicodeDecodeError):
            return default  # machine-local scratch: a torn or foreign file is replaced, never fatal

    def write_json(self, path: Path, data: Any, *, structural: bool = False) -> None:
        """Write machine-local JSON. `structural` data (ids, counters) carries no user text and skips redaction."""
        if not structural:
            from rose.redact import redact_data

            data = redact_data(data)
        write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=1)
                          + "\n")

    def event(self, kind: events.EventKind, *, structural: bool = False, **data: Any) -> None:
        events.append(self.events_path, kind, structural=structural, lock_timeout_s=self.wait_s, **data)
