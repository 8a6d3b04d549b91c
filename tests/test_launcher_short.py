"""A read-only command in a process of its own (rose.launcher.READ_ONLY) runs without the cyclic collector and ends
without the interpreter's teardown, once its output is flushed and with the code the command returned; any other
command ends as usual, the collector on."""
from __future__ import annotations

import gc
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_rose


class _Ended(Exception):
    pass


def _run(monkeypatch: pytest.MonkeyPatch, argv: list[str], code: int) -> tuple[list[object], object]:
    from rose import cli, launcher

    events: list[object] = []

    class Out(io.StringIO):
        def flush(self) -> None:
            events.append(("flushed", self.getvalue()))

    def exit_now(status: int) -> None:
        events.append(("exit", status))
        raise _Ended

    def cli_main() -> int:
        events.append(("collector on", gc.isenabled()))
        sys.stdout.write("rows")
        return code

    monkeypatch.setattr(sys, "argv", ["rose", *argv])
    monkeypatch.setattr(sys, "stdout", Out())
    monkeypatch.setattr(sys, "stderr", Out())
    monkeypatch.setenv("ROSE_WARM_HELPER", "0")
    monkeypatch.setattr(cli, "main", cli_main)
    monkeypatch.setattr(launcher.os, "_exit", exit_now)
    was = gc.isenabled()
    try:
        returned: object = launcher.main()
    except _Ended:
        returned = None
    finally:
        if was:
            gc.enable()
    return events, returned


@pytest.mark.parametrize("command", ["list", "tree", "status", "doctor"])
def test_a_read_only_command_ends_after_its_output_is_flushed_with_its_code(monkeypatch: pytest.MonkeyPatch,
                                                                           command: str) -> None:
    events, returned = _run(monkeypatch, [command], 1)
    assert events == [("collector on", False), ("flushed", "rows"), ("flushed", ""), ("exit", 1)]
    assert returned is None


def test_a_command_that_writes_ends_as_usual(monkeypatch: pytest.MonkeyPatch) -> None:
    events, returned = _run(monkeypatch, ["add", "a lesson"], 0)
    assert events == [("collector on", True)]
    assert returned == 0


@pytest.fixture
def stocked(project: Path) -> Path:
    from tests.support.gen_store import populate

    populate(project / ".rose", 300).close()
    return project


def test_a_read_only_command_cut_off_by_its_reader_says_nothing_more(stocked: Path) -> None:
    # `rose list | head -1`: the reader goes away; the command ends quietly with its code, no teardown complaint
    with subprocess.Popen([sys.executable, "-m", "rose", "list", "--all"], cwd=stocked, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env={**os.environ, "ROSE_WARM_HELPER": "0"}) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(1)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0
    assert "Exception ignored" not in err and "Traceback" not in err, err


def test_a_read_only_command_in_its_own_process_prints_everything(stocked: Path) -> None:
    out = run_rose("list", "--all", cwd=stocked, env={"ROSE_WARM_HELPER": "0"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.endswith("\n") and out.stdout.count("\n") >= 300   # a row per lesson, the last one too
