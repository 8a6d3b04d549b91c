"""Credit in the learner, in the simulated world (real hooks, real learner, the `sim` judge): samples in the usage
log, counted once; a harmful lesson found, withdrawn and named once; episodes say where their outcome came from."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from rose import cli
from rose.credit.decide import Verdict
from rose.credit.record import WITHDRAWN_PREFIX, arms_of, record_session
from rose.retention import maintain
from rose.credit.report import lessons
from rose.model import Node, Origin, Status
from rose.sim import SimBackend, SimConfig, Simulation
from rose.sim.world import FAST_TESTS, World
from rose.store.sessions import SessionState, update_session


def plant(sim: Simulation) -> Node:
    node = Node(id=sim.store.new_id(), family="testing-speed", title=FAST_TESTS.title, body=FAST_TESTS.body,
                gist="Faster test runs", tags=list(FAST_TESTS.tags), origin=Origin.REFLECTION, importance=0.7)
    sim.store.save(node)
    return node


def run_cli(*args: str, cwd: Path) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main([*args, "--cwd", str(cwd)]) == 0
    return out.getvalue()


@pytest.fixture
def harmful_world(tmp_path: Path):
    world = World(seed=5, traps=(FAST_TESTS,))
    config = {"compression": {"enabled": False},
              "credit": {"withhold_rate": 0.5, "min_samples": 8, "max_withheld": 200}}
    # Retention's floor would archive this lesson first (it is named as used in failing sessions, so negative credit
    # takes its importance to the floor in about seven uses): off here, so what is tested is the randomized trial
    # alone, the mechanism that also finds harm attribution cannot see.
    with maintain.only(maintain.Policy(archive=False)), \
            Simulation(tmp_path / "sim", world=world, backend=SimBackend(world, SimConfig(seed=5)), config=config,
                       tag="t5") as sim:
        # every task of these two families needs a fact the trap spoils: the harm is not diluted by unrelated work
        yield sim, plant(sim), world.sample_tasks(120, seed=5, families=["testing", "database"])


def test_a_harmful_lesson_is_found_withdrawn_and_named_once(harmful_world) -> None:
    sim, harmful, tasks = harmful_world
    good = {n.id for n in sim.nodes() if n.id != harmful.id}
    told, after = [], None
    for task in tasks:
        result = sim.run(task)
        if "stopped serving" in result.notice:
            told.append(sim.n)
        node = next(n for n in sim.nodes() if n.id == harmful.id)
        if node.status is not Status.ACTIVE and after is None:
            after = sim.n
        if after is not None and sim.n > after + 5:
            break
    assert after is not None, "the harmful lesson was never withdrawn"
    node = next(n for n in sim.nodes() if n.id == harmful.id)
    assert node.status is Status.ARCHIVED and node.learned_importance == pytest.approx(0.1)
    assert node.extra["archived_because"].startswith(WITHDRAWN_PREFIX)
    assert told == [after + 1]                          # named on the next prompt's notice, and only then
    assert all(n.status is Status.ACTIVE for n in sim.nodes() if n.id in good)   # no good lesson withdrawn
    assert all(harmful.id not in r.block for r in sim.results[after:])           # and it is never served again
    listed = lessons(sim.layers)
    assert listed[0].id == harmful.id and listed[0].verdict is Verdict.HARMFUL
    assert listed[0].credit.effect < 0
    status = run_cli("status", cwd=sim.project)
    assert f"harmful {harmful.id} {FAST_TESTS.title}: withdrawn" in status and "withholding 50%" in status
    credit = run_cli("credit", cwd=sim.project)
    assert credit.splitlines()[2].startswith("harmful") and harmful.id in credit.splitlines()[2]
    data = json.loads(run_cli("credit", "--json", cwd=sim.project))
    first = data["lessons"][0]
    assert data["withhold_rate"] == 0.5 and first["id"] == harmful.id and first["verdict"] == "harmful"
    assert first["effect"] < 0 and first["served"]["n"] > 0 and first["withheld"]["n"] > 0
    # the counts live in the usage log, never in the lesson's file
    log = (sim.store.root / "usage.jsonl").read_text(encoding="utf-8")
    assert '"credit:withheld:n"' in log and '"credit:suspect"' in log
    text = sim.store.node_path(node).read_text(encoding="utf-8")
    assert "credit:served:" not in text and "credit:withheld:" not in text


def test_samples_are_counted_once_and_only_clean_arms_count(tmp_path: Path) -> None:
    config = {"credit": {"withhold_rate": 0.5}, "compression": {"enabled": False}}
    with Simulation(tmp_path / "sim", config=config, tag="t6") as sim:
        for task in sim.world.sample_tasks(6, seed=6):
            sim.run(task)
        episode = next(iter(sim.store.episodes()[0]))
        arms = arms_of(sim.store, episode.session)
        before = {i.id: i.credit for i in lessons(sim.layers)}
        assert arms and episode.extra["arms"] == arms
        record_session(sim.layers, sim.store, episode.session, episode, sim.layers.settings())   # a second run
        assert {i.id: i.credit for i in lessons(sim.layers)} == before
        # a lesson withheld, then served after all in the same session (withholding switched off) is no sample
        withheld = next(i for i, a in arms.items() if a == "served")

        def flip(state: SessionState) -> None:
            state.arms[withheld] = "withheld"
        update_session(sim.store, episode.session, flip)
        assert withheld not in arms_of(sim.store, episode.session)


def test_episodes_say_where_their_outcome_came_from(tmp_path: Path) -> None:
    with Simulation(tmp_path / "sim", tag="t7") as sim:
        tasks = sim.world.sample_tasks(40, seed=7)
        work = next(t for t in tasks if t.needs)
        chores = next(t for t in tasks if not t.needs)
        sim.run(work)
        sim.run(chores)
        by_prompt = {e.prompt: e for e in sim.store.episodes()[0]}
        checked = by_prompt[work.prompt]
        assert checked.extra["outcome_from"] == "execution" and checked.extra["check"] == "uv run pytest"
        assert checked.extra["evidence"] and checked.outcome.value == ("success" if sim.results[0].success
                                                                      else "failure")
        # generic work changes no code: a test run alone is not evidence, the judge's reading is the outcome
        assert by_prompt[chores.prompt].extra["outcome_from"] == "assess"
        assert json.loads(json.dumps(checked.to_dict()))["outcome_from"] == "execution"
