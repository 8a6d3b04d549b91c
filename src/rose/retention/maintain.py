"""The maintenance pass: what keeps the hot store small and sharp. The learner runs it after its work on a job
(rose.learn.learner), never the prompt path. It only ever moves records between the hot store and the cold archive
(rose.store.archive); it never deletes a file.

Per store (the project's and the global one), in order, each step bounded by what is left of MAX_MOVES_PER_PASS:

    complete   a consolidation interrupted after its replacement was stored: its sources are archived now; a
               record that belongs with archived detail (its lineage is cold) follows it; a legacy `archived`
               file outside the archive moves into it
    floor      a record whose evidence brought importance to the floor (rules.archive_now) is archived
    stale      a project record weak and unused for 90 days (rules.weak_and_stale) is archived
    budget     each (scope, memory type) bucket over its hard watermark: one similar-pair consolidation attempt
               (orientation and experience only, verified by a second call), then the lowest-utility units are
               archived until the bucket is at its soft watermark (rules.eviction)
    catalog    the archive's catalog is made to list exactly what the folder holds

Then, across projects, recurrence: a user-quoted project rule this job just minted or restated, found near-verbatim
in three or more projects, is reviewed by a model; on confirmation it moves to the global store (rose.retention
.recurrence).

The unit of archiving is a record recall can serve plus the detail only it leads to (rules.Unit): a compressed
lesson's superseded forms move with it, so descent below a hot lesson never finds its detail gone, and a restore
brings the lineage back together. Cold records stay readable by id (Store.get), so a hot merge parent whose child
went cold still reaches that child's detail. Disputed records (a contradiction waits for the user) and records with
a descent in progress are exempt.
"""
from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import datetime

from rose.text import load_json
from rose.model import SERVABLE, Origin, Outcome, Status
from rose.retention import rules
from rose.store.events import EventKind
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run
    from typing import Any, Protocol

    from rose.judge import Judge
    from rose.model import Node   # the records load on first use (rose list reads index rows, never a Node)
    from rose.store import Layers, Store
    from rose.store.index import IndexRow

    class Scored(Protocol):
        """What utility is computed from: an IndexRow, or the few columns a command read instead."""

        @property
        def importance(self) -> float: ...
        @property
        def confidence(self) -> float: ...
        @property
        def use_count(self) -> int: ...
        @property
        def last_used(self) -> str: ...
        @property
        def created(self) -> str: ...


MAX_MOVES_PER_PASS = 2000   # records one pass may move (a rename and an index row each, ~1-5 ms): a pass on a
                            # store of any size ends in seconds; the next pass (the next learner job) goes on
SERVABLE_VALUES = frozenset(s.value for s in SERVABLE)   # rose.model.SERVABLE, as the index stores it
STATE_FILE = "retention.json"   # under the store's cache/ (machine-local): consolidation pairs a verifier declined


class Policy(Record, frozen=True):
    """Which rules may archive. All on in production; the benchmark's keep-everything arm turns archiving off to
    measure what retention costs (importance still moves with evidence in both)."""

    archive: bool = True
    consolidate: bool = True
    recurrence: bool = True


_policy: Policy | None = None
_hard_tokens: dict[tuple[str, str], int] | None = None


@contextlib.contextmanager
def only(policy: Policy) -> Iterator[None]:
    """Run with some rules off (a benchmark / test seam; there is no user setting for it)."""
    global _policy
    saved, _policy = _policy, policy
    try:
        yield
    finally:
        _policy = saved


@contextlib.contextmanager
def budgets(hard_tokens: dict[tuple[str, str], int]) -> Iterator[None]:
    """Run with other hard watermarks (the benchmark's smaller world and the tests' small stores; the budgets are
    fixed constants in rules.HARD_TOKENS, not settings)."""
    global _hard_tokens
    saved, _hard_tokens = _hard_tokens, hard_tokens
    try:
        yield
    finally:
        _hard_tokens = saved


def may_archive() -> bool:
    """Whether retention may move records now (the keep-everything benchmark arm says no)."""
    return (_policy or Policy()).archive


def hard_tokens() -> dict[tuple[str, str], int]:
    return _hard_tokens or rules.HARD_TOKENS


