"""Merge: lessons used together on successful work earn a shared parent, validated on the union of their regression
sets; a lesson can then have a merge parent and a compression parent at once.

A parent pays only where a selector chooses (rose.compress.payback.merge_pays; tests/compress/test_payback.py), and
this two-lesson world is served whole; so these tests make every due merge (`Stages(merge_always=True)`) and keep
recall serving both lessons, which a filtering selector in so small a world would not."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.compress import Stages, only
from rose.model import Origin, Status
from rose.sim.world import PORT_5433

from .conftest import make_sim
from .helpers import lineage


@pytest.fixture
def outgrown():
    with only(Stages(merge_always=True)):
        yield


def _cross(sim):
    t, d = sim.world.family("testing"), sim.world.family("database")
    return sim.world.task("testing", [t.core.key, d.core.key, PORT_5433.key], 2000 + sim.n, "cross")


def test_lessons_used_together_earn_a_shared_parent_beside_their_compression(tmp_path: Path, outgrown) -> None:
    with make_sim(tmp_path, families=("testing", "database"), config={"compression": {"max_level": 2}}) as sim:
        results = [sim.run(_cross(sim)) for _ in range(4)]
        assert all(r.success for r in results)
        assert "merged" in results[3].learner[0]
        [parent] = [n for n in sim.nodes() if n.origin is Origin.MERGE]
        t1, d1 = (lineage(sim, f)[1] for f in ("testing", "database"))
        assert sorted(parent.derived_from) == sorted([t1.id, d1.id]) and parent.level == 2
        assert PORT_5433.key in parent.body                          # what the two have in common
        for child in (t1, d1):                                        # children keep their detail, still served
            assert child.parents == [parent.id] and child.status is Status.ACTIVE
        for _ in range(4):
            assert sim.run(_cross(sim)).success
        both = [n for n in sim.nodes() if len(n.parents) == 2]
        assert both, "a lesson compressed after its merge has two parents"
        for child in both:
            kinds = sorted(sim.store.get(p).origin.value for p in child.parents)
            assert kinds == ["compression", "merge"] and child.parents[0] == parent.id
            assert child.status is Status.SUPERSEDED
        assert sim.store.get(parent.id).status is Status.ACTIVE


def test_a_parent_that_overgeneralises_fails_replay_on_the_union(tmp_path: Path, outgrown) -> None:
    with make_sim(tmp_path, families=("testing", "database"), config={"compression": {"max_level": 1}}) as sim:
        sim.backend.schedule("merge", "overgeneralise")
        results = [sim.run(_cross(sim)) for _ in range(4)]
        assert "merge of" in results[3].learner[0] and "replays failed" in results[3].learner[0]
        assert not [n for n in sim.nodes() if n.origin is Origin.MERGE]
