"""What `rose status` and `rose tree` show: computed here as typed records, rendered by the CLI."""
from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

from rose.store import Layers, Store
from rose.store import events as event_log
from rose.store.index import LINEAGE_SQL, NO_LINEAGE_SQL, IndexRow
from rose.typedrecord import NamedTuple, Record, asdict, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STAGE_WINDOW_DAYS = 7


class StoreSummary(Record):
    scope: str
    root: str
    lessons: int
    tokens: int
    problems: list[tuple[str, str]]


class Precision(Record):
    served: int = 0
    used: int = 0

    @property
    def value(self) -> float | None:
        return self.used / self.served if self.served else None


class StageCost(Record):
    calls: int = 0
    cached: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    ms: int = 0
    input_tokens: int = 0       # as the backend reported them (a cached answer costs none)
    output_tokens: int = 0
    unreported: int = 0         # calls whose backend reported no token counts

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class CostSummary(Record):
    """What memory cost and saved over the window: tokens the packs carried, what compression and withholding
    kept out of them, and what the learner's model calls spent (every stage but recall, which runs on the prompt).

    Saved by compression: for each lesson served in full that was made by compressing exactly one lesson below it,
    the tokens of its level-0 original minus its own. Saved by withholding: the tokens of the lessons withheld."""

    days: int = STAGE_WINDOW_DAYS
    prompts: int = 0
    pack_tokens: int = 0
    saved_by_compression: int = 0
    saved_by_withholding: int = 0
    learner_tokens: int = 0
    learner_calls: int = 0
    learner_cost_usd: float = 0.0
    recall_tokens: int = 0

    @property
    def saved(self) -> int:
        """What the learner's work saved: compression. Withholding leaves tokens out too, but to measure a lesson,
        not to save: counting it would let a store that withholds more look as if the learner paid for itself."""
        return self.saved_by_compression


class CompressionSummary(Record):
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


class StatusReport(Record):
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
    credit: Any = None                      # rose.credit.report.CreditSummary
    cost: CostSummary = field(default_factory=CostSummary)
    retention: list[Any] = field(default_factory=list)   # rose.retention.manage.Bucket: hot / cold and watermarks
    routing: dict[str, Any] = field(default_factory=dict)   # selection rules over lessons (rose.routing.growth)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["compression"]["heldout_rate"] = self.compression.heldout_rate
        data["cost"]["saved"] = self.cost.saved
        for name, stage in self.stages.items():
            data["stages"][name]["tokens"] = stage.tokens
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
    columns = ("memory_type", "family", "level", "status")
    counts: dict[str, Counter] = {c: Counter() for c in columns}
    for store in stores:
        report = store.sync()
        lessons = tokens = 0
        for group in store.index.facts():   # one pass over the index, shared with the compression and retention sums
            for column in columns:
                counts[column][getattr(group, column)] += group.lessons
            lessons += group.lessons
            tokens += group.tokens
        summaries.append(StoreSummary(store.scope.value, str(store.root), lessons, tokens, report.problems))
    precision, by_family, n_episodes = _precision(stores)
    from rose.credit.report import summary as credit_summary

    stages = _stage_costs(stores)
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
        stages=stages,
        compression=_compression(stores),
        credit=credit_summary(layers, layers.settings(), synced=True),
        cost=_cost(stores, stages),
        retention=_retention(stores),
        routing=_routing(stores),
    )


def _cost(stores: list[Store], stages: dict[str, StageCost]) -> CostSummary:
    """Pack tokens served and saved (inject events) against the learner's tokens (judge events), last 7 days."""
    out = CostSummary()
    since = datetime.now(timezone.utc) - timedelta(days=STAGE_WINDOW_DAYS)
    injects = [ev for store in stores for ev in event_log.read(store.events_path, kind="inject") if _within(ev, since)]
    rows = _rows_of(stores, {i for ev in injects for key in ("served", "withheld") for i in ev.get(key) or []})

    def original(node_id: str) -> IndexRow | None:
        row, hops = rows.get(node_id), 0
        while row is not None and row.level > 0 and len(row.derived_from) == 1 and hops < 16:
            below = row.derived_from[0]
            if below not in rows:   # read down the chain only as far as it goes
                rows.update(_rows_of(stores, {below}))
            row, hops = rows.get(below), hops + 1
        return row if row is not None and row.level == 0 else None

    for ev in injects:
        out.prompts += 1
        out.pack_tokens += int(ev.get("tokens") or 0)
        for node_id in ev.get("served") or []:
            row, base = rows.get(node_id), original(node_id)
            if row is not None and base is not None and row.level > 0:
                out.saved_by_compression += max(0, base.tokens - row.tokens)
        out.saved_by_withholding += sum(rows[i].tokens for i in ev.get("withheld") or [] if i in rows)
    for stage, cost in stages.items():
        if stage == "recall":
            out.recall_tokens += cost.tokens
            continue
        out.learner_tokens += cost.tokens
        out.learner_calls += cost.calls - cost.cached
        out.learner_cost_usd += cost.cost_usd
    return out


