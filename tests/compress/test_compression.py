"""Stage 5 through the real learner: eligibility, the compress call and its checks in code, replay validation,
preserve hints, and the new level above the old."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.compress import eligibility, observe
from rose.compress.graph import Graph, base_body
from rose.config import CompressionSettings
from rose.judge import FailureKind, JudgeFailure
from rose.model import Episode, EpisodeOutcome, Node, Origin, Status, Trial
from rose.sim import SimBackend
from rose.tokens import estimate

from .conftest import make_sim
from .helpers import apex, key, lineage, run, task


def test_usage_earns_a_compression_validated_by_replay(sim) -> None:
    f0 = key(sim, "retry", 0)
    first, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
    assert "compressed" not in first.learner[0]
    assert "compressed" in second.learner[0] and "2/2 replays passed" in second.learner[0]
    l0, l1 = lineage(sim, "retry")
    assert (l1.level, l1.origin, l1.status, l1.derived_from) == (1, Origin.COMPRESSION, Status.ACTIVE, [l0.id])
    assert (l0.status, l0.parents) == (Status.SUPERSEDED, [l1.id])           # superseded, never deleted
    assert estimate(l1.body) <= 0.75 * estimate(l0.body)
    assert l1.dropped and {c.holder for c in l1.dropped} == {l0.id}
    for claim in l1.dropped:                                                # every loss is declared
        assert claim.claim not in l1.body
    assert l0.spans and any(f0 in s for s in l0.spans)                       # the evidence the compressor got
    assert sim.backend.calls.counts["replay_probe"] == sim.backend.calls.counts["replay_judge"] == 2
    block = sim.run(task(sim, "retry", f0)).block                           # the short form is what is served now
    assert f'id="{l1.id}"' in block and l0.id not in block


def test_deltas_are_inherited_up_the_levels(tmp_path: Path) -> None:
    with make_sim(tmp_path) as sim:
        f0 = key(sim, "retry", 0)
        run(sim, *[task(sim, "retry", f0) for _ in range(4)])
        l0, l1, l2 = lineage(sim, "retry")
        assert l2.derived_from == [l1.id] and l1.parents == [l2.id]
        inherited = [c for c in l2.dropped if c.holder == l0.id]
        assert [c.claim for c in inherited] == [c.claim for c in l1.dropped]   # the apex knows detail 2 levels down
        assert any(c.holder == l1.id for c in l2.dropped)
        assert all(c.claim not in l2.body for c in l2.dropped)


def test_a_candidate_that_declares_nothing_is_under_reported(tmp_path: Path) -> None:
    with make_sim(tmp_path) as sim:
        sim.backend.schedule("compress", "under_report")
        f0 = key(sim, "retry", 0)
        _first, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "under-reported" in second.learner[0]
        assert [n.level for n in lineage(sim, "retry")] == [0]
        third = sim.run(task(sim, "retry", f0))
        assert "compressed" not in third.learner[0]           # an attempt is earned anew by new successful use
        fourth = sim.run(task(sim, "retry", f0))
        assert "compressed" in fourth.learner[0]


def test_an_unreadable_judge_is_a_failure_never_a_pass(tmp_path: Path) -> None:
    with make_sim(tmp_path) as sim:
        sim.backend.schedule("replay_judge", "unreadable", "unreadable")   # the ask and its one retry
        f0 = key(sim, "retry", 0)
        _first, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "1 of 2 replays failed" in second.learner[0]
        [l0] = lineage(sim, "retry")
        assert l0.status is Status.ACTIVE and l0.preserve == []   # an outage teaches the compressor nothing
    events = [line for line in (sim.store.events_path).read_text().splitlines() if '"replay_judge"' in line]
    assert any('"failure": "schema"' in line for line in events)


def test_failed_replays_become_preserve_hints_and_the_next_attempt_keeps_them(tmp_path: Path) -> None:
    with make_sim(tmp_path, config={"compression": {"max_token_ratio": 0.6}}) as sim:
        sim.backend.schedule("compress", "lose_needed")
        f0, f1 = key(sim, "retry", 0), key(sim, "retry", 1)
        _a, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f1))
        assert "replays failed" in second.learner[0]
        [l0] = lineage(sim, "retry")
        assert len(l0.preserve) == 1 and f1 in l0.preserve[0]            # the judge's reason names what was lost
        _c, fourth = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "compressed" in fourth.learner[0]
        l1 = apex(sim, "retry")
        assert l1.level == 1 and f1 in l1.body and f0 in l1.body


class _NoSpanEvidence(SimBackend):
    """A judge that cannot answer the span observation: the compressor must be told the evidence is absent."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.compress_requests = []

    def _assess(self, r):
        if r.prompt == observe.SPANS_PROMPT:
            raise JudgeFailure(FailureKind.TIMEOUT, "simulated outage")
        return super()._assess(r)

    def _compress(self, r):
        self.compress_requests.append(r)
        return super()._compress(r)


