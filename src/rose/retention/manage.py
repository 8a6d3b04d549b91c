"""What the management commands compute: `rose list`, `rose show`, `rose delete`, `rose clear`, `rose archive`,
`rose restore`. Typed records here; the CLI only parses, calls and prints (rose.render prints them).

Everything is addressed by stable ids, never by row numbers: background learning changes the store between two
commands, so a number that meant one lesson a minute ago may mean another now. Only `delete` and `clear` remove
files, and both say first exactly what they will do (the CLI asks before it does it, unless told --yes).
"""
from __future__ import annotations

import fnmatch
import os
from datetime import datetime
from pathlib import Path

from rose.errors import RoseError
from rose.model import Status, utcnow
from rose.retention import rules
from rose.retention.maintain import Graph, hard_tokens, promote, unit_of
from rose.store import archive as cold_archive
from rose.store.events import EventKind
from rose.typedrecord import NamedTuple, Record, asdict, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.model import Node   # the records load on first use (rose list reads index rows, never a Node)
    from rose.store import Layers, Store
    from rose.store.index import IndexRow

MEMORY_TYPES = ("lesson", "orientation", "experience")


# -- the counts: what `rose list`'s header and `rose status` show ------------------------------------------------
class Bucket(Record):
    """One (scope, memory type) of one store: hot and cold counts and tokens, and the watermarks of its budget."""

    scope: str
    memory_type: str
    hot: int
    hot_tokens: int
    cold: int
    cold_tokens: int
    hard: int
    soft: int

    @property
    def over(self) -> bool:
        return self.hot_tokens > self.hard


def buckets(stores: list[Store]) -> list[Bucket]:
    out = []
    for store in stores:
        seen = {}
        for scope, memory_type, hot, tokens, cold, cold_tokens in store.index.buckets():
            seen[(scope, memory_type)] = (hot, tokens, cold, cold_tokens)
        for memory_type in MEMORY_TYPES:   # every type of the store's own scope, so the watermarks always show
            hot, tokens, cold, cold_tokens = seen.pop((store.scope.value, memory_type), (0, 0, 0, 0))
            marks = rules.watermarks(store.scope.value, memory_type, hard_tokens())
            out.append(Bucket(store.scope.value, memory_type, hot, tokens, cold, cold_tokens, marks.hard, marks.soft))
        for (scope, memory_type), (hot, tokens, cold, cold_tokens) in sorted(seen.items()):  # hand-moved files
            marks = rules.watermarks(scope, memory_type, hard_tokens())
            out.append(Bucket(scope, memory_type, hot, tokens, cold, cold_tokens, marks.hard, marks.soft))
    return out


# -- rose list --------------------------------------------------------------------------------------------------
class Row(Record):
    id: str
    scope: str
    memory_type: str
    status: str
    title: str
    importance: float
    utility: float
    uses: int
    tokens: int
    last_used: str
    cold: bool
    path: str


class Listing(Record):
    buckets: list[Bucket]
    rows: list[Row]
    filter: str = ""
    cold: bool = False          # the rows are the cold archive's (--cold), else the hot store's
    matched: int | None = None  # a bounded listing's count of all matching rows (its rows are only the first)

    def count(self) -> int:
        return len(self.rows) if self.matched is None else self.matched

    def totals(self) -> dict[str, int]:
        b = self.buckets
        return {"hot": sum(x.hot for x in b), "hot_tokens": sum(x.hot_tokens for x in b),
                "cold": sum(x.cold for x in b), "cold_tokens": sum(x.cold_tokens for x in b)}

    def scopes(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for x in self.buckets:
            s = out.setdefault(x.scope, {"hot": 0, "cold": 0})
            s["hot"] += x.hot
            s["cold"] += x.cold
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"totals": self.totals(), "scopes": self.scopes(), "buckets": [asdict(x) for x in self.buckets],
                "filter": self.filter, "cold": self.cold, "rows": [asdict(r) for r in self.rows]}


