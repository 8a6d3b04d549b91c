"""The simulated world itself: facts are recognisable, the agent succeeds iff the block states what the task needs,
its transcript is read by the real reader, and the sim backend answers from the request alone."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.config import AgentSettings, BackendName
from rose.judge import FailureKind, Judge, JudgeFailure, calls, make_backend
from rose.sim import SimBackend, default_world
from rose.sim.agent import act, parse_block, write_session
from rose.transcripts import digest, read_transcript, task_prompt


def test_every_fact_key_is_in_its_own_statements_and_nowhere_else() -> None:
    world = default_world()
    texts = [(f.key, t) for fam in world.families for f in (*fam.all_facts, fam.gap) for t in (f.terse, f.why)]
    texts += [("", x) for fam in world.families for x in fam.filler]
    for fact in world.facts:
        assert fact.key in fact.terse
        assert [t for owner, t in texts if fact.key in t and owner != fact.key] == []
    for fam in world.families:
        assert fam.gap.key not in fam.lesson_body()
        assert all(f.key in fam.lesson_body() for f in fam.all_facts)


def test_task_stream_is_reproducible_and_mixes_kinds() -> None:
    world = default_world()
    a, b = world.sample_tasks(200, seed=3), world.sample_tasks(200, seed=3)
    assert [t.id for t in a] == [t.id for t in b]
    assert {t.kind for t in a} == {"family", "cross", "gap", "generic"}
    assert len({t.id for t in a}) < len(a)   # kinds of work recur


def test_the_agent_needs_every_fact_and_says_where_it_found_each(tmp_path: Path) -> None:
    world = default_world()
    fam = world.family("retry")
    t = world.task("retry", [fam.core.key, fam.facts[1].key], 1)
    base = f'<lesson id="n_aaaaaa" title="Retry" level="1" scope="project">\n- {fam.core.terse}\n</lesson>'
    assert not act(world, t, base).success
    patched = base.replace("\n</lesson>", f"\nDetail that rescued this lesson before:\n- {fam.facts[1].terse}"
                           "\n</lesson>")
    [served] = parse_block(patched)
    assert fam.facts[1].key in served.attached and fam.facts[1].key not in served.base
    attempt = act(world, t, patched)
    assert attempt.success and attempt.applied == [(fam.core.key, "n_aaaaaa", False),
                                                   (fam.facts[1].key, "n_aaaaaa", True)]
    path = write_session(world, attempt, tmp_path / "t.jsonl", "s1", str(tmp_path), patched)
    conversation = read_transcript(path, agent="claude")
    assert task_prompt(conversation) == t.prompt
    text = digest(conversation, 3000).text
    assert f"Applying [{fam.facts[1].key}] from the detail attached under lesson n_aaaaaa." in text


def test_the_sim_backend_judges_replays_from_the_request_alone() -> None:
    world = default_world()
    judge = Judge(SimBackend(world))
    fam = world.family("retry")
    lesson = calls.Lesson("", "Retry", f"- {fam.core.terse}")
    probe = judge.ask(calls.REPLAY_PROBE, calls.ReplayProbeRequest(lesson, "retry the upload"), stage="probe")
    assert probe.approach == f"Apply [{fam.core.key}]."
    needed = f"Accepted: the work applied [{fam.core.key}]; [{fam.facts[1].key}]."
    verdict = judge.ask(calls.REPLAY_JUDGE, calls.ReplayJudgeRequest("retry the upload", needed, probe.approach),
                        stage="compression")
    assert not verdict.passed and fam.facts[1].key in verdict.reason


def test_sim_is_registered_only_on_request(sim_registered) -> None:
    backend = make_backend(AgentSettings(backend=BackendName.SIM))
    assert isinstance(backend, SimBackend) and backend.name == "sim"
    with pytest.raises(JudgeFailure) as err:
        Judge(backend).ask(calls.VERIFY, calls.VerifyRequest("x", []), stage="extraction")
    assert err.value.kind is FailureKind.SCRIPT
