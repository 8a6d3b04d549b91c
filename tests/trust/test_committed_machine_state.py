"""A repository cannot commit rose's record of this machine. The learning queue, the judge cache, the evolution
registry, session scratch, the index, events, locks and caches of a repository's `.rose/` live under the user's own
store (rose.store.paths.local_root), so whatever a clone brings at `.rose/queue/`, `.rose/judge-cache.json`,
`.rose/evolution/`, ... is never read as rose's own, and never written through.

Each committed file here is what rose itself wrote on the author's machine (the same bytes a `git add -f` of the old
layout would have committed), so the attack is exactly as good as the real thing."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from rose.config import AgentSettings, BackendName
from rose.evolve import after_job, samples, synth
from rose.evolve.decide import TREATMENT
from rose.evolve.registry import State, editing, read, registry_path
from rose.evolve.screen import Proposal
from rose.judge import Judge, calls
from rose.learn.jobs import Job, JobKind, enqueue, queued
from rose.learn.learner import run_queue
from rose.store import Layers
from rose.store.paths import global_root, local_root
from tests.conftest import run_rose, write_own_config
from tests.evolve.test_lifecycle import GUARD, session_in
from tests.judge.samples import by_name

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
SKILL = Proposal("skill", "release-notes", "Write release notes the team's way.", ("release notes",), "", "none",
                 "1. Read CHANGES.md.\n2. Group the entries by kind.\n3. Name each breaking change first.",
                 (("write the release notes", True), ("fix the build", False)))


def _commit(store_root: Path, rel: str, data: bytes) -> Path:
    """`rel` as a clone brings it into the repository's `.rose/`."""
    path = store_root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _hook(project: Path, sid: str, event: str, **fields: object) -> dict:
    from rose.hooks.entry import run

    out = io.StringIO()
    payload = {"session_id": sid, "cwd": str(project), "hook_event_name": event, "transcript_path": "", **fields}
    run(["claude", event], io.BytesIO(json.dumps(payload).encode()), out, cwd=project)
    return json.loads(out.getvalue()) if out.getvalue() else {}


def test_machine_local_state_of_a_repository_store_lives_under_the_users_own_store(layers: Layers) -> None:
    store = layers.project
    own = global_root()
    for path in (store.queue_dir, store.sessions_dir, store.locks_dir, store.logs_dir, store.cache_dir,
                 store.events_path, store.judge_cache_path, store.index_db_path, registry_path(store)):
        assert path.is_relative_to(own) and not path.is_relative_to(store.root), path
    assert store.local == local_root(store.root) and (store.local.stat().st_mode & 0o777) == 0o700
    assert layers.global_ is None or layers.global_.local == layers.global_.root   # the user's own: inside


def test_a_committed_queue_job_never_has_the_learner_read_a_transcript(layers: Layers, tmp_path: Path) -> None:
    # another project's session, on this machine: what a committed job would have the learner mint lessons from
    # (into this repository's store, which the user then commits and pushes)
    elsewhere = tmp_path / "secret-project.jsonl"
    shutil.copy(FIXTURES / "claude_rich.jsonl", elsewhere)
    forged = Job(JobKind.SESSION_END, "evil", str(elsewhere), "claude", str(tmp_path), fork=True)
    committed = _commit(layers.project.root, f"queue/{forged.name}", json.dumps(forged.to_dict()).encode())
    mine = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "claude_rich.jsonl", mine)
    enqueue(layers.project, Job(JobKind.SESSION_END, "s-own", str(mine), "claude", str(layers.cwd)))

    asked: list[str] = []

    def no_backend(store, settings) -> Judge:   # noqa: ANN001 - run_queue's factory; records who got that far
        asked.append(store.root.name)
        return Judge(None)

    results = run_queue(layers.project, judge_factory=no_backend)
    assert [r.job.session_id for r in results] == ["s-own"]        # the user's own session, and only it
    assert [j.session_id for _p, j in queued(layers.project)] == ["s-own"]
    assert len(asked) == 1
    doctor = run_rose("doctor", cwd=layers.cwd).stdout
    assert "1 job(s) waiting" in doctor and "evil" not in doctor
    assert committed.read_bytes() == json.dumps(forged.to_dict()).encode()   # never touched either


def test_a_committed_judge_cache_never_answers_for_the_model(layers: Layers, tmp_path: Path) -> None:
    # a replay probe asks about a repository's own lesson and recorded prompt: a request an attacker can predict
    request = by_name()["replay_probe"].request
    agent = AgentSettings(backend=BackendName.SCRIPTED)
    author = Judge.from_settings(agent, cache_path=tmp_path / "author" / "judge-cache.json")   # the author's machine
    author.backend.handler = lambda name, req: {"approach": "forged by the repository"}
    assert author.ask(calls.REPLAY_PROBE, request, stage="probe").approach == "forged by the repository"
    _commit(layers.project.root, "judge-cache.json", (tmp_path / "author" / "judge-cache.json").read_bytes())

    settings = layers.settings()
    settings.agent = agent
    judge = Judge.for_store(layers.project, settings)
    judge.backend.handler = lambda name, req: {"approach": "the model's own"}
    assert judge.ask(calls.REPLAY_PROBE, request, stage="probe").approach == "the model's own"
    again = Judge.for_store(layers.project, settings)   # rose's own cache, on this machine, does answer
    again.backend.handler = lambda name, req: {"approach": "never asked"}
    assert again.ask(calls.REPLAY_PROBE, request, stage="probe").approach == "the model's own"


