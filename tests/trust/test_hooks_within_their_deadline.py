"""Every hook finishes inside its deadline whatever it waits on: a model that never answers, a held store lock, a
locked index, a transcript that is a FIFO, a directory or a device. What can be served is served, and the notice
says what was skipped. Gates never depend on a backend; a broken character never costs a prompt its recall."""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rose.hooks import BUDGET_S, PROMPT_TIMEOUT_S
from rose.store import Layers
from rose.store.atomic import file_lock
from rose.store.paths import local_root
from tests.conftest import run_rose, write_own_config

STANDIN = Path(__file__).resolve().parent.parent / "support" / "standin_model.py"


def _never_answering_model(tmp_path: Path) -> Path:
    script = tmp_path / "model-cli"
    gate = tmp_path / "never-created"
    script.write_text(f"#!/bin/sh\nexport STANDIN_BLOCK_FILE={gate}\nexport STANDIN_PIDS={tmp_path / 'pids'}\n"
                      f"exec {sys.executable} {STANDIN} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def _big_store(project: Path, n: int = 30) -> None:
    run_rose("init", cwd=project)
    layers = Layers.discover(project)
    from rose.model import Node

    for i in range(n):
        layers.project.save(Node(id=f"n_big{i:04d}", family=f"fam{i % 5}", title=f"Deploy step {i}",
                                 body=f"Deploy step {i}: run check {i} before shipping, then tag release {i}. " * 4))
    layers.close()


def _granted_s(detail: str | None) -> float:
    """How long a model call was given, from its failure: "no answer within 1.93s; ..." (0: not asked at all)."""
    found = re.search(r"no answer within ([0-9.]+)s", detail or "")
    return float(found.group(1)) if found else 0.0


def _prompt(project: Path, prompt: str, session: str = "s", env: dict | None = None,
            timeout: float = 120) -> tuple[dict, float]:
    payload = json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt})
    start = time.monotonic()
    out = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload, env=env, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), time.monotonic() - start


@pytest.mark.parametrize("selector", ["fork", "judge"])
def test_a_model_that_never_answers_costs_one_deadline_not_one_per_fallback(project: Path, tmp_path: Path,
                                                                            selector: str) -> None:
    model = _never_answering_model(tmp_path)
    write_own_config(f"agent:\n  backend: claude\n  claude_command: {model}\nembed:\n  provider: none\n"
                     f"recall:\n  selector: {selector}\n  deadline_s: 2\n  selector_timeout_s: 30\n")
    _big_store(project)
    data, _took = _prompt(project, "how do I deploy step 3?")
    # bounded by the deadline (2 s), never by the selector's own 30 s, nor by fork + judge + second pass in turn:
    # the hook answered, from search, and said why. What is checked is the time each model call was *given* (its
    # failure says), not how long anything took: wall time is the machine's load, the grants are rose's decision.
    from rose.store import events

    calls = [e for e in events.read(local_root(project / ".rose") / "events.jsonl", kind="judge")]
    assert calls and all(e["failure"] == "timeout" for e in calls)
    granted = [_granted_s(e["detail"]) for e in calls]
    assert sum(granted) <= 2.0 + 1e-3, granted   # all the calls together had the one 2 s deadline, not 30 s each
    assert all("process group killed" in e["detail"] for e in calls if _granted_s(e["detail"]) > 0)  # cut there
    assert "ran out of time" not in data["systemMessage"]   # the hook's own watchdog never had to step in
    assert "Deploy step 3" in data["hookSpecificOutput"]["additionalContext"]
    assert "served by search" in data["systemMessage"] or "by hybrid" in data["systemMessage"]
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()] if (tmp_path / "pids").exists() else []
    for pid in pids:   # every model CLI the hook started was ended with it
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]


