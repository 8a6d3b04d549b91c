"""The warm helper: the hook's thin client hands recall to a process that is already warm, with the same answer;
one helper serves every environment of a user and installation; it ends itself when idle."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from rose.store.paths import local_root
from tests.conftest import run_rose
from tests.support.processes import alive, helpers_under

HANG_S = 90   # upper bound on waits for a helper to start or stop: only a hang reaches it


def _payload(project: Path, prompt: str, session: str = "w1") -> bytes:
    return json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt}).encode()


@pytest.fixture
def warm_env(monkeypatch: pytest.MonkeyPatch):
    sockets = Path(tempfile.mkdtemp(prefix="rw-", dir="/tmp"))  # short: a Unix socket path holds ~104 bytes
    with helpers_under(sockets, monkeypatch, idle_s=4):
        yield dict(os.environ)


def _wait_socket(timeout: float = HANG_S) -> Path:
    from rose.warm import client

    sock = client.socket_path()
    assert sock is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.request(sock, {"op": "ping"}, 5.0) is None and os.path.exists(sock):
            return Path(sock)  # answered (an unknown op is an error reply, which request() maps to None) and listening
        time.sleep(0.2)
    pytest.fail(f"no warm helper at {sock}")


@contextlib.contextmanager
def _kept_busy(sock: Path | str):
    """Ping the helper every 0.2 s while the test still uses it. Its idle timer (ROSE_WARM_IDLE_S=4 here) counts from
    the last request, so without this a slow step of the test on a loaded machine (a `rose index` subprocess, the
    model loading, a second helper starting) could let it end mid-test and leave the next request unanswered. Once
    the block ends nothing talks to it any more, and idling out is the helper's own business again."""
    from rose.warm import client

    stop = threading.Event()

    def ping() -> None:
        while not stop.wait(0.2):
            client.request(str(sock), {"op": "ping"}, 5.0)

    pinger = threading.Thread(target=ping, daemon=True)
    pinger.start()
    try:
        yield
    finally:
        stop.set()
        pinger.join()


def _wait_gone(pid: int, timeout: float = HANG_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.2)


def test_the_helper_answers_hooks_and_dense_queries_then_exits_when_idle(project: Path, warm_env) -> None:
    from rose.config import EmbedSettings
    from rose.warm import client

    run_rose("init", cwd=project)
    run_rose("add", "Retry idempotent calls with exponential backoff.", "--title", "Retry policy", cwd=project)
    # the first prompt finds no helper: it is answered in-process and a helper is started
    first = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=_payload(project, "add retries").decode())
    assert "Retry policy" in json.loads(first.stdout)["systemMessage"]
    sock = _wait_socket()
    pid = int(Path(client.sibling(str(sock), ".pid")).read_text())
    with _kept_busy(sock):
        # the next prompt is answered by the helper, with the same kind of answer
        answered = client.run_hook(["claude", "UserPromptSubmit"], _payload(project, "add retries", session="w2"), 60)
        assert answered is not None
        data = json.loads(answered)
        assert "Retry idempotent calls" in data["hookSpecificOutput"]["additionalContext"]
        assert data["systemMessage"].startswith("⋯ ROSE · 1 lesson")
        # a malformed payload is still a valid-JSON notice when the helper answers
        assert json.loads(client.run_hook(["claude", "UserPromptSubmit"], b"not json", 60))["systemMessage"].startswith(
            "⋯ ROSE · skipped")
        # dense ranks come back from the loaded model (it loads in the background when the helper starts)
        db = str(local_root(project / ".rose") / "index.db")
        run_rose("index", cwd=project)
        embed = {k: getattr(v, "value", v) for k, v in asdict(EmbedSettings()).items()}
        reply = None
        deadline = time.monotonic() + HANG_S
        while reply is None and time.monotonic() < deadline:
            reply = client.dense(embed, "retries with backoff", [db], 5, timeout=5.0)
            if reply is None:
                time.sleep(0.25)
        assert reply is not None and reply["ranks"][db][0][1] > 0
    # idle: nothing talks to it any more, so it ends itself and cleans up after itself
    _wait_gone(pid)
    assert not alive(pid), "the helper outlived its idle deadline"
    assert not sock.exists() and not os.path.exists(client.sibling(str(sock), ".pid"))


