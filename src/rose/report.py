"""What `rose status` and `rose tree` show: computed here as typed records, rendered by the CLI."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from rose.store import Layers, Store
from rose.store import events as event_log
from rose.store.index import IndexRow

STAGE_WINDOW_DAYS = 7


@dataclass
class StoreSummary:
    scope: str
    root: str
    lessons: int
    tokens: int
    problems: list[tuple[str, str]]


@dataclass
class Precision:
    served: int = 0
    used: int = 0

    @property
    def value(self) -> float | None:
        return self.used / self.served if self.served else None


@dataclass
class StageCost:
    calls: int = 0
    cached: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    ms: int = 0


@dataclass
class CompressionSummary:
    """Compression and descent at a glance: held-out evaluation, demotions, rescues, descents in progress, gaps."""

    compressed: int = 0        # lessons made by compression (any status)
    merged: int = 0            # shared parents made by merge
    heldout_passed: int = 0
    heldout_total: int = 0
    evaluated: int = 0         # nodes with a held-out measurement
    demoted: int = 0
    sticky: int = 0            # sticky patches on servable lessons (dropped claims that rescued before)
    rescues: int = 0           # rescues descent has credited (events: trials and sticky patches)
    repaired: int = 0          # claims folded back into a body after rescuing often enough (events)
    open_trials: int = 0       # descents waiting for the next outcome
    gaps: int = 0              # failures even level 0 could not explain

    @property
    def heldout_rate(self) -> float | None:
        return self.heldout_passed / self.heldout_total if self.heldout_total else None


@dataclass
class StatusReport:
    stores: list[StoreSummary]
    families: dict[str, int]
    levels: dict[int, int]
    statuses: dict[str, int]
    memory_types: dict[str, int]
    tokens: int
    episodes: int
    precision: Precision
    precision_by_family: dict[str, Precision]
    stages: dict[str, StageCost] = field(default_factory=dict)
    compression: CompressionSummary = field(default_factory=CompressionSummary)
    retention: list[Any] = field(default_factory=list)   # rose.retention.manage.Bucket: hot / cold and watermarks
    routing: dict[str, Any] = field(default_factory=dict)   # selection rules over lessons (rose.routing.growth)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["compression"]["heldout_rate"] = self.compression.heldout_rate
        data["precision"] = {**data["precision"], "value": self.precision.value}
        data["precision_by_family"] = {k: {**asdict(v), "value": v.value}
                                       for k, v in self.precision_by_family.items()}
        data["levels"] = {str(k): v for k, v in self.levels.items()}
        data["stores"] = [{**asdict(s), "problems": [{"path": p, "reason": r} for p, r in s.problems]}
                          for s in self.stores]
        return data


def status(layers: Layers) -> StatusReport:
    stores = layers.require_any()
    summaries = []
    counts: dict[str, Counter] = {c: Counter() for c in ("family", "level", "status", "memory_type")}
    family_of: dict[str, str] = {}
    for store in stores:
        report = store.sync()
        conn = store.index.conn
        for column, tally in counts.items():  # aggregates in SQL: no row of a 10,000-lesson store is built
            tally.update(dict(conn.execute(f"SELECT {column}, count(*) FROM nodes GROUP BY {column}")))  # noqa: S608
        family_of.update(dict(conn.execute("SELECT id, family FROM nodes")))
        lessons, tokens = conn.execute("SELECT count(*), coalesce(sum(tokens), 0) FROM nodes").fetchone()
        summaries.append(StoreSummary(store.scope.value, str(store.root), lessons, tokens, report.problems))
    precision, by_family, n_episodes = _precision(stores, family_of)
    return StatusReport(
        stores=summaries,
        families=dict(sorted(counts["family"].items())),
        levels=dict(sorted(counts["level"].items())),
        statuses=dict(sorted(counts["status"].items())),
        memory_types=dict(sorted(counts["memory_type"].items())),
        tokens=sum(s.tokens for s in summaries),
        episodes=n_episodes,
        precision=precision,
        precision_by_family=by_family,
        stages=_stage_costs(stores),
        compression=_compression(stores),
        retention=_retention(stores),
        routing=_routing(stores),
    )


def _retention(stores: list[Store]) -> list[Any]:
    from rose.retention.manage import buckets

    return buckets(stores)


def _routing(stores: list[Store]) -> dict[str, Any]:
    from rose.routing import growth

    g = growth(stores)
    return {"rules": g.rules, "lessons": g.lessons, "ratio": round(g.ratio, 4), "line": g.line()}


def _compression(stores: list[Store]) -> CompressionSummary:
    """From the index's per-lesson facts (no lesson file is opened), plus the rescue and repair events."""
    out = CompressionSummary()
    for store in stores:
        for key, value in store.index.compression_facts().items():
            setattr(out, key, getattr(out, key) + value)
        for ev in event_log.read(store.events_path, kind="update"):
            if ev.get("stage") == "descent" and ev.get("action") == "rescued":
                out.rescues += 1
            elif ev.get("stage") == "repair":
                out.repaired += len(ev.get("folded") or [])
    return out


