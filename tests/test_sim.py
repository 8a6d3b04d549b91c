"""rose.sim, directly: the simulated world's tasks and agent, and the `sim` backend answering the judge's calls from
the facts a text states. The compression and learning tests run the real stages on top of it; these pin the rules
those tests rely on."""
from __future__ import annotations

from rose.judge import Judge, calls
from rose.sim.agent import act
from rose.sim.backend import SimBackend
from rose.sim.world import default_world


def _block(lessons: list[tuple[str, str, str]]) -> str:
    return "".join(f'<lesson id="{i}" title="{t}">\n{body}\n</lesson>\n' for i, t, body in lessons)


def test_the_task_stream_is_reproducible_and_every_need_is_a_known_fact() -> None:
    world = default_world()
    first, again = world.sample_tasks(30), world.sample_tasks(30)
    assert [t.id for t in first] == [t.id for t in again]
    assert [t.id for t in world.sample_tasks(30, seed=99)] != [t.id for t in first]
    assert all(world.fact(key).key == key for t in first for key in t.needs)
    assert {t.kind for t in world.sample_tasks(200)} >= {"family", "gap", "generic"}


def test_the_agent_succeeds_exactly_when_every_needed_fact_was_served() -> None:
    world = default_world()
    family = world.families[0]
    task = world.task(family.name, [family.core.key, family.facts[0].key], 1)
    served = act(world, task, _block([("n_full01", family.title, family.lesson_body())]))
    assert served.success and {key for key, _id, _attached in served.applied} == set(task.needs)
    partial = act(world, task, _block([("n_core01", family.title, family.core.verbose)]))
    assert not partial.success and partial.missing == [family.facts[0].key]
    assert act(world, task, "").missing == list(task.needs)


def test_the_sim_backend_compresses_conservatively_without_evidence_and_declares_what_it_drops() -> None:
    world = default_world()
    family = world.families[0]
    judge = Judge(SimBackend(world))
    lesson = calls.Lesson("n_full01", family.title, family.lesson_body())
    blind = judge.ask(calls.COMPRESS, calls.CompressRequest(lesson=lesson, working_spans=None), stage="compression")
    assert all(k in blind.body for k in (f.key for f in family.all_facts))      # no evidence: no fact dropped
    seen = judge.ask(calls.COMPRESS, calls.CompressRequest(lesson=lesson, working_spans=[family.core.terse],
                                                           target_ratio=0.3), stage="compression")
    gone = [f.key for f in family.facts if f.key not in seen.body]
    assert family.core.key in seen.body and gone                                # what did work stays
    declared = " ".join(d.claim for d in seen.dropped)
    assert all(key in declared for key in gone)                                 # and every drop is declared


def test_replay_passes_only_an_approach_that_applies_every_needed_fact() -> None:
    world = default_world()
    family = world.families[0]
    judge = Judge(SimBackend(world))
    core_only = calls.Lesson("n_core01", family.title, family.core.verbose)
    probe = judge.ask(calls.REPLAY_PROBE, calls.ReplayProbeRequest(lesson=core_only, prompt="p"), stage="compression")
    assert probe.approach == f"Apply [{family.core.key}]."
    needs_two = f"used [{family.core.key}] and [{family.facts[0].key}]"
    verdict = judge.ask(calls.REPLAY_JUDGE, calls.ReplayJudgeRequest("p", needs_two, probe.approach),
                        stage="compression")
    assert verdict.verdict.value == "fail" and family.facts[0].key in verdict.reason
    enough = judge.ask(calls.REPLAY_JUDGE, calls.ReplayJudgeRequest("p", f"used [{family.core.key}]", probe.approach),
                       stage="compression")
    assert enough.verdict.value == "pass"
