"""Learning never stalls or piles up: a poison job is counted, backed off and set aside without blocking the good
ones behind it; one learner runs per user however many hooks ask; it exits when no job is due; and a job killed at
any point is run again to the same result, with no lesson or episode twice and no temp file left."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose.learn import jobs
from rose.learn.jobs import Job, JobKind, enqueue, queued
from rose.learn.learner import run_queue, serve_pending
from rose.store import Layers
from tests.conftest import run_rose, write_own_config
from tests.support.processes import alive

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
STANDIN = Path(__file__).resolve().parent.parent / "support" / "standin_model.py"
HANG_S = 120


def standin(tmp_path: Path, **env: str) -> Path:
    """A model CLI that answers every judge call plausibly (see tests/support/standin_model.py)."""
    script = tmp_path / "model-cli"
    exports = "".join(f"export {k}={json.dumps(v)}\n" for k, v in env.items())
    script.write_text(f"#!/bin/sh\n{exports}exec {sys.executable} {STANDIN} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    write_own_config(f"agent:\n  backend: claude\n  claude_command: {script}\n  timeout_s: 60\n"
                     "embed:\n  provider: none\n")
    return script


def _transcript(tmp_path: Path, name: str = "t.jsonl", fixture: str = "claude_rich.jsonl") -> Path:
    path = tmp_path / name
    shutil.copy(FIXTURES / fixture, path)
    return path


def _job(layers: Layers, session: str, transcript: Path | str) -> Path:
    return enqueue(layers.project, Job(JobKind.SESSION_END, session, str(transcript), "claude", str(layers.cwd)))


def _fresh(layers: Layers) -> Layers:
    """Layers as a new process would see them (the global store was created after the fixture ran)."""
    layers.close()
    return Layers.discover(layers.cwd)


# -- 7. a poison job never blocks the others ----------------------------------------------------------------------
@pytest.mark.parametrize("poison", ["missing", "directory", "fifo", "binary", "not-a-transcript"])
def test_a_poison_job_is_set_aside_and_the_good_job_behind_it_runs(layers: Layers, tmp_path: Path,
                                                                    poison: str) -> None:
    standin(tmp_path)
    bad = tmp_path / "bad.jsonl"
    if poison == "directory":
        bad.mkdir()
    elif poison == "fifo":
        os.mkfifo(bad)
    elif poison == "binary":
        bad.write_bytes(b"\x00\x01\x02" * 100)
    elif poison == "not-a-transcript":
        bad.write_bytes(b"\xff\xfe not JSON, not UTF-8\n" * 50)
    _job(layers, "s-bad", bad)
    time.sleep(0.01)
    _job(layers, "s-good", _transcript(tmp_path))
    layers = _fresh(layers)
    results = {r.job.session_id: r for r in run_queue(layers.project)}
    assert results["s-good"].done, results["s-good"].detail
    assert not results["s-bad"].done
    [(_path, buried)] = jobs.dead(layers.project)
    assert buried.session_id == "s-bad" and buried.attempts == 1 and buried.last_error
    assert queued(layers.project) == []
    doctor = run_rose("doctor", cwd=layers.cwd).stdout
    assert "set aside" in doctor and "s-bad" in doctor and buried.last_error[:40] in doctor


def test_a_job_that_keeps_failing_backs_off_then_moves_aside(layers: Layers, tmp_path: Path) -> None:
    standin(tmp_path, STANDIN_FAIL_EVERY="1", STANDIN_LOG=str(tmp_path / "calls.log"))   # every call fails
    _job(layers, "s-flaky", _transcript(tmp_path))
    layers = _fresh(layers)
    waits = []
    for attempt in range(1, jobs.MAX_ATTEMPTS + 1):
        [result] = run_queue(layers.project)           # `rose learn` semantics: due or not, now
        assert not result.done
        if attempt < jobs.MAX_ATTEMPTS:
            [(_p, job)] = queued(layers.project)
            assert job.attempts == attempt and not job.due()
            waits.append(job.not_before - time.time())
            assert run_queue(layers.project, due_only=True) == []   # the detached learner leaves it alone
    assert waits == sorted(waits) and waits[-1] > waits[0]        # each wait longer than the last
    assert queued(layers.project) == [] and len(jobs.dead(layers.project)) == 1


def test_an_unexpected_error_is_one_jobs_failure_not_the_learners(layers: Layers, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    standin(tmp_path)
    _job(layers, "s-boom", _transcript(tmp_path, "a.jsonl"))
    time.sleep(0.01)
    _job(layers, "s-fine", _transcript(tmp_path, "b.jsonl"))
    import rose.learn.mint as mint

    real = mint.mint

    def explode(layers_, conversation, *args, **kwargs):
        if "a.jsonl" in str(conversation.path):
            raise KeyError("a bug in a stage")
        return real(layers_, conversation, *args, **kwargs)
    monkeypatch.setattr(mint, "mint", explode)
    layers = _fresh(layers)
    results = {r.job.session_id: r for r in run_queue(layers.project)}
    assert results["s-fine"].done and not results["s-boom"].done
    [(_p, job)] = queued(layers.project)
    assert job.session_id == "s-boom" and "KeyError" in job.last_error


# -- 8. one learner, however many hooks ask ----------------------------------------------------------------------
def _learners() -> list[int]:
    """Learners of this test's user (its ROSE_HOME): other rose processes on the machine are not ours to count."""
    mine = f"ROSE_HOME={os.environ['ROSE_HOME']}".encode()
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"rose.learn.run" in cmd and mine in env and alive(int(pid)):
                out.append(int(pid))
    return out


