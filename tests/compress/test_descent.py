"""Stage 6 through the real learner, across sessions: compress -> fail -> descend -> rescue -> repair, escalation to
level 0, knowledge gaps, the three strategies, and the ranking with and without a judge."""
from __future__ import annotations

from pathlib import Path

from rose.compress.rank import rank
from rose.compress.graph import PATCH_HEADER, TRIAL_HEADER, base_body
from rose.config import DescentSettings
from rose.judge import FailureKind, JudgeFailure
from rose.model import Claim, Status
from rose.sim import SimBackend

from .conftest import make_sim
from .helpers import apex, dropped_fact, key, lineage, run, task

ONE_LEVEL = {"compression": {"max_token_ratio": 0.5, "max_level": 1}}


def _compressed(sim) -> tuple:
    """Two successes on the core and the most popular fact: the lesson is compressed once, rare facts dropped."""
    f0 = key(sim, "retry", 0)
    run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
    l0, l1 = lineage(sim, "retry")
    return l0, l1, dropped_fact(sim, l1)


def test_compress_fail_descend_rescue_repair(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        l0, l1, needed = _compressed(sim)
        claim = next(c.claim for c in l1.dropped if needed in c.claim)

        failed = sim.run(task(sim, "retry", needed))                 # the short form lacks it: the work fails
        assert not failed.success and "descent on" in failed.learner[0]
        l1 = apex(sim, "retry")
        [trial] = l1.trials
        assert (trial.kind, trial.attached, trial.strategy) == ("claim", [claim], "delta-patch")
        assert TRIAL_HEADER in l1.body and claim in l1.body and l1.stats.expansions == 1

        rescued = sim.run(task(sim, "retry", needed))                 # next session: the detail is served
        assert TRIAL_HEADER in rescued.block and rescued.success
        assert "rescue" in rescued.learner[0]
        l1 = apex(sim, "retry")
        [c] = [c for c in l1.dropped if c.claim == claim]
        assert (c.rescues, c.attempts, l1.trials) == (1, 1, [])
        assert base_body(l1.body) == l1.body                         # the trial section is gone...
        assert sim.store.get(l0.id).stats.rescues == 1               # ...the holder's detail is credited

        again = sim.run(task(sim, "retry", needed))                   # ...and it is a sticky patch at recall
        assert f"{PATCH_HEADER}\n- {claim}" in again.block and again.success
        assert "sticky patch rescued" in again.learner[0]
        last = sim.run(task(sim, "retry", needed))
        assert "repair: folded" in last.learner[0]                    # 3 rescues: folded back for good
        l1 = apex(sim, "retry")
        assert claim in l1.body and all(c.claim != claim for c in l1.dropped)
        assert sim.store.get(l0.id).status is Status.SUPERSEDED       # level 0 untouched, never deleted
        assert sim.run(task(sim, "retry", needed)).success


def test_a_trial_the_work_did_not_need_waits(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        _l0, _l1, needed = _compressed(sim)
        sim.run(task(sim, "retry", needed))
        ok = sim.run(task(sim, "retry", key(sim, "retry", 0)))       # unrelated work: the trial neither wins nor loses
        assert ok.success and "rescue" not in ok.learner[0]
        [trial] = apex(sim, "retry").trials
        assert trial.idle == 1 and trial.tries == 1


def test_escalation_to_level0_that_rescues_demotes_the_overcut_lesson(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        sim.backend.schedule("compress", "silent_drop")              # drops one more fact without declaring it
        f0 = key(sim, "retry", 0)
        run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        l0, l1 = lineage(sim, "retry")
        declared = {k for c in l1.dropped for k in sim.world.keys_in(c.claim)}
        [lost] = [f.key for f in sim.world.family("retry").all_facts if f.key not in l1.body and f.key not in declared]

        failed = sim.run(task(sim, "retry", lost))
        assert "escalated to level 0" in failed.learner[0]
        [trial] = apex(sim, "retry").trials
        assert trial.kind == "level0" and trial.attached == [l0.id]

        rescued = sim.run(task(sim, "retry", lost))
        assert rescued.success and "rescue by level 0" in rescued.learner[0]
        l0, l1 = lineage(sim, "retry")
        assert l1.status is Status.DEMOTED and l0.status is Status.ACTIVE and l1.trials == []
        assert any("only level 0 had it" in h and lost in h for h in l0.preserve)
        block = sim.run(task(sim, "retry", lost)).block
        assert f'id="{l0.id}"' in block and l1.id not in block


def test_a_failure_nothing_below_explains_is_a_knowledge_gap(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        _compressed(sim)
        gap = sim.world.family("retry").gap.key
        result = sim.run(task(sim, "retry", gap, kind="gap"))
        assert "knowledge gap" in result.learner[0]
        l1 = apex(sim, "retry")
        [episode] = [e for e in sim.store.episodes()[0] if e.session == result.session]
        assert l1.gaps == [episode.id]
        assert l1.trials == [] and l1.status is Status.ACTIVE          # a gap is not a compression bug


def test_escalated_detail_that_still_fails_is_recorded_as_a_gap(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        _l0, _l1, needed = _compressed(sim)
        gap = sim.world.family("retry").gap.key
        hard = task(sim, "retry", needed, gap, kind="gap")
        first = sim.run(hard)
        assert "descent on" in first.learner[0]                        # the claim matching its symptom is tried
        second = sim.run(hard)
        assert "escalated to level 0" in second.learner[0]             # used, still failed, nothing else to try
        third = sim.run(hard)
        assert "knowledge gap" in third.learner[0]
        l1 = apex(sim, "retry")
        assert l1.trials == [] and len(l1.gaps) == 2 and l1.status is Status.ACTIVE


def test_delta_jump_swaps_in_the_holder_and_credits_its_claim(tmp_path: Path) -> None:
    with make_sim(tmp_path, config={**ONE_LEVEL, "recall": {"strategy": "delta-jump"}}) as sim:
        l0, _l1, needed = _compressed(sim)
        sim.run(task(sim, "retry", needed))
        [trial] = apex(sim, "retry").trials
        assert (trial.kind, trial.attached) == ("node", [l0.id]) and any(needed in c for c in trial.claims)
        rescued = sim.run(task(sim, "retry", needed))
        assert rescued.success and "jumped to" in rescued.learner[0]
        l1 = apex(sim, "retry")
        assert [c.rescues for c in l1.dropped if needed in c.claim] == [1] and l1.status is Status.ACTIVE


def test_stepwise_walks_the_children_and_serves_the_level_that_worked(tmp_path: Path) -> None:
    with make_sim(tmp_path, config={**ONE_LEVEL, "recall": {"strategy": "stepwise"}}) as sim:
        l0, _l1, needed = _compressed(sim)
        sim.run(task(sim, "retry", needed))
        [trial] = apex(sim, "retry").trials
        assert (trial.kind, trial.attached, trial.claims) == ("node", [l0.id], [])   # the manifest is ignored
        rescued = sim.run(task(sim, "retry", needed))
        assert rescued.success and "stepwise" in rescued.learner[0]
        l0, l1 = lineage(sim, "retry")
        assert l1.status is Status.DEMOTED and l0.status is Status.ACTIVE


class _NoRanking(SimBackend):
    def _rank_repairs(self, r):
        raise JudgeFailure(FailureKind.TIMEOUT, "simulated outage")


def test_without_a_judge_the_ranking_degrades_to_prior_and_cost(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        sim.backend = _NoRanking(sim.world)
        _l0, l1, needed = _compressed(sim)
        result = sim.run(task(sim, "retry", needed))
        assert "no judgement: prior - cost" in result.learner[0]
        [trial] = apex(sim, "retry").trials
        cheapest = min((c for c in l1.dropped), key=lambda c: len(c.claim))
        assert trial.attached == [cheapest.claim]                     # equal priors: the cheapest first


def test_the_score_is_judge_plus_prior_minus_cost() -> None:
    ds = DescentSettings()
    short, long_, proven = Claim("short one"), Claim("a much longer claim " * 5), Claim("proven", rescues=3, attempts=3)
    by_judge = rank([short, long_], {0: 0.1, 1: 0.9}, ds)
    assert [r.claim for r in by_judge] == [long_, short]              # usefulness outweighs cost
    assert by_judge[0].score == ds.w_judge * 0.9 + ds.w_prior * 0.5 - ds.w_cost * 1.0
    absent = rank([long_, short, proven], None, ds)
    assert [r.claim for r in absent] == [proven, short, long_]         # what has worked, then cheapest first
    assert all(r.usefulness is None for r in absent)
    assert absent[0].prior == 4 / 5                                    # Laplace: (3 + 1) / (3 + 2)