def _rows_of(stores: list[Store], ids: set[str]) -> dict[str, IndexRow]:
    """The rows of these ids from every store, a later store's winning an id two hold (as a merge of every store's
    rows would): only what the caller asks for is read, never the whole index."""
    out: dict[str, IndexRow] = {}
    for store in stores:
        out.update(store.index.rows_by_id(ids))
    return out


def _within(ev: dict[str, Any], since: datetime) -> bool:
    try:
        return datetime.fromisoformat(str(ev.get("ts", "")).replace("Z", "+00:00")) >= since
    except ValueError:
        return False


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


def _precision(stores: list[Store]) -> tuple[Precision, dict[str, Precision], int]:
    """Precision = used / served over recorded episodes. Served-but-unused counts against nothing else."""
    overall = Precision()
    by_family: dict[str, Precision] = defaultdict(Precision)
    count = 0
    episodes = [ep for store in stores for ep in store.episodes()[0]]
    family_of = {node_id: row.family for node_id, row in
                 _rows_of(stores, {i for ep in episodes for i in ep.served}).items()}
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
            if ev.get("input_tokens") is None and ev.get("output_tokens") is None:
                cost.unreported += bool(ev.get("ok")) and not ev.get("cached")
            cost.input_tokens += int(ev.get("input_tokens") or 0)
            cost.output_tokens += int(ev.get("output_tokens") or 0)
    return dict(sorted(out.items()))


# -- the tree -------------------------------------------------------------------------------------------------
class TreeLine(Record):
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


class _TreeRow(NamedTuple):
    """What the tree draws of a lesson's index row (not the whole IndexRow: 50,000 of them, at scale)."""

    id: str
    level: int
    status: str
    title: str
    family: str
    parents: list[str]
    derived_from: list[str]
    dropped: int
    heldout_passed: int
    heldout_total: int
    gaps: int


_Rows = dict[str, tuple[_TreeRow, str]]   # id -> (its row, its store's scope); the first store holding an id wins


def tree(layers: Layers, family: str | None = None) -> list[TreeLine]:
    """Depth-first from the apexes down `derived_from`, so each lesson appears under every parent it has."""
    stores = layers.require_any()
    for store in stores:
        store.sync()
    return _whole_tree(stores, family)


def _whole_tree(stores: list[Store], family: str | None) -> list[TreeLine]:
    rows: _Rows = {}
    for store in stores:
        for r in store.index.select(_TreeRow._fields, *_in_family(family)):
            row = _TreeRow._make(r)
            rows.setdefault(row.id, (row, store.scope.value))
    lines = _walk(rows)
    _annotate(stores, rows, lines)
    return lines


def _in_family(family: str | None, where: str = "") -> tuple[str, tuple[object, ...]]:
    """`where` (SQL, no parameters), narrowed to one family when --family names one."""
    if family is None:
        return where, ()
    return (f"({where}) AND family = ?" if where else "family = ?"), (family,)


def _apexes(rows: _Rows) -> list[str]:
    """The lessons no lesson of `rows` is a parent of, in the order they are drawn: by family, highest level first."""
    apexes = [nid for nid, (r, _s) in rows.items() if not any(p in rows for p in r.parents)]
    return sorted(apexes, key=lambda i: (rows[i][0].family, -rows[i][0].level, i))