def test_many_sessions_ending_at_once_start_one_learner(layers: Layers, tmp_path: Path) -> None:
    """Twelve SessionEnd hooks at the same moment: each queues its job and asks for a learner (the hook's two steps,
    run here as twelve processes racing for the lock); one learner starts, takes all twelve, and exits."""
    gate = tmp_path / "open"
    pids = tmp_path / "model-pids"
    standin(tmp_path, STANDIN_BLOCK_FILE=str(gate), STANDIN_PIDS=str(pids))
    for i in range(12):
        _job(layers, f"s-{i}", _transcript(tmp_path, f"t{i}.jsonl"))
    ask = ("import sys; from pathlib import Path; from rose.learn.jobs import request_learning;"
           "from rose.store import Store; from rose.model import Scope;"
           "print(request_learning(Store(Path(sys.argv[1]), Scope.PROJECT)))")
    racers = [subprocess.Popen([sys.executable, "-c", ask, str(layers.project.root)], stdout=subprocess.PIPE,
                               text=True) for _ in range(12)]
    started = [r.communicate(timeout=HANG_S)[0].strip() for r in racers]
    assert started.count("True") == 1, started          # one of them started the learner, the rest only asked
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and not (pids.exists() and pids.read_text().strip()):
        time.sleep(0.05)                         # the learner reached its first model call, and waits at the gate
    assert len(_learners()) == 1, _learners()
    assert len(pids.read_text().split()) == 1    # one model CLI at a time
    gate.write_text("go")
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and (queued(layers.project) or _learners()):
        time.sleep(0.1)
    assert queued(layers.project) == [] and _learners() == []   # all done, and the learner exited by itself
    assert len(layers.project.episodes()[0]) == 12


def test_a_hook_finding_a_learner_running_only_queues(layers: Layers, tmp_path: Path) -> None:
    held = jobs.try_lock()                       # stands for a running learner
    assert held is not None
    try:
        _job(layers, "s-q", _transcript(tmp_path))
        assert jobs.request_learning(layers.project) is False
        assert jobs.pending_roots() == [layers.project.root.resolve()]
    finally:
        jobs.release(held)


