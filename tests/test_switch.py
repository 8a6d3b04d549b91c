"""`rose off` / `rose on` per repository (and a committed .rose-off file): off means no recall, no learning,
nothing said; the lessons stay. The SessionEnd hook stays lean: it queues and returns, reading no transcript."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rose.store.paths import local_root
from tests.conftest import run_rose_here as run_rose


def _prompt(project: Path, session: str = "s") -> str:
    payload = json.dumps({"session_id": session, "cwd": str(project / "src"), "hook_event_name": "UserPromptSubmit",
                          "prompt": "how do we tag releases?"})
    return run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload).stdout


def _repo(project: Path) -> Path:
    (project / ".git").mkdir()
    (project / "src").mkdir()
    run_rose("add", "Tag releases with the date.", "--title", "Release tags", cwd=project)
    return project


def test_off_and_on_switch_a_repository_without_losing_lessons(project: Path) -> None:
    repo = _repo(project)
    assert "Release tags" in _prompt(repo)
    out = run_rose("off", cwd=repo / "src")
    assert out.returncode == 0 and "rose is off in" in out.stdout
    assert _prompt(repo) == ""
    stop = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionEnd",
                       "transcript_path": str(repo / "t.jsonl"), "reason": "other"})
    assert run_rose("hook", "claude", "SessionEnd", cwd=repo, input=stop).stdout == ""
    assert not list(Path(repo).rglob("queue/*.json")) and "Release tags" in run_rose("search", "tag", cwd=repo).stdout
    assert "already was" in run_rose("off", cwd=repo).stdout
    assert "rose is on in" in run_rose("on", cwd=repo).stdout
    assert "Release tags" in _prompt(repo, session="s2")


def test_a_committed_marker_switches_it_off_for_everyone(project: Path) -> None:
    repo = _repo(project)
    (repo / ".rose-off").write_text("", encoding="utf-8")
    assert _prompt(repo) == ""
    assert "still off" in run_rose("on", cwd=repo).stdout


def test_the_session_end_hook_reads_no_transcript_and_imports_no_reader(project: Path) -> None:
    run_rose("init", cwd=project)
    code = ("import io, sys, json; from rose.hooks.entry import run;"
            f"p = json.dumps({{'session_id': 's', 'cwd': {str(project)!r}, 'hook_event_name': 'SessionEnd',"
            "'transcript_path': '/nonexistent.jsonl', 'reason': 'other'}).encode();"
            "import os; os.environ['ROSE_WARM_HELPER'] = '0';"
            "import rose.learn.jobs as j; j.request_learning = lambda store: False;"
            "run(['claude', 'SessionEnd'], io.BytesIO(p), io.StringIO());"
            "heavy = [m for m in ('rose.transcripts', 'rose.redact', 'rose.recall', 'rose.judge', 'yaml') "
            "if m in sys.modules]; assert not heavy, heavy")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert out.returncode == 0, out.stderr
    assert list((local_root(project / ".rose") / "queue").glob("*.json"))


def test_the_commands_that_show_what_the_hooks_would_do_say_first_that_rose_is_off(project: Path) -> None:
    repo = _repo(project)
    for argv in (["recall", "--prompt", "how do we tag releases?"], ["trace", "--prompt", "tag releases"],
                 ["status"]):
        assert "rose is off" not in run_rose(*argv, cwd=repo).stdout
    run_rose("off", cwd=repo)
    for where in (repo, repo / "src"):
        for argv in (["recall", "--prompt", "how do we tag releases?"], ["trace", "--prompt", "tag releases"],
                     ["status"]):
            out = run_rose(*argv, cwd=where).stdout
            assert out.startswith("rose is off in this repository (switched off with `rose off`)"), (argv, out)
            data = json.loads(run_rose(*argv, "--json", cwd=where).stdout)
            assert "rose off" in data["switched_off"]
    run_rose("on", cwd=repo)
    (repo / ".rose-off").write_text("", encoding="utf-8")   # committed by a teammate
    assert ".rose-off exists" in run_rose("recall", "--prompt", "how do we tag releases?", cwd=repo).stdout


def test_doctor_warns_that_rose_is_off_here(project: Path) -> None:
    repo = _repo(project)
    assert "switched off" not in run_rose("doctor", cwd=repo).stdout
    run_rose("off", cwd=repo)
    out = run_rose("doctor", "--json", cwd=repo / "src").stdout
    [check] = [c for c in json.loads(out) if c["name"] == "switched off"]
    assert check["level"] == "warn" and "rose on" in check["detail"]
