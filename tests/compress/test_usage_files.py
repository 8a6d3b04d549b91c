"""Using a lesson through the real learner changes no byte of any lesson file: credit, compression attempts that are
rejected (a failed replay's preserve hint, the backoff), a trial that waits, a sticky patch and the holder it credits.
What does change a file is a change of what is served: a new level, a trial attached or closed, a repair."""
from __future__ import annotations

from pathlib import Path

from rose.compress.graph import PATCH_HEADER, TRIAL_HEADER
from rose.sim import SimBackend

from .conftest import make_sim
from .helpers import apex, dropped_fact, key, lineage, run, task

ONE_LEVEL = {"compression": {"max_token_ratio": 0.5, "max_level": 1}}


def files(sim) -> dict[str, bytes]:
    return {p.relative_to(sim.store.root).as_posix(): p.read_bytes()
            for p in sorted(sim.store.nodes_dir.rglob("*.md"))}


def test_credit_and_a_rejected_compression_attempt_change_no_file(tmp_path: Path) -> None:
    with make_sim(tmp_path, config={"compression": {"max_token_ratio": 0.6}}) as sim:
        sim.backend.schedule("compress", "lose_needed")
        f0, f1 = key(sim, "retry", 0), key(sim, "retry", 1)
        before = files(sim)
        first = sim.run(task(sim, "retry", f0))
        assert first.success and files(sim) == before                          # credited, file untouched
        second = sim.run(task(sim, "retry", f1))
        assert "replays failed" in second.learner[0]
        assert files(sim) == before                                            # attempted, rejected: untouched
        [l0] = lineage(sim, "retry")
        assert (l0.use_count, l0.stats.successes, len(l0.covers_tasks)) == (2, 2, 2)
        assert len(l0.preserve) == 1 and f1 in l0.preserve[0]                  # what the attempt learned is kept
        assert l0.last_attempt and l0.last_attempt_successes == 2 and l0.spans is not None


class _Bloated(SimBackend):
    def _compress(self, r):
        return {"title": r.lesson.title, "gist": "g", "body": r.lesson.body[: int(len(r.lesson.body) * 0.9)],
                "dropped": [{"claim": "tail", "kind": "fact", "holder": r.lesson.id}]}


def test_the_backoff_of_a_candidate_too_long_changes_no_file(tmp_path: Path) -> None:
    with make_sim(tmp_path) as sim:
        sim.backend = _Bloated(sim.world)
        f0 = key(sim, "retry", 0)
        before = files(sim)
        _a, second = run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        assert "not small enough" in second.learner[0]
        assert files(sim) == before
        assert lineage(sim, "retry")[0].rejections == 1


def test_descent_changes_a_file_only_when_what_is_served_changes(tmp_path: Path) -> None:
    with make_sim(tmp_path, config=ONE_LEVEL) as sim:
        f0 = key(sim, "retry", 0)
        run(sim, task(sim, "retry", f0), task(sim, "retry", f0))
        l0, l1 = lineage(sim, "retry")
        needed = dropped_fact(sim, l1)
        claim = next(c.claim for c in l1.dropped if needed in c.claim)
        path = f"nodes/retry/{l1.id}.md"

        before = files(sim)
        failed = sim.run(task(sim, "retry", needed))                   # a trial is attached: served text changes
        assert not failed.success and "descent on" in failed.learner[0]
        with_trial = files(sim)
        assert with_trial[path] != before[path] and TRIAL_HEADER.encode() in with_trial[path]
        assert apex(sim, "retry").stats.expansions == 1

        waited = sim.run(task(sim, "retry", f0))                        # the trial waits: idle, no byte
        assert waited.success and "rescue" not in waited.learner[0]
        assert files(sim) == with_trial and apex(sim, "retry").trials[0].idle == 1

        rescued = sim.run(task(sim, "retry", needed))                   # rescued: the trial section goes
        assert "rescue" in rescued.learner[0]
        after_rescue = files(sim)
        assert TRIAL_HEADER.encode() not in after_rescue[path]

        again = sim.run(task(sim, "retry", needed))                     # a sticky patch rescues again: usage only
        assert f"{PATCH_HEADER}\n- {claim}" in again.block and "sticky patch rescued" in again.learner[0]
        assert files(sim) == after_rescue
        [c] = [c for c in apex(sim, "retry").dropped if c.claim == claim]
        assert (c.rescues, c.attempts) == (2, 2)
        assert sim.store.get(l0.id).stats.rescues == 2                 # the holder is credited, its file untouched
