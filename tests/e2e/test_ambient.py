"""Ambient, with the REAL agent CLIs: one user-scope install, then rose learns and recalls in a repository that has
never seen it (no `.rose/`, no command run there), tells each agent's user what it did, and takes the agent's own
report of which lesson it used.

For each agent: `rose install --scope user`; the user's own config names the same CLI as the judge; in a fresh git
repository, session 1 states a rule (the detached learner asks the real CLI, headless, against the mock, and files
the lesson in the user's own store for that repository, not in the repository and not in the global store);
session 2 asks in other words, is given the rule, and the agent ends its reply with `rose-used: M1`, which the
learner takes over the digest judge; session 3 runs in the agent's interactive TUI (tmux), where the user sees
rose's notice line. The mock plays the model: judge calls are answered by the schema they carry.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import run_rose
from tests.e2e.test_learning_loop import judge_answers
from tests.support import agent_clis
from tests.support.mock_model_server import MockModelServer, Text
from tests.support.tui import Tui, tui_env

pytestmark = pytest.mark.e2e

CORRECTION = ("Add a retry to the uploader. In this repo always use the retry_with_jitter helper from utils/net.py, "
              "never write your own backoff loop.")
SECOND_PROMPT = "The downloader needs retries as well, please add them."
THIRD_PROMPT = "And the thumbnailer, make it retry the same way."
ANSWER = "Added the retry with retry_with_jitter from utils/net.py.\nrose-used: M1"
HANG_S = 120.0


def _wait_for(predicate, what, timeout: float = HANG_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what()}")


def _user(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "ROSE_HOME": str(home / ".rose")}


def _personal(home: Path) -> Path | None:
    stores = [p for p in (home / ".rose" / "projects").glob("*") if (p / "nodes").is_dir()]
    return stores[0] if len(stores) == 1 else None


def _lessons(home: Path) -> list[Path]:
    store = _personal(home)
    return list((store / "nodes").rglob("*.md")) if store else []


def _episodes(home: Path) -> list[dict]:
    store = _personal(home)
    return [json.loads(p.read_text()) for p in (store / "episodes").glob("*.json")] if store else []


def _idle(home: Path) -> bool:
    store = _personal(home)
    return store is not None and not list((store / "queue").glob("*.json"))


def _log(home: Path) -> str:
    store = _personal(home)
    log = store / "logs" / "learner.log" if store else None
    main = home / ".rose" / "logs" / "learner.log"
    return "\n".join(p.read_text()[-3000:] for p in (log, main) if p is not None and p.exists()) or "(no log)"


def _setup(agent: str, command: Path, home: Path, tmp_path: Path) -> Path:
    for key, value in (("agent.backend", agent), (f"agent.{agent}_command", str(command)),
                       ("embed.provider", "none"), ("reflection.mode", "off")):
        out = run_rose("config", "set", key, value, "--scope", "global", cwd=tmp_path, env=_user(home))
        assert out.returncode == 0, out.stderr
    installed = run_rose("install", "--scope", "user", "--agent", agent, cwd=tmp_path, env=_user(home))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    repo = tmp_path / "fresh-repo"
    (repo / ".git").mkdir(parents=True)   # a repository rose has never been told about
    return repo


def _check_session_one(home: Path, repo: Path) -> None:
    _wait_for(lambda: _lessons(home) and _episodes(home), lambda: "session 1's learner\n" + _log(home))
    [lesson] = _lessons(home)
    text = lesson.read_text()
    assert "retry_with_jitter" in text and "scope: project" in text
    assert not (repo / ".rose").exists()                                   # nothing written into the repository
    assert not list((home / ".rose" / "nodes").rglob("*.md"))             # nor into the global store


def _check_session_two(home: Path) -> None:
    _wait_for(lambda: len(_episodes(home)) == 2 and _idle(home), lambda: "session 2's learner\n" + _log(home))
    second = next(e for e in _episodes(home) if "downloader" in e["prompt"])
    [lesson] = _lessons(home)
    assert second["used"] == [lesson.stem] and second.get("used_from") == "self-report"


def test_claude_learns_in_a_fresh_repository_and_says_so(tmp_path: Path, claude: Path) -> None:
    home = tmp_path / "user"
    home.mkdir()
    repo = _setup("claude", claude, home, tmp_path)
    with MockModelServer(handler=judge_answers, default=Text(ANSWER)) as mock:
        first = agent_clis.run_claude(["-p", CORRECTION, "--output-format", "json"], cwd=repo, home=home,
                                      mock_url=mock.url)
        assert first.returncode == 0, first.stderr
        _check_session_one(home, repo)
        mock.clear()
        second = agent_clis.run_claude(["-p", SECOND_PROMPT, "--output-format", "stream-json", "--verbose"],
                                       cwd=repo, home=home, mock_url=mock.url)
        assert second.returncode == 0, second.stderr
        turns = [r for r in mock.model_requests("anthropic") if "<rose-lessons>" in r.body_text]
        assert turns and "retry_with_jitter" in turns[0].body_text and 'ref=\\"M1\\"' in turns[0].body_text
        events = [json.loads(x) for x in second.stdout.splitlines() if x.startswith("{")]
        notices = [e["content"] for e in events if e.get("type") == "system" and e.get("subtype") == "informational"]
        assert any(n.startswith("UserPromptSubmit says: ⋯ ROSE · 1 lesson") for n in notices), notices
        _check_session_two(home)
        # the interactive TUI: what a user at the terminal sees
        (home / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": ["dummy"], "rejected": []},
            "projects": {str(repo.resolve()): {"hasTrustDialogAccepted": True,
                                               "hasCompletedProjectOnboarding": True}}}))
        with Tui("claude", [claude], tui_env(agent_clis.claude_env(home, mock.url)), repo) as t:
            t.wait_for("Claude Code v", "❯")
            time.sleep(1.0)
            t.type(THIRD_PROMPT)
            screen = t.wait_for("retry_with_jitter from utils/net.py")
            assert "UserPromptSubmit says: ⋯ ROSE · " in screen, screen


def test_codex_learns_in_a_fresh_repository_and_says_so(tmp_path: Path, codex: Path) -> None:
    home = tmp_path / "user"
    home.mkdir()
    repo = _setup("codex", codex, home, tmp_path)
    with MockModelServer(handler=judge_answers, default=Text(ANSWER)) as mock:
        agent_clis.write_codex_config(home, mock.openai_base_url, trusted_projects=[repo])
        installed = run_rose("install", "--scope", "user", "--agent", "codex", cwd=tmp_path, env=_user(home))
        assert installed.returncode == 0 and not [s for s in json.loads(run_rose(
            "install", "--scope", "user", "--agent", "codex", "--json", cwd=tmp_path, env=_user(home)).stdout)[0]
            ["steps"]], "rose could not trust its own hooks"
        path = {"PATH": agent_clis.base_env(home)["PATH"]}
        first = agent_clis.run_codex_exec([CORRECTION], cwd=repo, home=home, env=path)   # no trust bypass
        assert first.returncode == 0, first.stderr
        _check_session_one(home, repo)
        mock.clear()
        second = agent_clis.run_codex_exec([SECOND_PROMPT], cwd=repo, home=home, env=path)
        assert second.returncode == 0, second.stderr
        turns = [r for r in mock.model_requests("responses") if "<rose-lessons>" in r.body_text]
        assert turns and "retry_with_jitter" in turns[0].body_text and 'ref=\\"M1\\"' in turns[0].body_text
        assert "⋯ ROSE" not in second.stdout + second.stderr   # codex exec shows hook notices nowhere (documented)
        _check_session_two(home)
        with Tui("codex", [codex, "--no-daemon", "-s", "read-only", "-a", "never"],
                 tui_env(agent_clis.codex_env(home)), repo) as t:
            t.wait_for("OpenAI Codex (v")
            time.sleep(1.0)
            t.type(THIRD_PROMPT)
            screen = t.wait_for("retry_with_jitter from utils/net.py")
            assert "↳ Hook · ⋯ ROSE · " in screen, screen