def _walk(rows: _Rows) -> list[TreeLine]:
    """Every line of the tree of `rows`, without manifests (`_annotate` adds those of the lines that are drawn)."""
    out: list[TreeLine] = []
    drawn: set[str] = set()

    def walk(node_id: str, depth: int, path: tuple[str, ...]) -> None:
        row, scope = rows[node_id]
        repeat = node_id in drawn
        out.append(TreeLine(depth, node_id, row.level, row.status, row.title, row.family, scope, repeat, []))
        if repeat:
            return
        drawn.add(node_id)
        for child in row.derived_from:
            if child in rows and child not in path:  # a hand-made cycle is drawn once, not forever
                walk(child, depth + 1, (*path, child))

    for nid in _apexes(rows):
        walk(nid, 0, (nid,))
    for nid in sorted(rows):  # anything only reachable through a cycle
        if nid not in drawn:
            walk(nid, 0, (nid,))
    return out


def _annotate(stores: list[Store], rows: _Rows, lines: list[TreeLine]) -> None:
    """Give each first drawing of a lesson among `lines` its delta manifest, trials, held-out results and gaps."""
    ids = list(dict.fromkeys(line.id for line in lines if not line.repeat))
    manifests: dict[str, list[dict[str, Any]]] = {}
    more: dict[str, dict[str, Any]] = {}
    for store in stores:
        wanted = [node_id for node_id in ids if node_id not in more
                  and ((row := rows[node_id][0]).dropped or row.level or row.status == "demoted")]
        kept = store.index.manifests(wanted)   # from the index: no lesson file is parsed (50,000 of them, at scale)
        for node_id in wanted:
            if node_id in kept:
                dropped, trials = kept[node_id]
                row = rows[node_id][0]
                manifests[node_id] = dropped
                more[node_id] = {"heldout_passed": row.heldout_passed, "heldout_total": row.heldout_total,
                                 "trials": trials, "gaps": row.gaps}
            elif store.has(node_id):   # indexed before the index kept manifests: its file says
                node = store.get(node_id)
                manifests[node_id] = [c.to_dict() for c in node.dropped]
                more[node_id] = {"heldout_passed": node.heldout_passed, "heldout_total": node.heldout_total,
                                 "trials": [t.to_dict() for t in node.trials], "gaps": len(node.gaps)}
    for line in lines:
        if not line.repeat:
            line.dropped = manifests.get(line.id, [])
            for key, value in more.get(line.id, {}).items():
                setattr(line, key, value)


# -- the bounded tree: what `rose tree` prints for a human -----------------------------------------------------
class FamilyTrees(Record):
    """One family of a bounded tree: how many lessons its trees hold, the first of them whole, how many more."""

    family: str
    lessons: int                  # distinct lessons in all its trees (one drawn under two parents counts once)
    trees: list[list[TreeLine]]   # its first trees, each a line at depth 0 and the lines under it
    more: int                     # its trees not drawn


class TreeView(Record):
    """The whole tree when it has at most `shown` lines (`lines`), else each family's count and first trees."""

    nodes: int                    # lines of the whole tree
    lines: list[TreeLine] = field(default_factory=list)
    families: list[FamilyTrees] = field(default_factory=list)


def bound(lines: list[TreeLine], shown: int, per_family: int) -> TreeView:
    """The bounded view cut from the whole tree's lines: the trees (a line at depth 0 and the lines under it)
    grouped by their root's family, families in the order their first tree is drawn."""
    if len(lines) <= shown:
        return TreeView(len(lines), lines)
    families: dict[str, list[list[TreeLine]]] = {}
    current: list[TreeLine] = []
    for line in lines:
        if line.depth == 0:
            current = []
            families.setdefault(line.family, []).append(current)
        current.append(line)
    return TreeView(len(lines), [], [
        FamilyTrees(family, len({line.id for t in trees for line in t}), trees[:per_family],
                    max(0, len(trees) - per_family)) for family, trees in families.items()])


# A lesson with no lineage (no parents, nothing derived from it, named by no other lesson's lists) is a tree of one
# line, drawn in its family by (level, id): the bounded view counts those in SQL and reads only the first of them.