def _live_registry(layers: Layers) -> bytes:
    """A registry rose wrote, with an active guardrail (block) and an active skill: moved out of rose's own place,
    it is what the author's machine would have committed."""
    synth.register(layers.project, Proposal(**{**GUARD.__dict__, "action": "block"}), ["n_src"], "project",
                   rejected=None)
    synth.register(layers.project, SKILL, ["n_src"], "project", rejected=None)
    with editing(layers.project) as artifacts:
        for a in artifacts:
            samples.open_trial(a, "test", "2026-01-01T00:00:00Z")
            a.move(State.ACTIVE, "forged: no trial ran here", "2026-01-02T00:00:00Z")
    own = registry_path(layers.project)
    data = own.read_bytes()
    own.unlink()
    return data


def test_a_committed_registry_never_makes_a_guardrail_or_skill_live(layers: Layers, project: Path) -> None:
    write_own_config("evolution:\n  enabled: true\n  guardrail_block: true\n  active_control_rate: 0\n")
    data = _live_registry(layers)
    committed = _commit(layers.project.root, "evolution/registry.json", data)
    ids = [a["id"] for a in json.loads(data)["artifacts"]]
    assert read(layers.project) == []
    for n in range(6):
        assert _hook(project, f"s{n}", "PreToolUse", tool_name="Bash",
                     tool_input={"command": "git push --force origin main"}) == {}
        served = _hook(project, f"s{n}", "UserPromptSubmit", prompt="write the release notes")
        assert "Group the entries by kind" not in json.dumps(served)
    listed = run_rose("evolution", "list", cwd=project).stdout
    assert not any(i in listed for i in ids)
    doctor = run_rose("doctor", cwd=project).stdout   # said, and where rose's own record of the store is
    assert "earlier layout" in doctor and "evolution" in doctor and str(layers.project.local) in doctor
    after_job(layers, layers.project, "s0", layers.settings(), Judge(None))
    assert not (project / ".claude").exists()       # no skill file placed, no guardrail hook wired
    assert committed.read_bytes() == data

    # the same bytes where rose keeps its own record (non-vacuous: this registry does bind when it is rose's)
    registry_path(layers.project).write_bytes(data)
    gid = next(i for i in ids if i.startswith("gr_"))
    out = _hook(project, session_in(TREATMENT, gid, start=100), "PreToolUse", tool_name="Bash",
                tool_input={"command": "git push --force origin main"})
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_repository_store_is_not_used_while_the_users_own_store_is_refused(layers: Layers, project: Path) -> None:
    """Its machine-local state lives in the user's own store: one another user could have written is no place to
    read an index, a queue or a cached answer from, so the repository's store waits with it (and says why)."""
    assert run_rose("add", "Deploys go through the blue-green switch.", "--title", "Deploy rule",
                    cwd=project).returncode == 0
    own = global_root()
    before = sorted(str(p) for p in own.rglob("*"))
    own.chmod(0o777)
    try:
        found = Layers.discover(project)
        assert found.project is None and found.refused is not None and f"chmod go-w {own}" in found.refused
        payload = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                              "prompt": "how do deploys work?"})
        hook = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload)
        assert hook.returncode == 0 and "blue-green" not in hook.stdout
        assert "your own store is not used" in json.loads(hook.stdout)["systemMessage"]
        assert sorted(str(p) for p in own.rglob("*")) == before          # nothing written there
        doctor = run_rose("doctor", cwd=project).stdout
        assert f"{project / '.rose'} is not used while your own store is refused" in doctor
    finally:
        own.chmod(0o700)
    assert "blue-green" in run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload).stdout


def test_doctor_names_the_machine_local_folders_of_stores_that_are_gone(layers: Layers, tmp_path: Path) -> None:
    kept, moved = layers.project.local, tmp_path / "elsewhere"
    other = tmp_path / "other"
    other.mkdir()
    run_rose("init", cwd=other)
    assert run_rose("add", "Run make check before pushing.", "--title", "Check", cwd=other).returncode == 0
    gone = local_root(other / ".rose")
    assert gone.is_dir()
    other.rename(moved)                                # the repository moved: its old record is nobody's now
    doctor = run_rose("doctor", cwd=layers.cwd).stdout
    line = next(x for x in doctor.splitlines() if "stores that are gone" in x)
    assert "1 folder(s)" in line and str(gone) in line and str(kept) not in line