def test_without_span_evidence_the_compressor_is_told_and_keeps_every_fact(tmp_path: Path) -> None:
    from rose.judge import calls

    with make_sim(tmp_path) as sim:
        sim.backend = _NoSpanEvidence(sim.world)
        f0 = key(sim, "retry", 0)
        run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        [request] = sim.backend.compress_requests
        assert request.working_spans is None
        assert "No record exists of which sentences did work" in calls.COMPRESS.render(request)
        l1 = apex(sim, "retry")
        assert l1.level == 1
        assert all(f.key in l1.body for f in sim.world.family("retry").all_facts)   # conservative: facts kept


class _Bloated(SimBackend):
    def _compress(self, r):
        return {"title": r.lesson.title, "gist": "g", "body": r.lesson.body[: int(len(r.lesson.body) * 0.9)],
                "dropped": [{"claim": "tail", "kind": "fact", "holder": r.lesson.id}]}


def test_a_candidate_over_the_token_ratio_is_rejected(tmp_path: Path) -> None:
    with make_sim(tmp_path) as sim:
        sim.backend = _Bloated(sim.world)
        f0 = key(sim, "retry", 0)
        _a, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "not small enough" in second.learner[0]
        assert sim.backend.calls.counts.get("replay_probe", 0) == 0     # checked in code before any replay


# -- eligibility, each condition on its own ------------------------------------------------------------------
def _episode(store, session: str, node_ids: list[str], outcome=EpisodeOutcome.SUCCESS) -> Episode:
    ep = Episode(id=store.new_episode_id(), session=session, prompt="p", outcome=outcome, used=node_ids,
                 served=node_ids, accepted_summary="ok")
    store.save_episode(ep)
    return ep


def _lesson(store, **kw) -> Node:
    node = Node(id=store.new_id(), family="f", title="t", body="- one.\n- two.", **kw)
    node.stats.successes = kw.pop("successes", 2) if "successes" in kw else 2
    store.save(node)
    return node