def test_the_learner_serves_every_pending_store_then_exits(layers: Layers, tmp_path: Path) -> None:
    standin(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    second = Layers.discover(other)
    second.init_project()
    _job(layers, "s-a", _transcript(tmp_path, "a.jsonl"))
    enqueue(second.project, Job(JobKind.SESSION_END, "s-b", str(_transcript(tmp_path, "b.jsonl")), "claude",
                                str(other)))
    jobs.mark_pending(layers.project)
    jobs.mark_pending(second.project)
    lock = jobs.try_lock()
    assert serve_pending(lock) == 2
    assert queued(layers.project) == [] and queued(second.project) == [] and jobs.pending_roots() == []
    assert not jobs.holder_running()             # the lock was released on the way out


# -- 9. killed work is not redone twice ---------------------------------------------------------------------------
KILLER = """
import os, signal
_n = [0]
_at = int(os.environ.get("ROSE_TEST_KILL_AT_REPLACE", "0"))
_count = os.environ.get("ROSE_TEST_COUNT_REPLACES")
_real = os.replace
def _replace(a, b, *args, **kwargs):
    _n[0] += 1
    if _n[0] == _at:
        os.kill(os.getpid(), signal.SIGKILL)   # after the temp file, before the rename: the worst moment
    done = _real(a, b, *args, **kwargs)
    if _count:   # written as it goes: the learner leaves by os._exit, so atexit would never run
        with open(_count, "w") as handle:
            handle.write(str(_n[0]))
    return done
os.replace = _replace
"""


def test_a_learner_killed_at_every_write_leaves_nothing_twice_and_no_temp_files(layers: Layers,
                                                                                tmp_path: Path) -> None:
    standin(tmp_path)
    hooks = tmp_path / "killer"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(KILLER, encoding="utf-8")
    _job(layers, "s-kill", _transcript(tmp_path))
    root = layers.project.root
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine)
    home = Path(os.environ["ROSE_HOME"])
    home_pristine = tmp_path / "home-pristine"
    shutil.copytree(home, home_pristine)

    counter = tmp_path / "replaces"

    def learner(kill_at: int) -> int:
        env = {**os.environ, "PYTHONPATH": f"{hooks}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               "ROSE_TEST_KILL_AT_REPLACE": str(kill_at), "ROSE_TEST_COUNT_REPLACES": str(counter)}
        return subprocess.run([sys.executable, "-m", "rose.learn.run", str(root)], env=env, timeout=HANG_S,
                              capture_output=True).returncode

    assert learner(0) == 0
    writes = int(counter.read_text())   # every atomic write a clean run makes: each is a kill point
    baseline = _outcome(layers)
    assert baseline["episodes"] == 1 and baseline["lessons"] >= 1
    killed = 0
    for kill_at in range(1, writes + 1):
        shutil.rmtree(root)
        shutil.copytree(pristine, root)
        shutil.rmtree(home)
        shutil.copytree(home_pristine, home)
        if learner(kill_at) == -9:
            killed += 1
        assert learner(0) == 0                       # the next learner finishes the job
        assert _outcome(layers) == baseline, kill_at
        leftovers = [p for p in root.rglob("*.tmp")] + [p for p in home.rglob("*.tmp")]
        assert leftovers == [], (kill_at, leftovers)
    assert killed >= 10, f"only {killed} kill points were reached"


def _outcome(layers: Layers) -> dict:
    fresh = Layers.discover(layers.cwd)
    try:
        project = fresh.project
        project.sync()
        titles = [n.title for n in project.iter_nodes()]
        episodes, bad = project.episodes()
        problems = project.index.problems()
        return {"episodes": len(episodes), "lessons": len(titles), "distinct": len(set(titles)),
                "corrupt": len(bad) + len(problems), "queued": len(queued(project))}
    finally:
        fresh.close()


def test_a_learner_stops_asking_a_backend_that_is_down(layers: Layers, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    standin(tmp_path, STANDIN_FAIL_EVERY="1", STANDIN_LOG=str(log))     # every call fails: the backend is down
    for i in range(6):
        _job(layers, f"s-{i}", _transcript(tmp_path, f"t{i}.jsonl"))
    layers = _fresh(layers)
    jobs.mark_pending(layers.project)
    from rose.learn.learner import OUTAGE_STOP

    serve_pending(jobs.try_lock())
    assert len(log.read_text().splitlines()) == OUTAGE_STOP          # one failed call per job, then it stopped
    left = queued(layers.project)
    assert len(left) == 6 and sum(1 for _p, j in left if j.attempts) == OUTAGE_STOP   # nothing lost, nothing buried
    assert not jobs.holder_running() and jobs.pending_roots()         # the next hook's learner tries again
