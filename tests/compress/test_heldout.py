"""Held-out evaluation: episodes that never accept a compression are replayed after it is accepted; the pass rate
is recorded and shown; a node that fails its held-out set is demoted and its child is served again."""
from __future__ import annotations

from pathlib import Path

from rose import render, report
from rose.compress import episodes as corpus
from rose.model import Episode, Status
from rose.sim import SimBackend, SimConfig, Simulation, default_world

from .helpers import key, lineage, task


def test_the_split_is_stable_and_near_the_fraction() -> None:
    eps = [Episode(id=f"e_{i}", session=f"s-{i}", prompt="p") for i in range(2000)]
    held = [e for e in eps if corpus.is_heldout(e, 0.3)]
    assert 0.27 < len(held) / len(eps) < 0.33
    assert held == [e for e in eps if corpus.is_heldout(e, 0.3)]
    assert all(corpus.is_heldout(e, 0.5) for e in held)              # a larger fraction only adds episodes
    validation, heldout = corpus.split(eps, 0.3)
    assert not set(e.id for e in validation) & set(e.id for e in heldout)


def _with_pattern(tmp_path: Path, pattern: str, config: dict) -> Simulation:
    """A simulation whose first sessions fall on the validation (V) / held-out (H) sides in this order."""
    world = default_world()
    for tag in (f"h{i}" for i in range(500)):
        sim = Simulation(tmp_path / tag, world=world, backend=SimBackend(world, SimConfig()), config=config,
                         families=["retry"], tag=tag)
        sides = "".join("H" if corpus.is_heldout(Episode(id="e", session=sim.session_id(n + 1), prompt=""),
                                                 config["compression"]["heldout_fraction"]) else "V"
                        for n in range(len(pattern)))
        if sides == pattern:
            return sim
    raise AssertionError("no tag gives that pattern")


def test_a_compression_that_fails_its_heldout_set_is_demoted(tmp_path: Path) -> None:
    config = {"compression": {"heldout_fraction": 0.5, "min_successes": 3, "max_token_ratio": 0.5}}
    with _with_pattern(tmp_path, "VHV", config) as sim:
        common, rare = key(sim, "retry", 0), sim.world.family("retry").facts[-1].key
        sim.run(task(sim, "retry", common))
        sim.run(task(sim, "retry", rare))                             # held out: the compressor never hears of it
        third = sim.run(task(sim, "retry", common))
        assert "compressed" in third.learner[0] and "held-out 0/1: demoted" in third.learner[0]
        l0, l1 = lineage(sim, "retry")
        assert (l1.heldout_passed, l1.heldout_total, l1.heldout_pass_rate) == (0, 1, 0.0)
        assert l1.status is Status.DEMOTED and l0.status is Status.ACTIVE
        assert rare not in " ".join(l0.spans or [])                   # held-out work fed no span evidence
        assert any(rare in h for h in l0.preserve)                    # the demotion leaves what was missed
        assert f'id="{l0.id}"' in sim.run(task(sim, "retry", rare)).block

        status = report.status(sim.layers)
        assert (status.compression.demoted, status.compression.heldout_total) == (1, 1)
        assert "held-out 0/1 reproduced (0%)" in render.status(status)
        assert status.to_dict()["compression"]["heldout_rate"] == 0.0
        tree = render.tree(report.tree(sim.layers))
        assert f"{l1.id} retry/Retrying remote calls [demoted]  held-out 0/1" in tree


def test_a_compression_that_passes_its_heldout_set_records_it(tmp_path: Path) -> None:
    config = {"compression": {"heldout_fraction": 0.5, "min_successes": 3}}
    with _with_pattern(tmp_path, "VHV", config) as sim:
        common = key(sim, "retry", 0)
        for _ in range(3):
            last = sim.run(task(sim, "retry", common))
        assert "held-out 1/1" in last.learner[0] and "demoted" not in last.learner[0]
        _l0, l1 = lineage(sim, "retry")
        assert l1.status is Status.ACTIVE and l1.heldout_pass_rate == 1.0
        assert "held-out 1/1 reproduced (100%)" in render.status(report.status(sim.layers))
