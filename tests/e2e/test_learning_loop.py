"""The whole loop with the REAL agent CLIs: session 1 teaches, session 2 is given what session 1 taught.

`rose install --scope project` wires the hooks; the CLI runs headless against the mock model server; the user
corrects the agent in session 1; the SessionEnd hook hands the session to the detached learner, which asks the
judge (the same real CLI, headless, against the same mock) to assess and extract; the lesson is grounded in the
user's own words and stored; session 2, on a related prompt, gets the rule injected into the model's request.
The mock plays the model: it answers each judge call by the schema it was given, and the agent's turns with text.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from rose.store.paths import local_root
from tests.conftest import run_rose
from tests.support import agent_clis
from tests.support.mock_model_server import MockModelServer, RecordedRequest, Structured

pytestmark = pytest.mark.e2e

CORRECTION = ("Add a retry to the uploader. In this repo always use the retry_with_jitter helper from utils/net.py, "
              "never write your own backoff loop.")
QUOTE = "always use the retry_with_jitter helper from utils/net.py, never write your own backoff loop."
LESSON_ID = re.compile(r"\bn_[0-9a-f]{6,}\b")
RULE = "Use retry_with_jitter from utils/net.py for retries; never hand-roll a backoff loop."
SECOND_PROMPT = "The downloader needs retries as well, please add them."


def _schema_keys(req: RecordedRequest) -> frozenset[str]:
    body = req.body if isinstance(req.body, dict) else {}
    for tool in body.get("tools") or []:          # claude -p --json-schema: a StructuredOutput tool
        if isinstance(tool, dict) and tool.get("name") == "StructuredOutput":
            return frozenset((tool.get("input_schema") or {}).get("properties", {}))
    fmt = (body.get("text") or {}).get("format") or {}   # codex exec --output-schema: a json_schema format
    if fmt.get("type") == "json_schema":
        return frozenset((fmt.get("schema") or {}).get("properties", {}))
    return frozenset()


def judge_answers(req: RecordedRequest):
    """Answer rose's judge calls by the shape of the schema they carry; None lets the agent's own turns through."""
    keys = _schema_keys(req)
    if not keys:
        return None
    if {"outcome", "accepted_summary", "lessons"} <= keys:
        served = sorted(set(LESSON_ID.findall(req.body_text)))  # every served lesson needs its own verdict
        return Structured({"outcome": "success", "accepted_summary": "added a retry using retry_with_jitter",
                           "lessons": [{"id": i, "used": True, "reason": "the retry used it"} for i in served]})
    if {"decision", "lessons", "orientation", "experience"} <= keys:
        return Structured({"decision": "LEARN", "orientation": [], "experience": None, "lessons": [
            {"quote": QUOTE, "title": "Retries use retry_with_jitter", "body": RULE, "confidence": "high",
             "scope": "project", "tags": ["retry", "http"]}]})
    if {"supported", "reason"} <= keys:
        return Structured({"supported": True, "reason": "the user stated this rule"})
    if {"scope", "reason"} <= keys:
        return Structured({"scope": "project", "reason": "it names this repository's own helper"})
    if "related" in keys:
        return Structured({"related": []})
    if "judgements" in keys:
        return None
    return None


def _wait_for(predicate, what: str, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


def _user(home: Path) -> dict[str, str]:
    """The user's own environment: the HOME the agent CLI runs with, so rose commands and hooks see one user."""
    return {"HOME": str(home), "ROSE_HOME": str(home / ".rose")}


def _prepare(project: Path, backend: str, command: Path, home: Path) -> None:
    """The user's own settings choose the backend (a repository's could not), set in their global config."""
    for args in (("init",), ("config", "set", "agent.backend", backend, "--scope", "global"),
                 ("config", "set", f"agent.{backend}_command", str(command), "--scope", "global"),
                 ("config", "set", "embed.provider", "none", "--scope", "global"),
                 ("config", "set", "reflection.mode", "off")):
        out = run_rose(*args, cwd=project, env=_user(home))
        assert out.returncode == 0, out.stderr


def _learned(project: Path) -> bool:
    return any((project / ".rose" / "nodes").rglob("*.md")) and any((project / ".rose" / "episodes").glob("*.json"))