def test_a_held_store_lock_or_a_locked_index_is_waited_on_briefly(project: Path) -> None:
    _big_store(project, 4)
    layers = Layers.discover(project)
    # make a hand edit the index must catch up on, so the hook needs the lock and a write transaction
    path = next(layers.project.nodes_dir.rglob("*.md"))
    path.write_text(path.read_text().replace("Deploy step", "Deploy stage"), encoding="utf-8")
    db = sqlite3.connect(layers.project.index_db_path, timeout=1, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")          # another writer holds the index
    held = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        with file_lock(layers.project.lock_path):
            held.set()
            release.wait(120)
    holder = threading.Thread(target=hold_lock, daemon=True)
    holder.start()
    held.wait(60)
    try:
        data, _took = _prompt(project, "deploy")
    finally:
        release.set()
        db.execute("ROLLBACK")
        db.close()
        holder.join(60)
        layers.close()
    # waited briefly (recall.lock_wait_s), not the 30 s a lock may take elsewhere: with a long wait the hook's
    # watchdog (its budget sits inside PROMPT_TIMEOUT_S) would have ended it with "ran out of time" and no context
    assert "ran out of time" not in data["systemMessage"] and BUDGET_S["UserPromptSubmit"] < PROMPT_TIMEOUT_S
    assert "Deploy" in data["hookSpecificOutput"]["additionalContext"]     # served from the index as it was
    assert "busy" in data["systemMessage"] or "not saved" in data["systemMessage"]


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "missing"])
def test_the_stop_hook_never_blocks_on_what_transcript_path_names(project: Path, tmp_path: Path, kind: str) -> None:
    run_rose("init", cwd=project)
    path = tmp_path / "transcript"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        path = Path("/dev/zero")           # endless: a read would never end
    for event in ("Stop", "SessionEnd"):
        payload = json.dumps({"session_id": f"s-{kind}", "cwd": str(project), "hook_event_name": event,
                              "transcript_path": str(path), "stop_hook_active": False, "reason": "other"})
        out = run_rose("hook", "claude", event, cwd=project, input=payload, timeout=60)
        assert (out.returncode == 0 and out.stdout in ("", "{}")) or json.loads(out.stdout) is not None


def test_no_hook_holds_a_lock_while_it_reads_the_transcript(project: Path, tmp_path: Path) -> None:
    """The Stop hook reads with no lock held: a session lock held by another process does not make it read
    slower, and a slow read never holds up another hook."""
    import inspect

    from rose.learn import reflect

    source = inspect.getsource(reflect.on_stop)
    read_at = source.index("count_new(")
    lock_at = source.index("update_session(")
    assert read_at < lock_at   # counted first, then the counters are written under the session lock


def test_an_unbuildable_backend_never_costs_a_gate_or_rose_add(project: Path) -> None:
    write_own_config("agent:\n  backend: sim\n")   # a registered test backend that is not registered here
    run_rose("init", cwd=project)
    added = run_rose("add", "Tag releases with the date.", "--title", "Release tags", cwd=project)
    assert added.returncode == 0 and "unreconciled" in added.stdout and "not available" in added.stdout
    data, _took = _prompt(project, "how do we tag releases?")
    assert "Release tags" in data["systemMessage"]                # the store fits: no model was needed
    assert "hookSpecificOutput" in data


def test_a_lone_surrogate_in_a_payload_costs_one_character(project: Path) -> None:
    run_rose("init", cwd=project)
    run_rose("add", "Tag releases with the date.", "--title", "Release tags", cwd=project)
    payload = ('{"session_id": "s\\ud800x", "cwd": %s, "hook_event_name": "UserPromptSubmit", '
               '"prompt": "how do we tag releases \\udfff now?"}') % json.dumps(str(project))
    out = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload)
    data = json.loads(out.stdout)
    assert "Release tags" in data["systemMessage"] and "failed" not in data["systemMessage"]


def test_every_hook_budget_sits_inside_the_timeout_rose_installs() -> None:
    from rose.install.hooks import HOOKS

    for agent, specs in HOOKS.items():
        for spec in specs:
            assert BUDGET_S[spec.event.value] < spec.timeout_s, (agent, spec)
    assert BUDGET_S["SessionEnd"] < 1.5   # Claude Code kills SessionEnd hooks after ~1.5 s


def test_a_hook_that_overruns_its_budget_is_ended_by_its_watchdog(project: Path, tmp_path: Path) -> None:
    """A hang nothing else bounds (here: stdin that never ends) ends in a fail-open notice inside the budget."""
    run_rose("init", cwd=project)
    proc = subprocess.Popen([sys.executable, "-m", "rose", "hook", "claude", "PreCompact"], cwd=project,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ})
    guard = threading.Timer(120, proc.kill)          # only a hang reaches this
    guard.start()
    try:
        out = proc.stdout.read()                     # stdin stays open: the hook's read never finishes by itself
        proc.wait(timeout=120)
    finally:
        guard.cancel()
        proc.stdin.close()
        proc.stdout.close()
    assert proc.returncode == 0 and "ran out of time" in json.loads(out)["systemMessage"]