def tree_view(layers: Layers, family: str | None = None, *, shown: int, per_family: int) -> TreeView:
    """`bound(tree(layers, family), shown, per_family)`, reading only the rows it draws and the ones with lineage
    (the rest are counted per family in SQL). Ids two stores hold fall back to the whole tree (which store's row
    wins then decides every line), as does a tree small enough to draw whole."""
    stores = layers.require_any()
    for store in stores:
        store.sync()
    where, params = _in_family(family)
    counts = [store.index.count_by_family(where, params) for store in stores]
    if sum(n for c in counts for n in c.values()) <= shown or _shared_ids(stores, counts, family):
        return bound(_whole_tree(stores, family), shown, per_family)

    # the rows with lineage, and the rows they name (which have none of their own, or they would be among them)
    rows: _Rows = {}
    for store in stores:
        for r in store.index.select(_TreeRow._fields, *_in_family(family, LINEAGE_SQL)):
            rows[r[0]] = (_TreeRow._make(r), store.scope.value)
    named = sorted({i for row, _s in rows.values() for i in (*row.parents, *row.derived_from)} - rows.keys())
    for store in stores:
        for start in range(0, len(named), 500):
            chunk = named[start:start + 500]
            where, params = _in_family(family, f"id IN ({','.join('?' * len(chunk))})")
            for r in store.index.select(_TreeRow._fields, where, (*chunk, *params)):
                rows.setdefault(r[0], (_TreeRow._make(r), store.scope.value))

    # their lines are the whole tree's less the one-line trees, in the same order (those touch no other line)
    linked = _walk(rows)
    apexes = set(_apexes(rows))
    apex_trees: dict[str, list[list[TreeLine]]] = defaultdict(list)    # per family, in drawn order
    cycle_trees: dict[str, list[list[TreeLine]]] = defaultdict(list)   # only reachable through a cycle: drawn last
    current: list[TreeLine] = []
    for line in linked:
        if line.depth == 0:
            current = []
            (apex_trees if line.id in apexes else cycle_trees)[line.family].append(current)
        current.append(line)
    lone: Counter[str] = Counter()
    for c in counts:
        lone.update(c)
    lone.subtract(Counter(row.family for row, _s in rows.values()))

    # families in the order their first tree is drawn: those with an apex by name (apexes are drawn by family),
    # then those whose trees all hang off a cycle, in the order those are drawn
    names = sorted({f for f, n in lone.items() if n > 0} | apex_trees.keys())
    names += [f for f in cycle_trees if f not in names]
    families = []
    drawn_rows = dict(rows)
    for name in names:
        firsts = [((-row.level, row.id), [TreeLine(0, row.id, row.level, row.status, row.title, row.family, scope,
                                                   False, [])])
                  for row, scope in _lone_firsts(stores, name, per_family, rows, drawn_rows)] if lone[name] else []
        trees = [t for _k, t in sorted(firsts + [((-t[0].level, t[0].id), t) for t in apex_trees[name]],
                                       key=lambda kt: kt[0])]
        trees = (trees + cycle_trees[name])[:per_family]
        total = lone[name] + len(apex_trees[name]) + len(cycle_trees[name])
        ids = {line.id for t in (*apex_trees[name], *cycle_trees[name]) for line in t}
        families.append(FamilyTrees(name, lone[name] + len(ids), trees, max(0, total - per_family)))
    _annotate(stores, drawn_rows, [line for f in families for t in f.trees for line in t])
    return TreeView(sum(n for n in lone.values()) + len(linked), [], families)


def _lone_firsts(stores: list[Store], family: str, n: int, rows: _Rows, into: _Rows) -> list[tuple[_TreeRow, str]]:
    """The first `n` one-line trees of a family, by level (highest first) then id, from every store; each added to
    `into`. A row that another lesson names has no lineage of its own either, so the query finds it too, but it
    is an apex drawn where it would stand among these: dropping it leaves enough for the first `n` trees."""
    got = []
    for store in stores:
        for r in store.index.select_first(_TreeRow._fields, f"family = ? AND {NO_LINEAGE_SQL}", (family,), n):
            if r[0] not in rows:
                got.append((_TreeRow._make(r), store.scope.value))
    got = sorted(got, key=lambda rs: (-rs[0].level, rs[0].id))[:n]
    into.update((row.id, (row, scope)) for row, scope in got)
    return got


def _shared_ids(stores: list[Store], counts: list[dict[str, int]], family: str | None) -> bool:
    """Whether two stores hold rows of one id (of this family, when --family names one): read the smaller's ids."""
    held = sorted((sum(c.values()), i) for i, c in enumerate(counts) if c)
    if len(held) < 2:   # a folder sees two stores at most: its project's and the global one
        return False
    small, large = stores[held[0][1]], stores[held[1][1]]
    ids = [r[0] for r in small.index.select(("id",), *_in_family(family))]
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        where, params = _in_family(family, f"id IN ({','.join('?' * len(chunk))})")
        if large.index.select(("id",), where, (*chunk, *params)):
            return True
    return False
