"""The warm helper answers the read-only inspection commands: the bytes on stdout and stderr and the exit code are
the ones the command prints in a process of its own, on the same store; a hand edit made just before is seen; a
command that writes or asks, a command line argparse answers itself, no helper, helpers off, or a reply that is not
a whole one, all mean the command runs in-process as before."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.conftest import run_rose
from tests.support.processes import helpers_under
from tests.support.waits import wait_until

HANG_S = 90


@pytest.fixture
def helper(monkeypatch: pytest.MonkeyPatch):
    """A warm helper of this user, started as a hook would start it, serving from a private folder of the test's."""
    sockets = Path(tempfile.mkdtemp(prefix="rwc-", dir="/tmp"))  # short: a Unix socket path holds ~104 bytes
    with helpers_under(sockets, monkeypatch, idle_s=600):
        from rose.warm import client

        sock = client.socket_path()
        assert sock is not None
        proc = subprocess.Popen([sys.executable, "-m", "rose.warm.server", sock],
                                env={**os.environ, "ROSE_CHILD": "1"}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: client.request(sock, {"op": "ping"}, 5.0) is None and os.path.exists(sock),
                       "the warm helper listening")
            yield sock
        finally:
            proc.terminate()
            proc.wait(timeout=HANG_S)


def _served(sock: str, argv: list[str], cwd: Path) -> tuple[int, bytes, bytes] | None:
    """What the helper answers for `rose ARGV` run in `cwd`, as the client's request carries it (None: not served)."""
    from rose.warm import client

    line = client.command_request(argv, str(cwd), dict(os.environ), [("utf-8", "strict"), ("utf-8", "strict")])
    data = client._exchange(sock, line, 120.0, whole=True)
    assert isinstance(data, bytes), data
    return client.parse_command_reply(data)


def _in_process(argv: list[str], cwd: Path, helpers: str = "0") -> tuple[int, bytes, bytes]:
    env = {**os.environ, "ROSE_WARM_HELPER": helpers, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-m", "rose", *argv], cwd=cwd, env=env, capture_output=True,
                          timeout=HANG_S)
    return done.returncode, done.stdout, done.stderr


def _taught(project: Path) -> str:
    run_rose("init", cwd=project)
    run_rose("add", "Retry idempotent calls with exponential backoff.", "--title", "Retry policy", cwd=project)
    run_rose("add", "Pin the redis cache ttl in settings — never trust the café default.", "--title", "Redis ttl",
             "--family", "cache", cwd=project)
    listed = run_rose("list", "--json", cwd=project, env={"ROSE_WARM_HELPER": "0"})
    import json

    return next(r["id"] for r in json.loads(listed.stdout)["rows"] if r["title"] == "Redis ttl")


def test_each_served_command_prints_the_bytes_and_exit_code_it_prints_in_process(project: Path, helper: str) -> None:
    node_id = _taught(project)
    run_rose("config", "set", "recall.selector", "hybrid", cwd=project)   # another one asks a model: not served
    # while the helper's model loads, a command that ranks is left to its caller (it would load a model itself)
    wait_until(lambda: _served(helper, ["search", "retry"], project) is not None, "the helper's model loaded")
    commands = [["status"], ["status", "--json"], ["search", "retry", "backoff"], ["search", "--json", "redis"],
                ["recall", "--prompt", "add retries to the client"], ["recall", "--json", "--prompt", "redis ttl"],
                ["tree"], ["tree", "--json"], ["list"], ["list", "--json"], ["list", "cache"], ["show", node_id],
                ["show", "--json", node_id], ["show", "no-such-lesson"], ["route"], ["route", "--json"], ["credit"],
                ["status", "--cwd", project.name], ["list", "--cwd", "."],
                ["trace", "--prompt", "add retries to the client"], ["trace", "--json", "--prompt", "redis ttl"],
                ["conflicts"], ["conflicts", "--json"], ["events"], ["events", "--json", "--limit", "2"],
                ["evolution"], ["evolution", "list", "--json"], ["evolution", "show", "no-such-skill"]]
    for argv in commands:
        cwd = project.parent if "--cwd" in argv and argv[-1] != "." else project
        expected = _in_process(argv, cwd)
        served = _served(helper, argv, cwd)
        assert served is not None, f"rose {' '.join(argv)} was not served"
        assert served == expected, argv
    assert _in_process(["show", "no-such-lesson"], project)[0] == 1   # an error's one line and code come back too
    # the console command itself: its client prints the helper's answer, byte for byte
    for argv in (["status"], ["list", "--json"], ["show", node_id]):
        assert _in_process(argv, project, helpers="1") == _in_process(argv, project), argv