class _ListRow(NamedTuple):
    """What `rose list` reads of a record's index row (not the whole IndexRow: 50,000 of them, at scale)."""

    id: str
    family: str
    title: str
    tags: list[str]
    status: str
    memory_type: str
    importance: float
    confidence: float
    use_count: int
    tokens: int
    created: str
    last_used: str
    path: str
    cold: bool
    cold_from: str


def _matches(pattern: str, row: IndexRow | _ListRow) -> bool:
    fields = [row.id, row.title, row.family, *row.tags]
    pat = pattern.lower()
    if any(ch in pat for ch in "*?["):
        return any(fnmatch.fnmatchcase(f.lower(), pat) for f in fields)
    return any(pat in f.lower() for f in fields)


def listing(layers: Layers, pattern: str = "", *, scope: str | None = None, memory_type: str | None = None,
            cold: bool = False, now: datetime | None = None, limit: int | None = None) -> Listing:
    """The project's records, then the global ones, each by importance (then utility); a legacy `archived` file
    outside the archive lists as cold. The header's counts are the whole stores', whatever the filter."""
    from rose.store.index import COLD_SQL   # loaded by the sync just below in any case

    stores = layers.require_any()
    now = now or utcnow()
    for store in stores:
        store.sync()
    rows: list[Row] = []
    bounded = limit is not None and not pattern
    matched = 0
    for store in stores:
        if scope and store.scope.value != scope:
            continue
        part = []
        root = str(store.root)
        where, params = "", []
        if limit is not None and bounded:
            # bounded: count in SQL, read only the rows that can be among the first (importance rounds to 3
            # places before the sort, so a margin of 0.001 under the last one's keeps every tie; 0.002 leaves
            # room for the float arithmetic). A FILTER is matched in Python (Unicode case folding, globs over
            # the tags), which SQL cannot say the same way: with one, every row is read, as with --all.
            where = f"{COLD_SQL} = ?" + (" AND memory_type = ?" if memory_type else "")
            params = [int(cold), *([memory_type] if memory_type else [])]
            count = store.index.count_where(where, params)
            matched += count
            wanted = max(0, limit - len(rows))
            if wanted == 0:
                continue
            floor = store.index.importance_at(where, params, wanted - 1) if count > wanted else None
            if floor is not None:
                where += " AND importance >= ?"
                params.append(floor - 0.002)
        for r in map(_ListRow._make, store.index.select(_ListRow._fields, where, params)):
            is_cold = r.cold or r.status == Status.ARCHIVED.value
            if is_cold != cold or (memory_type and r.memory_type != memory_type):
                continue
            if pattern and not _matches(pattern, r):
                continue
            part.append(Row(r.id, store.scope.value, r.memory_type, r.cold_from if r.cold else r.status, r.title,
                            round(r.importance, 3), round(Graph.utility(r, now), 3), r.use_count, r.tokens,
                            r.last_used, is_cold, os.path.join(root, r.path)))
        part.sort(key=lambda x: (-x.importance, -x.utility, x.id))
        rows += part[:max(0, limit - len(rows))] if limit is not None and bounded else part
    return Listing(buckets(stores), rows, pattern, cold, matched if bounded else None)


# -- rose show --------------------------------------------------------------------------------------------------
class Shown(Record):
    """One record whole, with its provenance and everything retention knows about it."""

    node: Node
    scope: str
    path: str
    cold: bool
    importance: float          # what retention and recall read (moved by evidence)
    minted_importance: float   # what the file says it was minted with
    utility: float
    uses: int
    last_used: str
    age_days: float
    bucket: Bucket | None
    archived: dict[str, Any] | None = None   # the catalog's entry: when, why, where
    children: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.node.to_dict(), "body": self.node.body, "scope": self.scope, "path": self.path,
                "cold": self.cold, "status": self.node.status.value,
                "returns_to": self.node.archived_from.value if self.cold and self.node.archived_from else None,
                "retention": {"importance": self.importance, "minted_importance": self.minted_importance,
                              "utility": round(self.utility, 4), "uses": self.uses, "last_used": self.last_used,
                              "age_days": round(self.age_days, 1), "bucket": asdict(self.bucket) if self.bucket
                              else None, "archived": self.archived}}


