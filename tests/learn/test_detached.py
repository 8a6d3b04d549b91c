"""Detached learning: the hook returns at once, the learner runs in its own process, holds a per-session lock,
and is ended by its own deadline, taking the model CLI it started with it (no orphans)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rose.learn.jobs import Job, JobKind, enqueue, queued
from rose.store import Layers
from rose.store.atomic import file_lock
from tests.conftest import run_rose, write_own_config
from tests.support.processes import alive

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def test_a_hanging_learner_is_ended_by_its_deadline_with_its_children(layers: Layers, tmp_path: Path) -> None:
    pid_file = tmp_path / "standin.pid"
    standin = tmp_path / "claude"
    standin.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 300\n", encoding="utf-8")
    standin.chmod(0o755)
    write_own_config(
        f"agent:\n  backend: claude\n  claude_command: {standin}\n  timeout_s: 600\nembed:\n  provider: none\n")
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "claude_rich.jsonl", transcript)
    enqueue(layers.project, Job(JobKind.SESSION_END, "s-hang", str(transcript), "claude", str(layers.cwd)))
    env = {**os.environ, "ROSE_LEARNER_DEADLINE_S": "3"}
    done = subprocess.run([sys.executable, "-m", "rose.learn.run", str(layers.project.root)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert pid_file.exists(), "the stand-in model CLI was never started"
    standin_pid = int(pid_file.read_text())
    deadline = time.time() + 10
    while time.time() < deadline and alive(standin_pid):
        time.sleep(0.2)
    assert not alive(standin_pid), "the model CLI outlived the learner"
    assert len(queued(layers.project)) == 1          # the work is kept for the next run
    assert "deadline was reached" in (layers.project.logs_dir / "learner.log").read_text()


def test_session_end_hook_hands_off_to_a_detached_learner(layers: Layers, tmp_path: Path) -> None:
    write_own_config("agent:\n  backend: none\nembed:\n  provider: none\n")
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "codex_rich.jsonl", transcript)
    payload = json.dumps({"session_id": "s-end", "transcript_path": str(transcript), "cwd": str(layers.cwd),
                          "hook_event_name": "SessionEnd", "reason": "other"})
    out = run_rose("hook", "codex", "SessionEnd", cwd=layers.cwd, input=payload)
    assert out.returncode == 0 and out.stdout == ""
    log = layers.project.logs_dir / "learner.log"
    deadline = time.time() + 60
    while time.time() < deadline and not (log.exists() and "no model backend" in log.read_text()):
        time.sleep(0.2)
    assert "s-end.session_end.json: no model backend: left queued" in log.read_text()
    assert [j.session_id for _p, j in queued(layers.project)] == ["s-end"]   # model-free: queued, nothing lost
    doctor = run_rose("doctor", cwd=layers.cwd).stdout
    assert "learning queue" in doctor and "1 job(s) waiting" in doctor


def test_one_session_is_never_processed_by_two_learners_at_once(layers: Layers, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "claude_rich.jsonl", transcript)
    path = enqueue(layers.project, Job(JobKind.SESSION_END, "s-lock", str(transcript), "claude", str(layers.cwd)))
    [(_p, job)] = queued(layers.project)
    with file_lock(layers.project.root / "locks" / f"learn-{path.stem}.lock"):
        result = subprocess.run(
            [sys.executable, "-c", "import sys; from pathlib import Path; from rose.learn.jobs import queued;"
             "from rose.learn.learner import run_job; from rose.store import Store; from rose.model import Scope;"
             f"s = Store(Path({str(layers.project.root)!r}), Scope.PROJECT); [(p, j)] = queued(s);"
             "print(run_job(s, p, j).detail)"], capture_output=True, text=True, timeout=60)
    assert "another learner holds this session" in result.stdout, result.stderr
    assert [j.session_id for _p, j in queued(layers.project)] == [job.session_id]   # still queued for later