def test_one_helper_serves_every_environment_of_a_user(project: Path, tmp_path: Path, warm_env,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A different HOME, PATH or API key is a different request, not a different process."""
    from rose.warm import client

    a = client.socket_path()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("PATH", "/nowhere:" + os.environ["PATH"])
    b = client.socket_path()
    monkeypatch.setenv("HOME", str(tmp_path / "other"))
    c = client.socket_path()
    assert a == b == c and a is not None
    # two users' worth of global stores, one helper: each request is answered from its own ROSE_HOME
    homes = {}
    for name in ("alice-home", "bob-home"):
        home = tmp_path / name
        env = {"ROSE_HOME": str(home / ".rose")}
        run_rose("add", f"In {name} always say the word {name.split('-')[0]}word.", "--scope", "global",
                 "--title", f"{name} rule", cwd=project, env=env)
        homes[name] = env
    run_rose("init", cwd=project)
    run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=_payload(project, "hello").decode())
    sock = _wait_socket()
    pid = int(Path(client.sibling(str(sock), ".pid")).read_text())
    with _kept_busy(sock):
        for name, env in homes.items():
            monkeypatch.setenv("ROSE_HOME", env["ROSE_HOME"])
            out = json.loads(client.run_hook(["claude", "UserPromptSubmit"], _payload(project, "hi", session=name), 60))
            context = out["hookSpecificOutput"]["additionalContext"]
            assert f"{name.split('-')[0]}word" in context, (name, context)
            other = "bob" if name.startswith("alice") else "alice"
            assert f"{other}word" not in context
            assert int(Path(client.sibling(str(sock), ".pid")).read_text()) == pid   # the same helper answered
    assert len(list(Path(os.environ["TMPDIR"]).rglob("warm-*.sock"))) == 1


def test_two_helpers_started_at_once_leave_one(warm_env) -> None:
    from rose.warm import client

    sock = client.socket_path()
    assert sock is not None
    env = {**os.environ, "ROSE_CHILD": "1"}
    first = subprocess.Popen([sys.executable, "-m", "rose.warm.server", sock], env=env)
    try:
        with _kept_busy(_wait_socket()):   # the first one must still be there when the second one starts
            second = subprocess.run([sys.executable, "-m", "rose.warm.server", sock], env=env, timeout=HANG_S)
            assert second.returncode == 0           # it found the first one's lock and left at once
            assert first.poll() is None and client.request(sock, {"op": "ping"}, 5.0) is None
            assert int(Path(client.sibling(sock, ".pid")).read_text()) == first.pid
    finally:
        first.terminate()
        first.wait(timeout=HANG_S)


def test_no_helper_is_started_when_they_are_switched_off(project: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    run_rose("init", cwd=project)
    run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=_payload(project, "x").decode())
    assert not list(tmp_path.rglob("warm-*.sock")) and not list(tmp_path.rglob("warm-*.spawn"))


def test_the_client_imports_stay_lean() -> None:
    code = ("import sys; import rose.warm.client, rose.hooks.entry;"
            "heavy = [m for m in ('argparse', 'yaml', 'rose.store', 'rose.recall', 'rose.judge', 'subprocess',"
            " 'dataclasses', 'sqlite3', 'pathlib', 'typing', 'json', 're', 'enum', 'socket', 'rose.errors',"
            " 'threading', 'struct', 'zlib')"
            " if m in sys.modules]; assert not heavy, heavy")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_a_helper_retires_when_roses_code_changes_under_it(warm_env, tmp_path: Path) -> None:
    """An upgrade (or an edit in a checkout) must not leave the old code serving prompts: the helper notices the
    change itself and exits, and the next prompt starts one with the new code. (The stamp is a file here.)"""
    from rose.warm import client

    sock = client.socket_path()
    stamp = tmp_path / "stamp"
    stamp.write_text("v1")
    code = ("import sys; from pathlib import Path; import rose.warm.client as c, rose.warm.server as s;"
            f"c.code_stamp = lambda: Path({str(stamp)!r}).read_text(); s.CODE_CHECK_EVERY_S = 0.2;"
            "s.main([sys.argv[1]])")
    helper = subprocess.Popen([sys.executable, "-c", code, sock], env={**os.environ, "ROSE_CHILD": "1",
                                                                       "ROSE_WARM_IDLE_S": "600"})
    try:
        _wait_socket()
        assert helper.poll() is None
        stamp.write_text("v2")              # rose's code changed
        helper.wait(timeout=HANG_S)         # it leaves by itself
        assert not os.path.exists(sock)
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait(timeout=HANG_S)


def test_a_skip_in_a_hook_the_helper_ran_is_logged_in_the_callers_store(layers, monkeypatch) -> None:
    """The helper runs in `/`: the skip of a hook it ran goes to the store of the caller's folder, not to `/`'s."""
    from rose.store.events import EventKind
    from rose.warm import server

    monkeypatch.chdir("/")
    out = server._run_hook(["claude", "UserPromptSubmit"], "not json", str(layers.cwd), dict(os.environ))
    assert "skipped" in json.loads(out)["systemMessage"]
    events = [json.loads(line) for line in layers.project.events_path.read_text(encoding="utf-8").splitlines()]
    assert [(e["kind"], e["hook"]) for e in events if e["kind"] == EventKind.SKIP.value] == \
        [("skip", "UserPromptSubmit")]


def test_a_helper_that_runs_out_of_time_is_a_logged_skip(layers, monkeypatch) -> None:
    """The helper took the prompt and did not answer within the budget: the notice says so, and the caller logs it."""
    import io

    from rose.hooks import entry
    from rose.warm import client

    monkeypatch.setenv("ROSE_WARM_HELPER", "1")
    monkeypatch.setattr(client, "socket_path", lambda: "/nonexistent/rose.sock")
    monkeypatch.setattr(client, "_exchange", lambda *_a, **_k: client._TIMED_OUT)   # took it, never answered
    monkeypatch.chdir(layers.cwd)
    payload = json.dumps({"session_id": "s1", "cwd": str(layers.cwd), "hook_event_name": "UserPromptSubmit",
                          "prompt": "hello"}).encode()
    stdout = io.StringIO()
    assert entry.main(["claude", "UserPromptSubmit"], io.BytesIO(payload), stdout) == 0
    assert "ran out of time" in json.loads(stdout.getvalue())["systemMessage"]
    events = [json.loads(line) for line in layers.project.events_path.read_text(encoding="utf-8").splitlines()]
    skips = [e for e in events if e["kind"] == "skip"]
    assert [e["hook"] for e in skips] == ["UserPromptSubmit"] and "warm helper" in skips[0]["reason"]


def test_the_helper_runs_its_blas_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """One query vector against one matrix per request: idle BLAS workers only spin (they doubled its CPU). The
    setting is read when numpy loads, so it is in place before serve() runs, and the request's own environment
    (what a child it starts inherits) is untouched by it."""
    from rose import environment
    from rose.embed import BLAS_THREADS
    from rose.warm import server

    for name in BLAS_THREADS:
        monkeypatch.setenv(name, "4")   # recorded, so the test's end restores this process's own value
        monkeypatch.delenv(name)
    seen: dict[str, str | None] = {}

    def serve(sock: str) -> None:
        seen.update({name: os.environ.get(name) for name in BLAS_THREADS})
        with environment.using({"PATH": "/usr/bin"}, "/"):
            seen["child"] = environment.child().get("OPENBLAS_NUM_THREADS")

    monkeypatch.setattr(server, "serve", serve)
    assert server.main(["/nonexistent/warm.sock"]) == 0
    assert seen == {**BLAS_THREADS, "child": None}


def test_the_hook_request_written_by_hand_is_what_json_reads() -> None:
    """The per-prompt client writes its request without json: every string must come back exactly."""
    from rose.warm import client

    tricky = ["plain", "", 'quo"te \\ back', "tab\tnew\nline\r\x00\x1f\x7f", "naïve ⋯ 日本 🌹", "\u2028\u2029",
              "lone \udc80\udcff surrogates \ud800", "</script>"]
    env = {k: v for k, v in zip(tricky, reversed(tricky))}
    payload = b"prompt: \xff\xfe invalid utf-8 " + "🌹".encode()
    line = client.hook_request(["claude", "UserPromptSubmit"], payload, tricky[4], env)
    assert line.endswith(b"\n") and line.count(b"\n") == 1   # one line: the helper reads it with readline
    assert json.loads(line) == {"op": "hook", "reply": "raw", "argv": ["claude", "UserPromptSubmit"],
                                "stdin": payload.decode("utf-8", "surrogateescape"), "cwd": tricky[4], "env": env}
    for text in tricky:
        assert json.loads(client.quoted(text)) == text
    assert json.loads(client.timeout_notice(10)) == {
        "systemMessage": "⋯ ROSE · recall ran out of time (10s): skipped this time"}