def test_eligibility_conditions(layers) -> None:
    store = layers.project
    graph = Graph(layers)
    cs = CompressionSettings(heldout_fraction=0.0)
    node = _lesson(store)
    assert eligibility.check(graph, node, cs).reason == "no recorded episodes to validate against"
    ep = _episode(store, "s1", [node.id])
    node = store.update(node.id, lambda n: n.covers_tasks.append(ep.id))
    assert eligibility.check(graph, node, cs).ok
    assert not eligibility.check(graph, node, CompressionSettings(enabled=False)).ok
    assert "only held-out" in eligibility.check(graph, node, CompressionSettings(heldout_fraction=1.0)).reason
    node.stats.successes = 1
    assert "1 of 2" in eligibility.check(graph, node, cs).reason
    node.stats.successes, node.last_attempt_successes = 3, 2
    assert "since the last attempt" in eligibility.check(graph, node, cs).reason
    node.last_attempt_successes = 0
    node.status = Status.DISPUTED
    assert "status disputed" in eligibility.check(graph, node, cs).reason
    node.status = Status.ACTIVE
    node.level = 6
    assert "max_level" in eligibility.check(graph, node, cs).reason
    node.level = 0
    node.trials = [Trial(episode="e_x")]
    assert "descent is in progress" in eligibility.check(graph, node, cs).reason
    node.trials = []
    node.last_attempt = "2999-01-01T00:00:00Z"
    assert "cooldown" in eligibility.check(graph, node, CompressionSettings(heldout_fraction=0.0, cooldown_s=60)).reason
    node.last_attempt = ""
    merge_parent = Node(id=store.new_id(), family="f", title="m", body="m", origin=Origin.MERGE, level=1,
                        derived_from=[node.id])
    store.save(merge_parent)
    node.parents = [merge_parent.id]
    assert eligibility.check(graph, node, cs).ok                     # a merge parent does not freeze it
    comp = Node(id=store.new_id(), family="f", title="c", body="c", origin=Origin.COMPRESSION, level=1,
                derived_from=[node.id])
    store.save(comp)
    node.parents.append(comp.id)
    assert "not an apex" in eligibility.check(graph, node, cs).reason


def test_failed_episodes_are_not_an_oracle(layers) -> None:
    store = layers.project
    node = _lesson(store)
    ep = _episode(store, "s1", [node.id], EpisodeOutcome.FAILURE)
    node = store.update(node.id, lambda n: n.covers_tasks.append(ep.id))
    elig = eligibility.check(Graph(layers), node, CompressionSettings(heldout_fraction=0.0))
    assert not elig.ok and "no recorded episodes" in elig.reason


@pytest.mark.parametrize("body,expected", [
    ("- A fact. Its reason.\nExample: x.", ["A fact.", "Its reason.", "Example: x."]),
    ("one\n\n# heading\n2. two", ["one", "two"]),
])
def test_sentences_are_the_units_of_span_evidence(body: str, expected: list[str]) -> None:
    from rose.compress.graph import sentences

    assert sentences(body) == expected


def test_the_trial_section_is_stripped_from_the_lesson_itself() -> None:
    from rose.compress.graph import TRIAL_HEADER, with_trial_section

    body = with_trial_section("- base.", ["claim one", "From n_1 (level 0):\nline a\nline b"])
    assert body.startswith("- base.\n\n" + TRIAL_HEADER) and "\n  line b" in body
    assert base_body(body) == "- base."
    assert with_trial_section("- base.", []) == "- base."


class _CompressOutage(SimBackend):
    def _compress(self, r):
        raise JudgeFailure(FailureKind.TIMEOUT, "simulated outage")


def test_a_compress_outage_skips_the_attempt_and_the_learner_job_still_completes(tmp_path: Path) -> None:
    from rose.learn.jobs import queued

    with make_sim(tmp_path) as sim:
        sim.backend = _CompressOutage(sim.world)
        f0 = key(sim, "retry", 0)
        _a, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "compress did not answer (timeout)" in second.learner[0]
        assert queued(sim.store) == [] and len(sim.store.episodes()[0]) == 2
        [l0] = lineage(sim, "retry")
        assert l0.status is Status.ACTIVE and l0.last_attempt
        from rose.compress import payback

        assert payback.failures(sim.store, l0.id) == 0   # an outage is not the lesson's failed attempt


def test_a_store_error_in_one_step_stops_that_step_not_the_learner(tmp_path: Path, monkeypatch) -> None:
    from rose.compress import repair
    from rose.errors import NodeNotFound
    from rose.learn.jobs import queued

    def gone(found, after_rescues):
        raise NodeNotFound(found.node.id)
    monkeypatch.setattr(repair, "repair", gone)
    with make_sim(tmp_path) as sim:
        f0 = key(sim, "retry", 0)
        _a, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "repair step stopped: NodeNotFound" in second.learner[0]
        assert "compressed" in second.learner[0]                      # the later steps still ran
        assert queued(sim.store) == []