def show(layers: Layers, node_id: str, now: datetime | None = None) -> Shown:
    layers.require_any()
    store, node = layers.locate(node_id)
    now = now or utcnow()
    importance = rules.effective_importance(node.importance, node.learned_importance)
    age = rules.age_days(node.stats.last_used, node.created, now)
    rel = store.index.path_of(node.id) or ""
    cold = cold_archive.is_cold_path(rel)
    entry = cold_archive.read(store.catalog_path).get(node.id) if cold else None
    bucket = next((b for b in buckets([store]) if (b.scope, b.memory_type) == (store.scope.value,
                                                                              node.memory_type.value)), None)
    return Shown(node, store.scope.value, str(store.root / rel), cold, importance, node.importance,
                 rules.utility(importance, node.confidence, node.use_count, age), node.use_count,
                 node.stats.last_used, age, bucket, asdict(entry) if entry else None, list(node.derived_from))


# -- rose archive / rose restore ----------------------------------------------------------------------------------
class Moved(Record):
    id: str
    scope: str
    moved: list[str]      # the record and the detail that moved with it
    to: str               # "archive" | "hot"
    because: str


def archive(layers: Layers, node_id: str) -> Moved:
    layers.require_any()
    store, node = layers.locate(node_id)
    if node.status is Status.ARCHIVED:
        raise RoseError(f"{node_id} is in the archive already (`rose restore {node_id}` brings it back)")
    because = "archived by you (`rose archive`)"
    moved = store.archive(unit_of(store, node_id), because)
    store.event(EventKind.RETENTION, action="archive", rule="by hand", ids=moved)
    return Moved(node_id, store.scope.value, moved, "archive", because)


def restore(layers: Layers, node_id: str) -> Moved:
    layers.require_any()
    store, node = layers.locate(node_id)
    if node.status is not Status.ARCHIVED:
        raise RoseError(f"{node_id} is not in the archive")
    because = "restored by you (`rose restore`)"
    moved = promote(store, node_id, because) or store.restore([node_id], because)
    store.event(EventKind.RETENTION, action="restore", rule="by hand", ids=moved)
    return Moved(node_id, store.scope.value, moved, "hot", because)


# -- rose delete --------------------------------------------------------------------------------------------------
class DeletePlan(Record):
    """What `rose delete ID` will do, said before it is done."""

    id: str
    title: str
    scope: str
    path: str
    cold: bool
    parents: list[str]        # they stop deriving from it (their `derived_from` loses the id)
    children: list[str]       # they stop pointing up to it (their `parents` lose the id)
    served_again: list[str]   # children it superseded that nothing else supersedes: served again (active)
    holders: list[str]        # lessons above it whose dropped claims name it as their holder: the claims stay
    disputes: list[str]       # contradictions it was part of: settled for the other side

    def effects(self) -> list[str]:
        out = [f"removes {self.path} for good (its usage lines stay in usage.jsonl; the id is never reused)"]
        if self.parents:
            out.append(f"its {len(self.parents)} parent(s) stop deriving from it: {', '.join(self.parents)}")
        if self.children:
            out.append(f"its {len(self.children)} child(ren) lose it as a parent: {', '.join(self.children)}")
        if self.served_again:
            out.append(f"{', '.join(self.served_again)}: compressed by it and by nothing else, served again "
                       "(their detail is no longer behind a shorter form)")
        if self.holders:
            out.append(f"{', '.join(self.holders)}: their dropped claims name it as holder; the claims' text "
                       "stays (descent can still re-attach it, not jump to the deleted file)")
        if self.disputes:
            out.append(f"its contradiction with {', '.join(self.disputes)} is settled for them")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "effects": self.effects()}