class PassReport(Record):
    archived: dict[str, int] = field(default_factory=dict)   # rule -> records moved to the archive
    consolidated: list[str] = field(default_factory=list)    # replacements stored
    declined: int = 0                                        # consolidations the verifier (or its silence) rejected
    promoted: list[str] = field(default_factory=list)        # rules moved to the global store
    catalog_fixed: int = 0
    over: list[str] = field(default_factory=list)            # buckets still over their hard mark, and why
    moves: int = 0

    def count(self, rule: str, n: int) -> None:
        if n:
            self.archived[rule] = self.archived.get(rule, 0) + n
            self.moves += n

    def describe(self) -> str:
        parts = [f"archived {n} ({rule})" for rule, n in self.archived.items()]
        if self.consolidated:
            parts.append("consolidated into " + ", ".join(self.consolidated))
        if self.declined:
            parts.append(f"{self.declined} consolidation(s) declined")
        if self.promoted:
            parts.append("promoted to global: " + ", ".join(self.promoted))
        if self.catalog_fixed:
            parts.append(f"catalog: {self.catalog_fixed} line(s) added")
        parts += self.over
        return "retention: " + "; ".join(parts) if parts else ""


# -- the graph of one store, from its index rows ------------------------------------------------------------------
class Graph(Record):
    rows: dict[str, IndexRow]
    trials: set[str]

    @classmethod
    def of(cls, store: Store) -> Graph:
        rows = {r.id: r for r in store.index.rows()}
        trials = {r[0] for r in store.index.conn.execute("SELECT id FROM nodes WHERE trials > 0")}
        return cls(rows, trials)

    def live(self, node_id: str) -> bool:
        """Hot and not a legacy archived file."""
        r = self.rows.get(node_id)
        return r is not None and not r.cold and r.status != Status.ARCHIVED.value

    def members(self, head: str) -> list[str]:
        """The head and the hot detail only it leads to (down `derived_from`: not servable itself, and every live
        parent already a member)."""
        out, seen = [head], {head}
        frontier = [head]
        while frontier:
            nxt = []
            for nid in frontier:
                for child in self.rows[nid].derived_from:
                    if child in seen or not self.live(child) or self.rows[child].status in SERVABLE_VALUES:
                        continue
                    if all(p in seen for p in self.rows[child].parents if self.live(p)):
                        seen.add(child)
                        out.append(child)
                        nxt.append(child)
            frontier = nxt
        return out

    def lineage(self, head: str) -> list[str]:
        """A cold head and the cold detail below it that is not servable on its own: what a restore brings back."""
        out, seen, frontier = [head], {head}, [head]
        while frontier:
            nxt = []
            for nid in frontier:
                for child in self.rows[nid].derived_from:
                    r = self.rows.get(child)
                    if r is None or child in seen or not r.cold or r.cold_from in SERVABLE_VALUES:
                        continue
                    seen.add(child)
                    out.append(child)
                    nxt.append(child)
            frontier = nxt
        return out

    def units(self, now: datetime) -> tuple[list[rules.Unit], list[str]]:
        """Every hot servable record as a unit with its detail, and the strays: hot records no hot servable record
        leads to or from (their lineage went cold, an interrupted move): they belong with it in the archive."""
        units: dict[str, rules.Unit] = {}
        assigned: set[str] = set()
        heads = [r for r in self.rows.values() if self.live(r.id) and r.status in SERVABLE_VALUES]
        member_lists = {}
        for head in heads:
            member_lists[head.id] = self.members(head.id)
            assigned.update(member_lists[head.id])
        strays = []
        for r in self.rows.values():
            if not self.live(r.id) or r.id in assigned or self._served_above(r.id):
                continue   # detail shared by several lessons stays while any of them is hot
            below = self._servable_below(r.id)
            if below is not None:   # history above a lesson served again (a demoted compression): moves with it
                member_lists[below].append(r.id)
                assigned.add(r.id)
            else:
                strays.append(r.id)
        for head in heads:
            members = member_lists[head.id]
            exempt = ""
            if head.status == Status.DISPUTED.value:
                exempt = "disputed: a contradiction waits for you (rose conflicts)"
            elif any(m in self.trials for m in members):
                exempt = "a descent is in progress"
            units[head.id] = rules.Unit(head.id, tuple(members), sum(self.rows[m].tokens for m in members),
                                        self.utility(head, now), exempt)
        return list(units.values()), strays

    def _served_above(self, node_id: str) -> bool:
        """Does a hot servable record lead down to this one (through any of its parents)?"""
        seen, frontier = {node_id}, [node_id]
        while frontier:
            nxt = []
            for nid in frontier:
                for parent in self.rows[nid].parents:
                    if parent in seen or parent not in self.rows:
                        continue
                    seen.add(parent)
                    if self.live(parent) and self.rows[parent].status in SERVABLE_VALUES:
                        return True
                    if self.live(parent):
                        nxt.append(parent)
            frontier = nxt
        return False

    def _servable_below(self, node_id: str) -> str | None:
        seen, frontier = {node_id}, [node_id]
        while frontier:
            nxt = []
            for nid in frontier:
                for child in self.rows[nid].derived_from:
                    if child in seen or child not in self.rows:
                        continue
                    seen.add(child)
                    if self.live(child) and self.rows[child].status in SERVABLE_VALUES:
                        return child
                    nxt.append(child)
            frontier = nxt
        return None

    @staticmethod
    def utility(row: Scored, now: datetime) -> float:
        return rules.utility(row.importance, row.confidence, row.use_count,
                             rules.age_days(row.last_used, row.created, now))


