"""The warm helper: the hook's thin client hands recall to a process that is already warm, with the same answer,
and the helper ends itself when idle."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_rose
from tests.support.processes import alive


def _payload(project: Path, prompt: str, session: str = "w1") -> bytes:
    return json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt}).encode()


@pytest.fixture
def warm_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    sockets = tmp_path / "sock"
    sockets.mkdir()
    monkeypatch.setenv("TMPDIR", str(sockets))
    monkeypatch.setenv("ROSE_WARM_HELPER", "1")
    monkeypatch.setenv("ROSE_WARM_IDLE_S", "4")
    return dict(os.environ)


def _wait_socket(timeout: float = 60) -> Path:
    from rose.warm import client

    sock = client.socket_path()
    deadline = time.time() + timeout
    while time.time() < deadline:
        if client.request(sock, {"op": "ping"}, 1.0) is None and os.path.exists(sock):
            return Path(sock)  # answered (an unknown op is an error reply, which request() maps to None) and listening
        time.sleep(0.2)
    pytest.fail(f"no warm helper at {sock}")


def test_the_helper_answers_hooks_and_dense_queries_then_exits_when_idle(project: Path, warm_env) -> None:
    from rose.warm import client

    run_rose("init", cwd=project)
    run_rose("add", "Retry idempotent calls with exponential backoff.", "--title", "Retry policy", cwd=project)
    # the first prompt finds no helper: it is answered in-process and a helper is started
    first = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=_payload(project, "add retries").decode())
    assert "Retry policy" in json.loads(first.stdout)["systemMessage"]
    sock = _wait_socket()
    pid = int(Path(client.sibling(str(sock), ".pid")).read_text())
    # the next prompt is answered by the helper, with the same kind of answer
    answered = client.run_hook(["claude", "UserPromptSubmit"], _payload(project, "add retries", session="w2"))
    assert answered is not None
    data = json.loads(answered)
    assert "Retry idempotent calls" in data["hookSpecificOutput"]["additionalContext"]
    assert data["systemMessage"].startswith("⋯ ROSE · 1 lesson")
    # a malformed payload is still a valid-JSON notice when the helper answers
    assert json.loads(client.run_hook(["claude", "UserPromptSubmit"], b"not json"))["systemMessage"].startswith(
        "⋯ ROSE · skipped")
    # dense ranks come back from the loaded model
    db = str(project / ".rose" / "index.db")
    run_rose("index", cwd=project)
    from dataclasses import asdict

    from rose.config import EmbedSettings

    embed = {k: getattr(v, "value", v) for k, v in asdict(EmbedSettings()).items()}
    reply = None
    for _ in range(40):  # the model loads in the background when the helper starts
        reply = client.dense(embed, "retries with backoff", [db], 5)
        if reply is not None:
            break
        time.sleep(0.25)
    assert reply is not None and reply["ranks"][db][0][1] > 0
    # idle: it ends itself and cleans up after itself
    deadline = time.time() + 30
    while time.time() < deadline and alive(pid):
        time.sleep(0.5)
    assert not alive(pid), "the helper outlived its idle deadline"
    assert not sock.exists() and not os.path.exists(client.sibling(str(sock), ".pid"))


def test_helpers_are_per_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rose.warm import client

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    a = client.socket_path()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    b = client.socket_path()
    monkeypatch.setenv("HOME", str(tmp_path / "other"))
    c = client.socket_path()
    assert len({a, b, c}) == 3 and all(len(p) < 100 for p in (a, b, c))


def test_no_helper_is_started_when_they_are_switched_off(project: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    run_rose("init", cwd=project)
    run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=_payload(project, "x").decode())
    assert not list(tmp_path.rglob("warm-*.sock")) and not list(tmp_path.rglob("warm-*.spawn"))


def test_the_client_imports_stay_lean() -> None:
    code = ("import sys; import rose.warm.client, rose.hooks.entry;"
            "heavy = [m for m in ('argparse', 'yaml', 'rose.store', 'rose.recall', 'rose.judge', 'subprocess',"
            " 'dataclasses', 'sqlite3', 'pathlib', 'typing') if m in sys.modules]; assert not heavy, heavy")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