def plan_delete(layers: Layers, node_id: str) -> DeletePlan:
    layers.require_any()
    store, node = layers.locate(node_id)
    store.sync()
    graph = Graph.of(store)
    served_again = []
    for child in node.derived_from:
        r = graph.rows.get(child)
        if r is None:
            continue
        status = r.cold_from if r.cold else r.status
        others = [p for p in r.parents if p != node_id and p in graph.rows
                  and (graph.rows[p].cold_from if graph.rows[p].cold else graph.rows[p].status)
                  in ("active", "disputed", "superseded") and graph.rows[p].level > r.level]
        if status == Status.SUPERSEDED.value and not others:
            served_again.append(child)
    holders = []
    seen, frontier = {node_id}, list(node.parents)
    while frontier:
        nxt = []
        for pid in frontier:
            if pid in seen or not store.has(pid):
                continue
            seen.add(pid)
            parent = store.get(pid)
            if any(c.holder == node_id for c in parent.dropped):
                holders.append(pid)
            nxt += parent.parents
        frontier = nxt
    rel = store.index.path_of(node_id) or ""
    return DeletePlan(node.id, node.title, store.scope.value, str(store.root / rel), cold_archive.is_cold_path(rel),
                      [p for p in node.parents if store.has(p)], [c for c in node.derived_from if store.has(c)],
                      served_again, holders, list(node.disputes))


def delete(layers: Layers, plan: DeletePlan) -> DeletePlan:
    """Carry out a plan: the neighbours first (so a kill between leaves the record, never a dangling edge), then
    the file."""
    store, _node = layers.locate(plan.id)
    gone = plan.id

    def unlink_parent(n: Node) -> None:
        n.derived_from = [c for c in n.derived_from if c != gone]

    def unlink_child(n: Node) -> None:
        n.parents = [p for p in n.parents if p != gone]
        if n.id in plan.served_again:
            if n.status is Status.SUPERSEDED:
                n.status = Status.ACTIVE
            elif n.status is Status.ARCHIVED and n.archived_from is Status.SUPERSEDED:
                n.archived_from = Status.ACTIVE

    def release(n: Node) -> None:
        n.disputes = [d for d in n.disputes if d != gone]
        if not n.disputes:
            n.conflict = ""
            if n.status is Status.DISPUTED:
                n.status = Status.ACTIVE
            elif n.status is Status.ARCHIVED and n.archived_from is Status.DISPUTED:
                n.archived_from = Status.ACTIVE

    for ids, change in ((plan.parents, unlink_parent), (plan.children, unlink_child), (plan.disputes, release)):
        for other in ids:
            for s in layers.stores():
                if s.has(other):
                    s.update(other, change)
                    break
    path = store.delete(plan.id)
    store.event(EventKind.RETENTION, action="delete", id=plan.id, file=str(path), effects=plan.effects())
    return plan


# -- rose clear ---------------------------------------------------------------------------------------------------
class ClearPlan(Record):
    scope: str
    root: str
    hot: int
    cold: int
    files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "root": self.root, "hot": self.hot, "cold": self.cold, "files": len(self.files)}


def plan_clear(layers: Layers, scope: str = "project") -> ClearPlan:
    stores = {s.scope.value: s for s in layers.require_any()}
    store = stores.get(scope)
    if store is None:
        raise RoseError(f"there is no {scope} store here to clear")
    store.sync()
    files = sorted(str(p) for folder in store.record_dirs if folder.is_dir() for p in folder.rglob("*.md"))
    hot = sum(1 for f in files if Path(f).is_relative_to(store.nodes_dir))
    return ClearPlan(scope, str(store.root), hot, len(files) - hot, files)


def clear(layers: Layers, plan: ClearPlan) -> int:
    """Remove every hot and cold record of the store (and the archive's catalog). Episodes, settings and the usage
    log stay. Returns the files removed."""
    store = next(s for s in layers.require_any() if s.scope.value == plan.scope)
    removed = 0
    with store.lock():
        for name in plan.files:
            try:
                Path(name).unlink()
                removed += 1
            except FileNotFoundError:
                pass
        try:
            store.catalog_path.unlink()
        except FileNotFoundError:
            pass
    store.rebuild_index()
    store.event(EventKind.RETENTION, action="clear", scope=plan.scope, removed=removed)
    return removed