def unit_of(store: Store, node_id: str) -> list[str]:
    """What archiving this record moves: it and the detail only it leads to."""
    graph = Graph.of(store)
    return graph.members(node_id) if graph.live(node_id) else [node_id]


def archive_unit(store: Store, node_id: str, because: str, rule: str = "floor") -> list[str]:
    """Archive a record with the detail only it leads to, at once (the floor rule, at credit time)."""
    moved = store.archive(unit_of(store, node_id), because)
    if moved:
        store.event(EventKind.RETENTION, action="archive", rule=rule, count=len(moved), ids=moved)
    return moved


def promote(store: Store, node_id: str, because: str) -> list[str]:
    """Bring a cold record back to the hot store with its lineage (the detail that was archived with it)."""
    graph = Graph.of(store)
    row = graph.rows.get(node_id)
    if row is None or not row.cold:
        return []
    return store.restore(graph.lineage(node_id), because)


# -- the pass ---------------------------------------------------------------------------------------------------
def maintain(layers: Layers, judge: Judge | None = None, *, touched: list[str] | tuple[str, ...] = (),
             now: datetime | None = None, max_moves: int = MAX_MOVES_PER_PASS) -> PassReport:
    """One maintenance pass over every store the layers hold. Never raises for a judgement that does not come
    (consolidation and recurrence then change nothing); store errors reach the caller (the learner logs them)."""
    from rose.model import utcnow

    policy = _policy or Policy()
    report = PassReport()
    if not policy.archive:
        return report
    now = now or utcnow()
    for store in layers.stores():
        _maintain_store(store, judge, now, report, policy, max_moves)
    from rose.retention import recurrence

    recurrence.clean()
    if policy.recurrence and touched and judge is not None and layers.project is not None:
        report.promoted += recurrence.review(layers, judge, list(touched), report)
    return report


