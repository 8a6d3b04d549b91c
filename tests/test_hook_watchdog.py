"""The hook's watchdog in its two forms (rose.hooks.entry): an alarm while the hook only waits (stdin, the warm
helper's socket), a thread once the work runs in-process, where the main thread can sit inside one long C call
that no signal handler interrupts."""
from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rose.store.paths import local_root

HANG_S = 120   # only a hang reaches this


def test_a_hook_leaves_no_alarm_and_no_handler_of_its_own_behind(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from rose.hooks import entry

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROSE_WARM_HELPER", "0")

    def mine(_sig: int, _frame: object) -> None:
        raise AssertionError("the hook's alarm went off after it returned")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        for event in ("PreCompact", "UserPromptSubmit"):
            out = io.StringIO()
            assert entry.main(["claude", event], io.BytesIO(b"{}"), out) == 0
            assert signal.getsignal(signal.SIGALRM) is mine
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_in_process_work_stuck_in_one_c_call_is_still_ended_at_the_budget(tmp_path: Path) -> None:
    """A query that never ends holds the main thread inside SQLite, where a signal handler would wait forever: the
    watchdog of in-process work is a thread, which ends the hook with its fail-open notice."""
    code = (
        "import io, sqlite3, sys\n"
        "from rose.hooks import entry\n"
        "entry.BUDGET_S['PreCompact'] = 0.5\n"
        "def stuck(argv, stdin, stdout, cwd=None):\n"
        "    sqlite3.connect(':memory:').execute('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)'\n"
        "                                        ' SELECT count(*) FROM c').fetchone()\n"
        "    stdout.write('finished')\n"
        "entry.run = stuck\n"
        "entry.main(['claude', 'PreCompact'], io.BytesIO(b'{}'), sys.stdout)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=HANG_S, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                               "PYTHONPATH": ":".join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert "ran out of time" in json.loads(proc.stdout)["systemMessage"]


def _stuck_hook(folder: Path, before: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import io, os, sqlite3, sys\n"
        "from rose.hooks import entry\n"
        "entry.BUDGET_S['PreCompact'] = 0.5\n"
        "def stuck(argv, stdin, stdout, cwd=None):\n"
        f"    {before}\n"
        "    sqlite3.connect(':memory:').execute('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)'\n"
        "                                        ' SELECT count(*) FROM c').fetchone()\n"
        "entry.run = stuck\n"
        "entry.main(['claude', 'PreCompact'], io.BytesIO(b'{}'), sys.stdout)\n")
    return subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
                          timeout=HANG_S, env={"PATH": "/usr/bin:/bin", "HOME": str(folder),
                                               "ROSE_HOME": str(folder / "home-store"),
                                               "PYTHONPATH": ":".join(sys.path)})


def test_the_watchdog_ends_the_hook_even_when_its_folder_was_removed(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = _stuck_hook(gone, f"os.rmdir({str(gone)!r})")
    assert proc.returncode == 0, proc.stderr
    assert "ran out of time" in json.loads(proc.stdout)["systemMessage"]


def test_the_watchdog_logs_its_skip_without_loading_the_redactor(tmp_path: Path, monkeypatch) -> None:
    from rose.model import Scope
    from rose.store import Store

    monkeypatch.setenv("ROSE_HOME", str(tmp_path / "home-store"))   # the hook's own (_stuck_hook)
    Store.create(tmp_path / ".rose", Scope.PROJECT).close()
    (tmp_path / ".git").mkdir()
    proc = _stuck_hook(tmp_path, "sys.modules['rose.redact'] = None   # importing the redactor now fails")
    assert proc.returncode == 0, proc.stderr
    assert "ran out of time" in json.loads(proc.stdout)["systemMessage"]
    events = [json.loads(line) for line in (local_root(tmp_path / ".rose") / "events.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "skip" and "budget" in e["reason"] for e in events)
