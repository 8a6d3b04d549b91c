"""The hook boundary: fails open, prints only valid JSON, stays silent for rose's own children."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rose.store.paths import local_root
from tests.conftest import run_rose

FIXTURES = Path(__file__).parent / "fixtures" / "payloads"


def payload(agent: str, event: str, project: Path, **changes) -> str:
    data = json.loads((FIXTURES / f"{agent}_{event}.json").read_text(encoding="utf-8"))
    data["cwd"] = str(project)
    data.update(changes)
    return json.dumps(data)


@pytest.fixture
def taught(project: Path) -> Path:
    run_rose("init", cwd=project)
    run_rose("add", "Retry idempotent calls with exponential backoff: 100ms, 400ms, 1.6s.", "--title",
             "Retry policy", "--family", "retry", cwd=project)
    return project


def hook(agent: str, event: str, stdin: str, cwd: Path, env: dict[str, str] | None = None):
    out = run_rose("hook", agent, event, cwd=cwd, input=stdin, env=env)
    assert out.returncode == 0, out.stderr
    return out


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_prompt_hook_injects_for_both_agents(taught: Path, agent: str) -> None:
    out = hook(agent, "UserPromptSubmit", payload(agent, "UserPromptSubmit", taught, prompt="add retries"), taught)
    data = json.loads(out.stdout)
    ctx = data["hookSpecificOutput"]
    assert ctx["hookEventName"] == "UserPromptSubmit"
    assert "Retry idempotent calls" in ctx["additionalContext"]
    assert data["systemMessage"].startswith("⋯ ROSE · 1 lesson · ")
    assert "Retry policy" in data["systemMessage"]


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"prompt": "x"}', '{"session_id": 5, "prompt": "x"}',
                                   '{"session_id": "s", "hook_event_name": "Stop", "prompt": "x"}',
                                   '{"session_id": "s"}', "\x00\xff garbage"])
def test_malformed_payloads_fail_open_with_valid_json(taught: Path, stdin: str) -> None:
    out = hook("claude", "UserPromptSubmit", stdin, taught)
    data = json.loads(out.stdout)
    assert set(data) == {"systemMessage"}
    assert data["systemMessage"].startswith("⋯ ROSE · skipped: ")


def test_an_oversized_payload_is_refused_not_read_whole(taught: Path) -> None:
    big = json.dumps({"session_id": "s", "cwd": str(taught), "prompt": "x" * (9 * 1024 * 1024)})
    data = json.loads(hook("claude", "UserPromptSubmit", big, taught).stdout)
    assert "over the" in data["systemMessage"]


def test_a_broken_store_fails_open(taught: Path) -> None:
    store = taught / ".rose"
    shutil.rmtree(store / "nodes")
    (store / "nodes").write_text("not a folder", encoding="utf-8")
    (local_root(store) / "index.db").unlink()
    (local_root(store) / "index.db").mkdir()
    out = hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", taught, prompt="retry"), taught)
    data = json.loads(out.stdout)
    assert "recall failed" in data["systemMessage"]
    assert "hookSpecificOutput" not in data


@pytest.mark.parametrize("text", ["recall: {max_pack_tokens: lots}\n", "recall: {from_a_newer_rose: 1}\n",
                                  "recall: [unclosed\n", "- just\n- a list\n",
                                  # numbers that reached int() and SQLite's busy timeout: every prompt failed
                                  "recall: {lock_wait_s: .nan}\n", "recall: {lock_wait_s: 1e308}\n",
                                  "recall: {lock_wait_s: -1}\n", "recall: {deadline_s: .inf}\n"])
def test_a_config_rose_cannot_use_never_costs_recall(taught: Path, text: str) -> None:
    """A teammate on an older rose keeps its memory when a newer rose adds a key; the notice says so once."""
    (taught / ".rose" / "config.yaml").write_text(text, encoding="utf-8")
    def ask(session: str) -> dict:
        return json.loads(hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", taught,
                                                                     prompt="retry", session_id=session), taught).stdout)
    first, second = ask("one"), ask("two")
    assert "Retry" in first["hookSpecificOutput"]["additionalContext"]
    assert "config: 1 setting(s) not understood — rose doctor" in first["systemMessage"]
    assert "Retry" in second["hookSpecificOutput"]["additionalContext"] and "config:" not in second["systemMessage"]


def test_rose_child_makes_every_hook_a_silent_no_op(taught: Path) -> None:
    for event in ("UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"):
        out = hook("claude", event, payload("claude", event, taught), taught, env={"ROSE_CHILD": "1"})
        assert out.stdout == "" and out.stderr == ""
    sessions = local_root(taught / ".rose") / "sessions"
    assert not sessions.exists() or not any(sessions.iterdir())


def test_synthetic_prompts_are_not_recalled_for(taught: Path) -> None:
    prompt = "<task-notification>\n<task-id>abc</task-id>\n<status>completed</status>\n</task-notification>"
    out = hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", taught, prompt=prompt), taught)
    assert json.loads(out.stdout or "{}") == {}


def test_precompact_resets_the_served_record(taught: Path) -> None:
    ask = payload("claude", "UserPromptSubmit", taught, prompt="add retries")
    first = json.loads(hook("claude", "UserPromptSubmit", ask, taught).stdout)
    assert "additionalContext" in first["hookSpecificOutput"]
    second = json.loads(hook("claude", "UserPromptSubmit", ask, taught).stdout)
    assert "hookSpecificOutput" not in second and "1 already in context" in second["systemMessage"]
    assert json.loads(hook("claude", "PreCompact", payload("claude", "PreCompact", taught), taught).stdout or "{}") == {}
    third = json.loads(hook("claude", "UserPromptSubmit", ask, taught).stdout)
    assert "Retry idempotent calls" in third["hookSpecificOutput"]["additionalContext"]


def test_no_store_means_no_output(project: Path) -> None:
    out = hook("claude", "UserPromptSubmit", payload("claude", "UserPromptSubmit", project, prompt="x"), project)
    assert json.loads(out.stdout or "{}") == {}


def test_unknown_agent_or_event_is_a_notice(taught: Path) -> None:
    for argv in (("vim", "UserPromptSubmit"), ("claude", "Teleport")):
        out = run_rose("hook", *argv, cwd=taught, input="{}")
        assert out.returncode == 0
        assert json.loads(out.stdout)["systemMessage"].startswith("⋯ ROSE · skipped")


def test_hook_parses_without_importing_argparse(taught: Path) -> None:
    # the hook process ends with os._exit (rose.launcher._end): the check runs there, before the real exit
    code = ("import os, sys, io, json; sys.argv=['rose','hook','claude','UserPromptSubmit'];"
            "from rose.launcher import main; sys.stdin=io.TextIOWrapper(io.BytesIO(b'{}'));"
            "real_exit = os._exit;"
            "os._exit = lambda code: real_exit(3 if 'argparse' in sys.modules else code);"
            "main(); assert 'argparse' not in sys.modules, 'argparse on the hook path'")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], cwd=taught, capture_output=True, text=True,
                         env={**os.environ})
    assert out.returncode == 0, out.stderr


# Run as the hook process itself: it ends with os._exit once its answer is flushed (rose.launcher._end), so the
# checks run there, just before the real exit, in the process that answered.
_LEAN_HOOK = """
import os, sys
real_exit = os._exit
def _checked_exit(code):
    problems = [heavy + " loaded" for heavy in ("rose.records", "typing", "dataclasses", "inspect")
                if heavy in sys.modules]
    sys.stderr.write("; ".join(problems))
    sys.stderr.flush()
    real_exit(3 if problems else code)
os._exit = _checked_exit
sys.argv = ["rose", "hook", "claude", "UserPromptSubmit"]
from rose.launcher import main
main()
"""


def test_the_in_process_prompt_hook_stays_lean(project: Path) -> None:
    """The prompt hook answered in its own process (no helper) reads index rows, never a record: rose.records (Node
    and its concerns, about a tenth of the hook's imports) stays unloaded, and so does typing (annotations only,
    under TYPE_CHECKING). No dataclass is defined on the path (its records are rose.typedrecord.Record, which
    generates no code), so neither dataclasses nor the inspect it imports is loaded at all."""
    import subprocess
    import sys

    from tests.support.gen_store import populate

    populate(project / ".rose", 60).close()
    run_rose("config", "set", "recall.selector", "hybrid", cwd=project)
    assert run_rose("index", cwd=project).returncode == 0
    stdin = payload("claude", "UserPromptSubmit", project, prompt="why is the redis cache ttl ignored")
    out = subprocess.run([sys.executable, "-c", _LEAN_HOOK], cwd=project, input=stdin, capture_output=True,
                         text=True, env={**os.environ, "ROSE_WARM_HELPER": "0"}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "lesson" in json.loads(out.stdout)["systemMessage"]
