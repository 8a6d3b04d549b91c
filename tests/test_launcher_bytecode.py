"""PYTHONDONTWRITEBYTECODE=1: rose's bytecode goes to its private runtime folder, never beside a source file, so
a hook does not compile its modules again each time; a folder open to others is never used for it."""
from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_rose


def _hook(project: Path, tmp: Path) -> None:
    payload = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "anything", "transcript_path": ""})
    out = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload,
                   env={"PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp), "ROSE_WARM_HELPER": "0",
                        "XDG_RUNTIME_DIR": ""})
    assert out.returncode == 0, out.stderr


def test_bytecode_is_cached_in_the_private_folder(project: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir()
    _hook(project, runtime)
    prefix = runtime / f"rose-{os.getuid()}" / "pycache"
    assert (os.stat(prefix).st_mode & 0o777) == 0o700
    cached = {p.name.split(".")[0] for p in prefix.rglob("*.pyc")}
    assert {"entry", "adapters", "layers"} <= cached   # the hook's own modules, compiled once, kept here


def test_a_pycache_folder_open_to_others_is_not_used(project: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    (runtime / f"rose-{os.getuid()}" / "pycache").mkdir(parents=True)
    os.chmod(runtime / f"rose-{os.getuid()}", 0o700)
    os.chmod(runtime / f"rose-{os.getuid()}" / "pycache", 0o777)
    _hook(project, runtime)
    assert not list((runtime / f"rose-{os.getuid()}" / "pycache").rglob("*.pyc"))


def test_a_hook_ends_without_the_interpreters_teardown_after_its_answer_is_flushed(monkeypatch) -> None:
    import io
    import sys

    from rose import launcher
    from rose.hooks import entry

    events: list[object] = []

    class Out(io.StringIO):
        def flush(self) -> None:
            events.append(("flushed", self.getvalue()))

    class Ended(Exception):
        pass

    def exit_now(code: int) -> None:
        events.append(("exit", code))
        raise Ended

    def hook_main(argv: list[str]) -> int:
        sys.stdout.write('{"systemMessage": "answer"}')
        return 0

    monkeypatch.setattr(sys, "argv", ["rose", "hook", "claude", "UserPromptSubmit"])
    monkeypatch.setattr(sys, "stdout", Out())
    monkeypatch.setattr(sys, "stderr", Out())
    monkeypatch.setattr(entry, "main", hook_main)
    monkeypatch.setattr(launcher.os, "_exit", exit_now)
    try:
        launcher.main()
    except Ended:
        pass
    assert events == [("flushed", '{"systemMessage": "answer"}'), ("flushed", ""), ("exit", 0)]
