"""Evolution through the real hooks and the real learner in the simulated world: a skill in trial is served in its
treatment sessions only, named on the notice either way, and the learner turns execution-verified outcomes into
samples of the right arm; a judge that cannot propose anything costs a session nothing."""
from __future__ import annotations

from pathlib import Path

from rose.evolve import runtime, samples, synth
from rose.evolve.decide import CONTROL, TREATMENT
from rose.evolve.registry import State, editing, read
from rose.evolve.screen import Proposal
from rose.sim import Simulation

TESTING_SKILL = Proposal("skill", "test-suite-steps", "Steps for fixing the test suite.", ("test suite",), "", "none",
                         "1. Run the whole suite once before changing anything.\n2. Fix one failure at a time.",
                         (("fix the test suite", True), ("deploy the app", False)))


def test_a_skill_in_trial_through_the_real_hooks_and_learner(tmp_path: Path) -> None:
    config = {"evolution": {"enabled": True, "min_samples": 3}, "compression": {"enabled": False},
              "credit": {"withhold_rate": 0}}
    with Simulation(tmp_path / "sim", config=config, tag="ev1") as sim:
        synth.register(sim.store, TESTING_SKILL, ["n_src"], "project", rejected=None)
        with editing(sim.store) as artifacts:
            samples.open_trial(artifacts[0], "test", "2026-01-01T00:00:00Z")
        aid = read(sim.store)[0].id
        tasks = [t for t in sim.world.sample_tasks(40, seed=11, families=["testing"]) if t.family == "testing"][:16]
        arms = {}
        for task in tasks:
            result = sim.run(task)
            arm = runtime.exposures(sim.store, result.session)[aid].arm
            arms[result.session] = arm
            if arm == TREATMENT:
                assert '<skill name="test-suite-steps"' in result.block and "applied (trial)" in result.notice
            else:
                assert "<skill" not in result.block and "held back (trial control)" in result.notice
        a = read(sim.store)[0]
        assert TREATMENT in arms.values() and CONTROL in arms.values()
        # a sample is a failure, or a pass a check verified; a pass resting on the judge's reading is none
        episodes = {e.session: e for e in sim.store.episodes()[0]}
        assert len(episodes) == len(tasks)                       # nothing failed on the way
        expected = {arm: sum(samples.verdict_of(episodes[sid]) is not None for sid, v in arms.items() if v == arm)
                    for arm in (TREATMENT, CONTROL)}
        if a.state is State.TRIAL:
            assert (a.treatment.n, a.control.n) == (expected[TREATMENT], expected[CONTROL])
            assert a.treatment.n + a.control.n > 0
        # the sim judge answers no `evolve` call: memories minted meanwhile produce no record
        assert [x.id for x in read(sim.store)] == [aid]