def _maintain_store(store: Store, judge: Judge | None, now: datetime, report: PassReport, policy: Policy,
                    max_moves: int) -> None:
    from rose.store import archive

    store.sync()

    def left() -> int:
        return max(0, max_moves - report.moves)

    def move(rule: str, items: list[tuple[str, str]]) -> None:
        items = items[:left()]
        if not items:
            return
        moved = store.move(items, cold=True)
        report.count(rule, len(moved))
        if moved:
            store.event(EventKind.RETENTION, action="archive", rule=rule, count=len(moved), ids=moved[:50])

    # complete: interrupted consolidations, legacy archived files, strays of cold lineages
    move("completed", _unfinished_consolidations(store))
    graph = Graph.of(store)
    move("legacy", [(r.id, "archived before the cold archive existed: moved into it")
                    for r in graph.rows.values() if not r.cold and r.status == Status.ARCHIVED.value])
    units, strays = graph.units(now)
    move("completed", [(i, "its lineage is in the archive: it goes with it") for i in strays])

    # floor and stale: rules on each unit's head, whatever the budget
    floor, stale = [], []
    for unit in units:
        if unit.exempt:
            continue
        head = graph.rows[unit.head]
        if rules.archive_now(head.importance) and head.importance < head.base_importance:
            floor.append(unit)
        elif rules.weak_and_stale(store.scope.value, head.importance,
                                  rules.age_days(head.last_used, head.created, now)):
            stale.append(unit)
    move("floor", [(m, f"negative credit brought its importance to the floor ({rules.IMPORTANCE_FLOOR})")
                   for u in floor for m in u.members])
    move("stale", [(m, f"weak (importance {graph.rows[u.head].importance:.2f} <= {rules.WEAK_IMPORTANCE}) and unused "
                       f"for {rules.STALE_DAYS:.0f} days") for u in stale for m in u.members])

    # budgets: per (scope, memory type) bucket
    for scope, memory_type, _hot, tokens, _cold, _cold_tokens in store.index.buckets():
        marks = rules.watermarks(scope, memory_type, hard_tokens())
        if not marks.over(tokens) or not left():
            continue
        if policy.consolidate and memory_type in rules.CONSOLIDATE_TYPES and judge is not None:
            _consolidate_once(store, judge, memory_type, now, report)
            tokens = _bucket_tokens(store, scope, memory_type)
            if not marks.over(tokens):
                continue
        graph = Graph.of(store)
        units, _strays = graph.units(now)
        bucket = [u for u in units if graph.rows[u.head].scope == scope and graph.rows[u.head].memory_type
                  == memory_type and u.head not in {x.head for x in floor + stale}]
        chosen = rules.eviction(bucket, tokens, marks)
        move("budget", [(m, f"{scope}/{memory_type} held {tokens} tokens, over its hard watermark of {marks.hard}: "
                            f"utility {u.utility:.3f}, among the lowest (archived down to {marks.soft})")
                        for u in chosen for m in u.members])
        after = _bucket_tokens(store, scope, memory_type)
        if marks.over(after):
            why = "the pass reached its move limit" if not left() else \
                "what is left is exempt (disputed, or a descent in progress)"
            report.over.append(f"{store.scope.value} {scope}/{memory_type} still {after} > {marks.hard} tokens: {why}")
    fixed = archive.reconcile(store)
    report.catalog_fixed += fixed.added + fixed.closed


def _bucket_tokens(store: Store, scope: str, memory_type: str) -> int:
    for s, t, _hot, tokens, _c, _ct in store.index.buckets():
        if (s, t) == (scope, memory_type):
            return tokens
    return 0


# -- one similar-pair consolidation ------------------------------------------------------------------------------
def _unfinished_consolidations(store: Store) -> list[tuple[str, str]]:
    """Sources still hot beside the replacement that was stored for them (the pass was stopped between the two)."""
    out = []
    for (node_id,) in store.index.conn.execute(
            "SELECT id FROM nodes WHERE origin = ? AND cold = 0", (Origin.CONSOLIDATION.value,)).fetchall():
        try:
            node = store.get(node_id)
        except Exception:  # noqa: BLE001 - unreadable: the index lists it as a problem
            continue
        for source in node.extra.get("consolidated") or []:
            rel = store.index.path_of(str(source))
            if rel is not None and not rel.startswith("archive/"):
                out.append((str(source), f"consolidated into {node_id}"))
    return out


def _state(store: Store) -> dict[str, Any]:
    data = store.read_json(store.cache_dir / STATE_FILE, {})
    return data if isinstance(data, dict) else {}


def _fingerprint(a: Node, b: Node) -> str:
    from rose.store.index import text_hash

    return "|".join(text_hash(n.title, " ".join(n.tags), n.gist, n.body) for n in sorted((a, b), key=lambda n: n.id))