def _precision(stores: list[Store], family_of: dict[str, str]) -> tuple[Precision, dict[str, Precision], int]:
    """Precision = used / served over recorded episodes. Served-but-unused counts against nothing else."""
    overall = Precision()
    by_family: dict[str, Precision] = defaultdict(Precision)
    count = 0
    for store in stores:
        episodes, _bad = store.episodes()
        for ep in episodes:
            count += 1
            used = set(ep.used)
            for node_id in ep.served:
                fam = family_of.get(node_id, "(deleted)")
                overall.served += 1
                by_family[fam].served += 1
                if node_id in used:
                    overall.used += 1
                    by_family[fam].used += 1
    return overall, dict(sorted(by_family.items())), count


def _stage_costs(stores: list[Store]) -> dict[str, StageCost]:
    since = datetime.now(timezone.utc) - timedelta(days=STAGE_WINDOW_DAYS)
    out: dict[str, StageCost] = defaultdict(StageCost)
    for store in stores:
        for ev in event_log.read(store.events_path, kind="judge"):
            try:
                when = datetime.fromisoformat(str(ev.get("ts", "")).replace("Z", "+00:00"))
            except ValueError:
                continue
            if when < since:
                continue
            cost = out[str(ev.get("stage") or ev.get("call") or "other")]
            cost.calls += 1
            cost.cached += bool(ev.get("cached"))
            cost.failures += ev.get("ok") is False
            cost.cost_usd += float(ev.get("cost_usd") or 0.0)
            cost.ms += int(ev.get("ms") or 0)
    return dict(sorted(out.items()))


# -- the tree -------------------------------------------------------------------------------------------------
@dataclass
class TreeLine:
    depth: int
    id: str
    level: int
    status: str
    title: str
    family: str
    scope: str
    repeat: bool                 # already drawn above (a node with several parents)
    dropped: list[dict[str, Any]]
    heldout_passed: int = 0
    heldout_total: int = 0
    trials: list[dict[str, Any]] = field(default_factory=list)
    gaps: int = 0


def tree(layers: Layers, family: str | None = None) -> list[TreeLine]:
    """Depth-first from the apexes down `derived_from`, so each lesson appears under every parent it has."""
    rows: dict[str, tuple[IndexRow, str]] = {}
    stores = layers.require_any()
    for store in stores:
        store.sync()
        for r in store.rows():
            if family is None or r.family == family:
                rows.setdefault(r.id, (r, store.scope.value))
    manifests: dict[str, list[dict[str, Any]]] = {}
    more: dict[str, dict[str, Any]] = {}
    for store in stores:
        for node_id, (row, _scope) in rows.items():
            if (row.dropped or row.level or row.status == "demoted") and node_id not in more and store.has(node_id):
                node = store.get(node_id)
                manifests[node_id] = [c.to_dict() for c in node.dropped]
                more[node_id] = {"heldout_passed": node.heldout_passed, "heldout_total": node.heldout_total,
                                 "trials": [t.to_dict() for t in node.trials], "gaps": len(node.gaps)}
    out: list[TreeLine] = []
    drawn: set[str] = set()

    def walk(node_id: str, depth: int, path: tuple[str, ...]) -> None:
        row, scope = rows[node_id]
        repeat = node_id in drawn
        out.append(TreeLine(depth, node_id, row.level, row.status, row.title, row.family, scope, repeat,
                            [] if repeat else manifests.get(node_id, []),
                            **({} if repeat else more.get(node_id, {}))))
        if repeat:
            return
        drawn.add(node_id)
        for child in row.derived_from:
            if child in rows and child not in path:  # a hand-made cycle is drawn once, not forever
                walk(child, depth + 1, (*path, child))

    apexes = [nid for nid, (r, _s) in rows.items() if not any(p in rows for p in r.parents)]
    for nid in sorted(apexes, key=lambda i: (rows[i][0].family, -rows[i][0].level, i)):
        walk(nid, 0, (nid,))
    for nid in sorted(rows):  # anything only reachable through a cycle
        if nid not in drawn:
            walk(nid, 0, (nid,))
    return out
