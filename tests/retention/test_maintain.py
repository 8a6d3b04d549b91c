"""The maintenance pass (rose.retention.maintain): watermarks and eviction by utility, the DAG kept whole, weak and
stale records, the floor, one verified similar-pair consolidation, and the pass run by the learner itself."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from rose.judge import FailureKind, Judge, JudgeFailure, Scripted
from rose.model import MemoryType, Origin, Outcome, Stats, Status, Trial
from rose.retention import maintain as m
from rose.retention import rules
from rose.store import Layers, archive

from .helpers import lesson, lineage, orientation

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _iso(days_ago: float) -> str:
    return (NOW - timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")


def _hot_tokens(layers: Layers, memory_type: str = "lesson") -> int:
    return next((t for s, mt, _h, t, _c, _ct in layers.project.index.buckets() if mt == memory_type), 0)


def _cold(layers: Layers) -> set[str]:
    return {r.id for r in layers.project.rows() if r.cold}


def test_under_the_hard_mark_nothing_moves(layers: Layers) -> None:
    layers.project.save_many([lesson(f"n_a{i:05d}") for i in range(10)])
    with m.budgets({("project", "lesson"): 10_000}):
        report = m.maintain(layers, now=NOW)
    assert report.archived == {} and _cold(layers) == set()


def test_over_the_hard_mark_the_lowest_utility_go_until_the_soft_mark(layers: Layers) -> None:
    store = layers.project
    nodes = [lesson(f"n_a{i:05d}", created=_iso(80 - i * 2), importance=0.5 + i * 0.01) for i in range(30)]
    store.save_many(nodes)
    total = _hot_tokens(layers)
    hard = int(total * 0.9)
    with m.budgets({("project", "lesson"): hard}):
        report = m.maintain(layers, now=NOW)
    marks = rules.watermarks("project", "lesson", {("project", "lesson"): hard})
    assert _hot_tokens(layers) <= marks.soft
    cold = _cold(layers)
    assert report.archived == {"budget": len(cold)} and cold
    graph = m.Graph.of(store)
    worst_hot = min(m.Graph.utility(r, NOW) for r in graph.rows.values() if not r.cold)
    best_cold = max(m.Graph.utility(r, NOW) for r in graph.rows.values() if r.cold)
    assert best_cold <= worst_hot                                     # lowest utility first
    assert all(p.exists() for p in (store.root / r.path for r in store.rows()))   # moved, never deleted
    assert len(store.rows()) == 30


def test_eviction_moves_a_compressed_lesson_with_its_detail_and_a_restore_brings_both(layers: Layers) -> None:
    store = layers.project
    lineage(store, "n_top001", "n_low001", importance=0.2, created=_iso(300))
    store.save_many([lesson(f"n_b{i:05d}", importance=0.9) for i in range(5)])
    with m.budgets({("project", "lesson"): _hot_tokens(layers) - 10}):
        m.maintain(layers, now=NOW)
    assert {"n_top001", "n_low001"} <= _cold(layers)
    assert store.get("n_low001").archived_from is Status.SUPERSEDED
    assert m.promote(store, "n_top001", "used") == ["n_top001", "n_low001"]
    assert store.get("n_low001").status is Status.SUPERSEDED and store.get("n_top001").status is Status.ACTIVE


def test_a_cold_childs_detail_stays_reachable_from_a_hot_parent(layers: Layers) -> None:
    """Archiving never breaks descent: a hot merge parent still reads its cold child by id."""
    from rose.compress.graph import Graph

    store = layers.project
    child = lesson("n_kid001", parents=["n_par001"], importance=0.1, created=_iso(500))
    parent = lesson("n_par001", level=1, origin=Origin.MERGE, derived_from=["n_kid001"], importance=0.9)
    store.save_many([child, parent])
    store.archive(["n_kid001"], "t")
    found = Graph(layers).find("n_kid001")
    assert found is not None and found.node.body == child.body
    assert [n.id for n in Graph(layers).subtree(store.get("n_par001"))] == ["n_par001", "n_kid001"]


def test_disputed_records_and_descents_in_progress_are_exempt(layers: Layers) -> None:
    store = layers.project
    store.save_many([
        lesson("n_dis001", status=Status.DISPUTED, disputes=["n_dis002"], conflict="?", importance=0.0, words=200),
        lesson("n_dis002", status=Status.DISPUTED, disputes=["n_dis001"], conflict="?", importance=0.0, words=200),
        lesson("n_tri001", importance=0.0, words=200, trials=[Trial(episode="e_x00001")]),
        lesson("n_ok0001", importance=0.9, words=20)])
    with m.budgets({("project", "lesson"): 50}):
        report = m.maintain(layers, now=NOW)
    assert _cold(layers) == {"n_ok0001"}
    assert report.over and "exempt" in report.over[0]


def test_weak_and_stale_project_records_are_archived_whatever_the_budget(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_old001", importance=0.4, created=_iso(91)),
                     lesson("n_new001", importance=0.4, created=_iso(30)),
                     lesson("n_str001", importance=0.8, created=_iso(400)),
                     lesson("n_use001", importance=0.4, created=_iso(400), stats=Stats(last_used=_iso(10)))])
    report = m.maintain(layers, now=NOW)
    assert _cold(layers) == {"n_old001"} and report.archived == {"stale": 1}
    assert "unused for 90 days" in archive.read(store.catalog_path)["n_old001"].because


def test_a_record_at_the_floor_is_archived_by_the_pass_too(layers: Layers) -> None:
    """A credit killed before its archive step: the next pass finishes the job."""
    store = layers.project
    store.save(lesson("n_bad001", learned_importance=0.1))
    store.save(lesson("n_low001", importance=0.1))        # minted low is not negative credit
    report = m.maintain(layers, now=NOW)
    assert _cold(layers) == {"n_bad001"} and report.archived == {"floor": 1}


def test_detail_left_hot_by_an_interrupted_move_follows_its_lineage(layers: Layers) -> None:
    store = layers.project
    lineage(store, "n_top001", "n_low001")
    store.archive(["n_top001"], "killed before the detail moved")
    m.maintain(layers, now=NOW)
    assert _cold(layers) == {"n_top001", "n_low001"}


def test_retention_never_runs_when_archiving_is_off(layers: Layers) -> None:
    layers.project.save_many([lesson(f"n_a{i:05d}", importance=0.1, learned_importance=0.1) for i in range(5)])
    with m.only(m.Policy(archive=False)), m.budgets({("project", "lesson"): 1}):
        assert m.maintain(layers, now=NOW).archived == {}
    assert _cold(layers) == set()


def test_one_pass_moves_at_most_its_limit_and_the_next_goes_on(layers: Layers) -> None:
    layers.project.save_many([lesson(f"n_a{i:05d}", importance=0.3) for i in range(40)])
    with m.budgets({("project", "lesson"): 10}):
        first = m.maintain(layers, now=NOW, max_moves=15)
        assert first.moves == 15 and "move limit" in first.over[0]
        m.maintain(layers, now=NOW, max_moves=15)
        m.maintain(layers, now=NOW, max_moves=15)
    assert len(_cold(layers)) == 40


# -- one similar-pair consolidation -------------------------------------------------------------------------------
SOURCES = ("The test database is Postgres on port 5433 in CI and locally, never the developer's 5432.",
           "The test database is Postgres on port 5433 locally and in CI; 5432 is the developer's own.")


def _pair(layers: Layers, **kw) -> None:
    layers.project.save_many([
        orientation("n_or0001", SOURCES[0], evidence=["session://a/message/1"], importance=0.7,
                    outcome=Outcome.VERIFIED, **kw),
        orientation("n_or0002", SOURCES[1], evidence=["session://b/message/4"], importance=0.5,
                    outcome=Outcome.UNKNOWN, confidence=0.9, **kw)])


def _judge(**answers) -> tuple[Judge, Scripted]:
    def handle(call, request):
        answer = answers.get(call)
        if answer is None:
            raise JudgeFailure(FailureKind.SCRIPT, f"no script for {call}")
        return answer(request) if callable(answer) else answer
    backend = Scripted(handler=handle)
    return Judge(backend), backend


GOOD = {"title": "Test database", "body": "Tests use Postgres on 5433 (CI and local); 5432 is the developer's."}
YES = {"adds_no_claim": True, "hides_no_contradiction": True, "keeps_boundaries": True, "keeps_constraints": True,
       "reason": "same claims"}


def test_a_verified_consolidation_replaces_the_pair(layers: Layers) -> None:
    _pair(layers)
    judge, backend = _judge(consolidate=GOOD, verify_consolidation=YES)
    with m.budgets({("project", "orientation"): 30}):
        report = m.maintain(layers, judge, now=NOW)
    [new_id] = report.consolidated
    new = layers.project.get(new_id)
    assert new.body == GOOD["body"] and new.origin is Origin.CONSOLIDATION and new.memory_type is MemoryType.ORIENTATION
    assert new.related == ["n_or0001", "n_or0002"]
    assert new.evidence == ["session://a/message/1", "session://b/message/4"]
    assert new.importance == 0.5 and new.confidence == 0.5 and new.outcome is Outcome.UNKNOWN
    assert {"n_or0001", "n_or0002"} <= _cold(layers)
    assert "consolidated into" in archive.read(layers.project.catalog_path)["n_or0001"].because
    assert [r.call for r in backend.history] == ["consolidate", "verify_consolidation"]


def test_a_rejected_consolidation_changes_nothing_and_is_not_asked_again(layers: Layers) -> None:
    _pair(layers)
    no = {**YES, "keeps_constraints": False, "reason": "drops the CI condition"}
    judge, backend = _judge(consolidate=GOOD, verify_consolidation=no)
    with m.budgets({("project", "orientation"): 30}):
        first = m.maintain(layers, judge, now=NOW)
        assert first.consolidated == [] and first.declined == 1
        m.maintain(layers, judge, now=NOW)
    assert [r.call for r in backend.history] == ["consolidate", "verify_consolidation"]   # once, not every pass
    assert layers.project.has("n_or0001")


def test_a_verifier_that_does_not_answer_rejects(layers: Layers) -> None:
    _pair(layers)
    judge, _backend = _judge(consolidate=GOOD)          # verify_consolidation unscripted: it fails
    with m.budgets({("project", "orientation"): 30}):
        report = m.maintain(layers, judge, now=NOW)
    assert report.consolidated == []
    assert layers.project.index.conn.execute("SELECT count(*) FROM nodes WHERE origin = 'consolidation'").fetchone()[0] \
        == 0


def test_short_user_rules_and_quoted_records_are_never_synthesized(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_le0001", SOURCES[0]), lesson("n_le0002", SOURCES[1])])
    _pair(layers, quotes={"session://a/message/1": "use 5433"})
    judge, backend = _judge(consolidate=GOOD, verify_consolidation=YES)
    with m.budgets({("project", "orientation"): 30, ("project", "lesson"): 10}):
        report = m.maintain(layers, judge, now=NOW)
    assert report.consolidated == [] and backend.history == []


def test_an_interrupted_consolidation_is_completed(layers: Layers) -> None:
    _pair(layers)
    replacement = orientation("n_rep0001", GOOD["body"], origin=Origin.CONSOLIDATION,
                              related=["n_or0001", "n_or0002"])
    replacement.extra["consolidated"] = ["n_or0001", "n_or0002"]
    layers.project.save(replacement)                      # killed after the replacement, before its sources moved
    report = m.maintain(layers, now=NOW)
    assert _cold(layers) == {"n_or0001", "n_or0002"} and report.archived == {"completed": 2}


# -- in the learner ---------------------------------------------------------------------------------------------
def test_the_learner_runs_the_pass_after_each_job_and_holds_the_hard_mark(tmp_path: Path) -> None:
    from rose.sim import SimConfig, Simulation, default_world
    from rose.sim.mining import MiningBackend, MiningConfig

    world = default_world(3)
    backend = MiningBackend(world, SimConfig(seed=3), MiningConfig(useless=0.9, seed=3))
    hard = {("project", "lesson"): 2400, ("project", "orientation"): 300}
    with m.budgets(hard), Simulation(tmp_path, world=world, backend=backend, tag="t", correct=True) as sim:
        for task in world.sample_tasks(40, seed=3):
            result = sim.run(task)
            for _s, memory_type, _h, tokens, _c, _ct in sim.store.index.buckets():
                assert tokens <= hard[("project", memory_type)], (result.n, memory_type, tokens)
        assert any("retention:" in line for r in sim.results for line in r.learner)
        assert sim.store.index.buckets() and any(c for *_x, c, _ct in sim.store.index.buckets())
        assert all((sim.store.root / r.path).exists() for r in sim.store.rows())