def _machine_local(project: Path, home: Path) -> Path:
    """Where the agent's rose (ROSE_HOME of _user) keeps the project store's queue and logs."""
    from rose import envvars

    with pytest.MonkeyPatch.context() as env:
        env.setenv(envvars.HOME, _user(home)["ROSE_HOME"])
        return local_root(project / ".rose")


def _idle(project: Path, home: Path) -> bool:
    """The learner started by the last session has finished: no queued work, no learner lock held."""
    return not list((_machine_local(project, home) / "queue").glob("*.json"))


def _log(project: Path, home: Path) -> str:
    log = _machine_local(project, home) / "logs" / "learner.log"
    return log.read_text(encoding="utf-8") if log.exists() else "(no learner log)"


def _ok(cp, what: str) -> None:
    assert cp.returncode == 0, f"{what} exited {cp.returncode}\n{cp.stdout[-2000:]}\n{cp.stderr[-2000:]}"


def _check_lesson(project: Path) -> None:
    [node_file] = list((project / ".rose" / "nodes").rglob("*.md"))
    text = node_file.read_text(encoding="utf-8")
    assert "retry_with_jitter" in text and "origin: extraction" in text
    [episode] = [json.loads(p.read_text()) for p in (project / ".rose" / "episodes").glob("*.json")]
    assert episode["outcome"] == "success" and "uploader" in episode["prompt"]


def test_claude_session_two_gets_what_session_one_taught(project: Path, tmp_path: Path, claude: Path) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    _prepare(project, "claude", claude, home)
    _ok(run_rose("install", "--agent", "claude", "--scope", "project", cwd=project, env=_user(home)), "rose install")
    with MockModelServer(handler=judge_answers) as mock:
        first = agent_clis.run_claude(["-p", CORRECTION, "--output-format", "json"], cwd=project, home=home,
                                      mock_url=mock.url)
        _ok(first, "claude session 1")
        _wait_for(lambda: _learned(project), "the learner to write a lesson and an episode\n" + _log(project, home))
        _check_lesson(project)
        mock.clear()
        second = agent_clis.run_claude(["-p", SECOND_PROMPT, "--output-format", "json"], cwd=project, home=home,
                                       mock_url=mock.url)
        _ok(second, "claude session 2")
        agent_turns = [r for r in mock.model_requests("anthropic") if not _schema_keys(r)]
        assert any("retry_with_jitter" in r.body_text and "<rose-lessons>" in r.body_text for r in agent_turns), \
            "session 2's request did not carry the lesson session 1 taught"
        # session 2's own learner works against this mock too: let it finish before the mock goes away
        _wait_for(lambda: _idle(project, home), "the second session's learner\n" + _log(project, home))
        episodes = [json.loads(p.read_text()) for p in (project / ".rose" / "episodes").glob("*.json")]
        assert sorted(len(e["used"]) for e in episodes) == [0, 1]   # session 2 used what session 1 taught


def test_codex_session_two_gets_what_session_one_taught(project: Path, tmp_path: Path, codex: Path) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    _prepare(project, "codex", codex, home)
    with MockModelServer(handler=judge_answers) as mock:
        agent_clis.write_codex_config(home, mock.openai_base_url, trusted_projects=[project])
        env = {**os.environ, **_user(home)}
        cp = run_rose("install", "--agent", "codex", "--scope", "project", cwd=project, env=env)
        _ok(cp, "rose install --agent codex")
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        first = agent_clis.run_codex_exec([CORRECTION], cwd=project, home=home, env={"PATH": path})
        _ok(first, "codex session 1")
        _wait_for(lambda: _learned(project), "the learner to write a lesson and an episode\n" + _log(project, home))
        _check_lesson(project)
        mock.clear()
        second = agent_clis.run_codex_exec([SECOND_PROMPT], cwd=project, home=home, env={"PATH": path})
        _ok(second, "codex session 2")
        agent_turns = [r for r in mock.model_requests("responses") if not _schema_keys(r)]
        assert any("retry_with_jitter" in r.body_text and "<rose-lessons>" in r.body_text for r in agent_turns), \
            "session 2's request did not carry the lesson session 1 taught"
        # session 2's own learner works against this mock too: let it finish before the mock goes away
        _wait_for(lambda: _idle(project, home), "the second session's learner\n" + _log(project, home))
        episodes = [json.loads(p.read_text()) for p in (project / ".rose" / "episodes").glob("*.json")]
        assert sorted(len(e["used"]) for e in episodes) == [0, 1]   # session 2 used what session 1 taught