def test_a_hand_edit_made_just_before_a_served_command_is_seen(project: Path, helper: str) -> None:
    node_id = _taught(project)
    # lexical only: the helper re-embeds an edited lesson in its own time, so a dense rank right after an edit
    # depends on that timing (served or not); the edit itself must be seen by the very next command
    run_rose("config", "set", "embed.provider", "none", "--scope", "global", cwd=project)
    assert b"zeppelin" not in _served(helper, ["show", node_id], project)[1]
    [path] = [p for p in (project / ".rose" / "nodes").rglob(f"{node_id}.md")]
    path.write_text(path.read_text().replace("never trust the café default", "the zeppelin default is wrong"))
    shown = _served(helper, ["show", node_id], project)
    assert shown is not None and b"zeppelin" in shown[1]
    found = _served(helper, ["search", "--json", "zeppelin"], project)
    assert found is not None and node_id.encode() in found[1]
    assert found == _in_process(["search", "--json", "zeppelin"], project)


def test_what_writes_asks_or_is_answered_by_argparse_is_never_served(project: Path, helper: str) -> None:
    node_id = _taught(project)
    before = sorted(p.name for p in (project / ".rose").rglob("*.md"))
    for argv in (["add", "Always run the linter."], ["delete", node_id, "--yes"], ["clear", "--yes"],
                 ["route", "--when", "the task deploys", "--then", "read nodes/cache/ first"],
                 ["route", "--forget", "r-nothing"], ["recall", "--prompt", "x", "--selector", "judge"],
                 ["trace", "--prompt", "x", "--selector", "judge"], ["evolution", "approve", "no-such-skill"],
                 ["evolution", "reject", "x"], ["evolution", "rollback", "x"], ["evolution", "promote", "x"],
                 ["evolution", "distill"],
                 ["status", "--help"], ["status", "--no-such-flag"], ["search"], ["index"], ["doctor"]):
        assert _served(helper, argv, project) is None, argv
    assert sorted(p.name for p in (project / ".rose").rglob("*.md")) == before
    assert not list((project / ".rose").rglob("routing/*.yaml"))
    run_rose("config", "set", "recall.selector", "judge", cwd=project)
    assert _served(helper, ["recall", "--prompt", "redis"], project) is None   # its selector would ask a model
    run_rose("config", "set", "recall.selector", "hybrid", cwd=project)
    assert _served(helper, ["recall", "--prompt", "redis"], project) is not None


def test_without_a_whole_answer_from_a_helper_the_command_runs_in_process(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rose.warm import client

    _taught(project)
    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in range(2)]   # what a terminal would get
    monkeypatch.setattr(sys, "stdout", streams[0])
    monkeypatch.setattr(sys, "stderr", streams[1])
    monkeypatch.setenv("ROSE_WARM_HELPER", "1")
    monkeypatch.setattr(client, "socket_path", lambda: str(tmp_path / "none.sock"))   # no helper there
    assert client.run_command(["status"]) is None
    assert client.run_command(["add", "x"]) is None   # never sent: not an inspection command
    # a helper of ours that answers something that is not a whole command reply: nothing of it is printed
    sock_path = f"/tmp/rwc-{os.getpid()}.sock"
    replies = [b"-not served\n", b"C0 99 0\ncut short", b'{"error": "boom"}\n', b"C0 x 0\n"]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(len(replies))
    monkeypatch.setattr(client, "socket_path", lambda: sock_path)

    answered: list[bytes] = []

    def answer() -> None:
        for reply in replies:
            conn, _ = server.accept()
            request = b""
            while not request.endswith(b"\n"):
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                request += chunk
            answered.append(request)
            conn.sendall(reply)
            conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        for _ in replies:
            assert client.run_command(["status"]) is None
        thread.join(HANG_S)
    finally:
        server.close()
        os.unlink(sock_path)
    assert len(answered) == len(replies) and all(b'"op": "command"' in r for r in answered)
    assert [s.buffer.getvalue() for s in streams] == [b"", b""]   # nothing of those replies was printed
    # helpers switched off: never asked
    monkeypatch.setenv("ROSE_WARM_HELPER", "0")
    monkeypatch.setattr(client, "_exchange", lambda *a, **k: pytest.fail("asked a helper while they are off"))
    assert client.run_command(["status"]) is None
    code, out, _err = _in_process(["status"], project, helpers="0")
    assert code == 0 and out


def test_the_command_request_written_by_hand_is_what_json_reads() -> None:
    import json

    from rose.warm import client

    argv, env = ["search", 'quo"te\\ \ud800 café\n'], {"A\tB": "x\x00y", "HOME": "/h"}
    line = client.command_request(argv, "/w d", env, [("utf-8", "strict"), ("ascii", "backslashreplace")])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"op": "command", "argv": argv, "cwd": "/w d", "env": env,
                                "streams": [["utf-8", "strict"], ["ascii", "backslashreplace"]]}


def test_while_the_helper_warms_a_command_that_ranks_runs_in_its_callers_process() -> None:
    from rose.warm import commands

    streams = [("utf-8", "strict"), ("utf-8", "strict")]
    for argv in (["search", "retry"], ["recall", "--prompt", "retry"]):
        assert commands.run(argv, "/", dict(os.environ), streams, warming=lambda: True) is None