def _consolidate_once(store: Store, judge: Judge, memory_type: str, now: datetime, report: PassReport) -> None:
    """Nominate the most similar eligible pair of this bucket; ask for one shorter record; keep it only if the
    verifier confirms every property (an answer that does not come rejects). At most one attempt per bucket a pass."""
    from rose.judge import JudgeFailure, Stage, calls
    from rose.model import seeded_id
    from rose.lessons import derive_gist
    from rose.tokens import estimate

    graph = Graph.of(store)
    pool = [r for r in graph.rows.values()
            if graph.live(r.id) and r.memory_type == memory_type and r.status == Status.ACTIVE.value
            and not r.parents and not r.derived_from and r.id not in graph.trials]
    pool.sort(key=lambda r: (Graph.utility(r, now), r.id))
    pool = pool[:rules.POOL_MAX]
    bodies = store.index.bodies([r.id for r in pool])
    state = _state(store)
    declined = state.get("declined", {}) if isinstance(state.get("declined"), dict) else {}
    records = [(r.id, rules.words(f"{r.title}\n{bodies.get(r.id, '')}")) for r in pool]
    skip = [tuple(k.split("|", 1)) for k in declined]
    while True:
        pair = rules.nominate(records, declined=skip)
        if pair is None:
            return
        a, b = store.get(pair[0]), store.get(pair[1])
        key = f"{a.id}|{b.id}"
        if key in declined and declined[key] != _fingerprint(a, b):
            declined.pop(key)   # their text changed since the verifier declined them: new evidence, ask again
            skip = [tuple(k.split("|", 1)) for k in declined]
            continue
        if a.quotes or b.quotes or a.origin is Origin.MANUAL or b.origin is Origin.MANUAL:
            skip.append((a.id, b.id))   # the user's own words are never synthesized
            continue
        break
    sources = [calls.Lesson(n.id, n.title, n.body) for n in (a, b)]

    def decline(why: str) -> None:
        declined[key] = _fingerprint(a, b)
        state["declined"] = declined
        store.write_json(store.cache_dir / STATE_FILE, state, structural=True)
        report.declined += 1
        store.event(EventKind.RETENTION, action="consolidation declined", ids=[a.id, b.id], reason=why)

    try:
        proposal = judge.ask(calls.CONSOLIDATE, calls.ConsolidateRequest(memory_type, sources), stage=Stage.RETENTION)
    except JudgeFailure:
        report.declined += 1
        return   # no answer: nothing changes; the pair may be asked again on a later pass (answers are cached)
    if estimate(proposal.body) >= estimate(a.body) + estimate(b.body):
        decline("the proposal was not shorter than the two together")
        return
    replacement = calls.Lesson("", proposal.title, proposal.body)
    try:
        verdict = judge.ask(calls.VERIFY_CONSOLIDATION,
                            calls.VerifyConsolidationRequest(sources, replacement), stage=Stage.RETENTION)
    except JudgeFailure:
        report.declined += 1
        return   # a verifier that does not answer rejects
    if not verdict.accepted:
        decline(verdict.reason)
        return
    importance, confidence, outcome = rules.consolidated_traits(
        [rules.effective_importance(n.importance, n.learned_importance) for n in (a, b)],
        [a.confidence, b.confidence], [a.outcome.value, b.outcome.value])
    node_id = seeded_id(f"consolidation|{a.id}|{b.id}")
    if not store.has(node_id):
        from rose.model import Node

        node = Node(id=node_id, family=a.family, title=proposal.title, body=proposal.body,
                    gist=derive_gist(proposal.body), memory_type=a.memory_type, scope=store.scope,
                    origin=Origin.CONSOLIDATION, importance=importance, confidence=confidence,
                    outcome=Outcome(outcome), tags=list(dict.fromkeys(a.tags + b.tags)),
                    evidence=list(dict.fromkeys(a.evidence + b.evidence)),
                    related=list(dict.fromkeys([a.id, b.id, *a.related, *b.related])))
        node.extra["consolidated"] = [a.id, b.id]
        node.extra["verified"] = verdict.reason
        store.save(node)
    moved = store.archive([a.id, b.id], f"consolidated into {node_id} (verified: {verdict.reason})")
    report.count("consolidated", len(moved))
    report.consolidated.append(node_id)
    store.event(EventKind.RETENTION, action="consolidated", id=node_id, sources=[a.id, b.id])


def describe_state(store: Store) -> dict[str, Any]:
    """The machine-local retention state, for `rose doctor`-style inspection and tests."""
    return load_json(json.dumps(_state(store)))