def test_a_served_conflicts_listing_shows_the_disputed_lesson_as_in_process(project: Path, helper: str) -> None:
    node_id = _taught(project)
    [path] = [p for p in (project / ".rose" / "nodes").rglob(f"{node_id}.md")]
    text = path.read_text()
    assert "status: active" in text
    path.write_text(text.replace("status: active", "status: disputed\nconflict: which ttl wins?", 1))
    for argv in (["conflicts"], ["conflicts", "--json"]):
        served = _served(helper, argv, project)
        assert served is not None and node_id.encode() in served[1], (argv, served)
        assert served == _in_process(argv, project), argv


def test_a_served_command_shows_a_lessons_control_characters_as_escapes_as_in_process(
        project: Path, helper: str) -> None:
    from tests.trust.test_terminal_controls import _controls, _hostile_store

    titles = _hostile_store(project)
    run_rose("index", cwd=project)   # hand-made files: their vectors made now, not by whichever process looks first
    run_rose("config", "set", "recall.selector", "hybrid", cwd=project)
    wait_until(lambda: _served(helper, ["search", "deploy"], project) is not None, "the helper's model loaded")
    for argv in (["list"], ["list", "--json"], ["tree"], ["show", next(iter(titles))], ["search", "deploy", "checklist"],
                 ["search", "--json", "deploy"], ["recall", "--prompt", "run the deploy checklist"], ["status"]):
        served = _served(helper, argv, project)
        assert served is not None and served == _in_process(argv, project), argv
        for data in served[1:]:
            assert not _controls(data.decode("utf-8")), argv
    assert b"\\u001b]0;pwned\\u0007" in _served(helper, ["list"], project)[1]   # type: ignore[index]


def test_a_command_that_ranks_with_no_helper_up_starts_one_that_serves_the_next(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rose.warm import client

    _taught(project)
    run_rose("config", "set", "recall.selector", "hybrid", cwd=project)
    sockets = Path(tempfile.mkdtemp(prefix="rws-", dir="/tmp"))
    with helpers_under(sockets, monkeypatch, idle_s=600):
        sock = client.socket_path()
        assert sock is not None and not os.path.exists(sock)
        argv = ["search", "--json", "retry", "backoff"]
        expected = _in_process(argv, project)
        assert not os.path.exists(sock)   # helpers off: that one started nothing
        # the console command with helpers allowed and none up: it answers here, as in a process of its own...
        assert _in_process(argv, project, helpers="1") == expected
        # ... and has started a helper, detached, which answers the same command once its model is loaded
        wait_until(lambda: os.path.exists(sock) and _served(sock, argv, project) is not None,
                   "the helper the command started serving it")
        assert _served(sock, argv, project) == expected
        assert _in_process(argv, project, helpers="1") == expected


def test_only_a_command_that_ranks_starts_a_helper_and_only_when_none_answers(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rose.warm import client

    started: list[str | None] = []
    monkeypatch.setattr(client, "spawn", lambda sock: started.append(sock) or True)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    monkeypatch.setenv("ROSE_WARM_HELPER", "1")
    nobody = str(tmp_path / "none.sock")
    monkeypatch.setattr(client, "socket_path", lambda: nobody)
    for argv in (["status"], ["list"], ["tree"], ["show", "x"], ["search", "--help"], ["recall", "-h"],
                 ["add", "x"], ["index"]):
        assert client.run_command(argv) is None
    assert started == []   # none of those ranks (or it only prints its usage)
    for argv in (["search", "retry"], ["recall", "--prompt", "x"], ["trace", "--prompt", "x"]):
        assert client.run_command(argv) is None
    assert started == [nobody] * 3   # spawn itself keeps a second start off while the first loads (SPAWN_GRACE_S)
    # a helper of ours that is up and declines (its model still loading, a selector that asks): left alone
    sock_path = f"/tmp/rwd-{os.getpid()}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(1)
    monkeypatch.setattr(client, "socket_path", lambda: sock_path)

    def decline() -> None:
        conn, _ = server.accept()
        request = b"x"
        while request and not request.endswith(b"\n"):
            request = conn.recv(1 << 20)
        conn.sendall(b"-not served\n")
        conn.close()

    thread = threading.Thread(target=decline, daemon=True)
    thread.start()
    try:
        assert client.run_command(["search", "retry"]) is None
        thread.join(HANG_S)
    finally:
        server.close()
        os.unlink(sock_path)
    assert started == [nobody] * 3
    monkeypatch.setenv("ROSE_WARM_HELPER", "0")   # helpers off: never asked, never started
    monkeypatch.setattr(client, "socket_path", lambda: nobody)
    assert client.run_command(["search", "retry"]) is None
    assert started == [nobody] * 3


def test_a_served_command_says_rose_is_off_in_the_callers_repository_as_in_process(project: Path, helper: str) -> None:
    _taught(project)
    (project / ".rose-off").write_text("", encoding="utf-8")   # the caller's repository, not the helper's folder
    for argv in (["status"], ["status", "--json"]):
        served = _served(helper, argv, project)
        assert served is not None and b"rose is off in this repository" in served[1], (argv, served)
        assert served == _in_process(argv, project), argv
