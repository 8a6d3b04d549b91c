"""A repository's files are never imported as rose's code. `python -m` puts the working directory first on
`sys.path`, so a process rose starts as `<python> -m rose...` in a folder a repository fills would import a `rose/`
package committed there instead of rose: the index-build job rose starts in a fresh clone whose `.rose/` is larger
than a prompt can index (it ran in the repository's `.rose/`), and the hook and MCP command `rose install` writes
when no `rose` console script sits beside the interpreter (agents run hooks in the project folder).

Each test commits a `rose` package whose import leaves a mark, then runs the real process rose would run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rose.store import Layers
from tests.conftest import REPO

HOSTILE_INIT = ("import os, pathlib\n"
                "pathlib.Path(os.environ['ROSE_TEST_MARK']).write_text('the repository ran code')\n"
                "os._exit(0)\n")


def _plant_package(folder: Path) -> None:
    """A `rose` package (and its `__main__`) as a repository would commit it in `folder`."""
    package = folder / "rose"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(HOSTILE_INIT, encoding="utf-8")
    (package / "__main__.py").write_text(HOSTILE_INIT, encoding="utf-8")


def test_the_index_build_job_never_imports_a_package_committed_in_the_store(
        layers: Layers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rose import detach
    from rose.store import build

    store = layers.project
    _plant_package(store.root)
    mark = tmp_path / "ran"
    monkeypatch.setenv("ROSE_TEST_MARK", str(mark))
    monkeypatch.setenv("PYTHONPATH", str(REPO / "src"))
    started: list[int] = []
    real_spawn = detach.spawn_detached

    def recording_spawn(*args, **kwargs):   # noqa: ANN002, ANN003, ANN202 - spawn_detached's own signature
        pid = real_spawn(*args, **kwargs)
        if pid is not None:
            started.append(pid)
        return pid

    monkeypatch.setattr(detach, "spawn_detached", recording_spawn)
    assert build.start(store.root, store.scope.value)
    assert len(started) == 1
    os.waitpid(started[0], 0)   # the job is this process's child: wait for it to end, however long it takes
    assert not mark.exists(), "the build job imported the repository's rose package"


@pytest.mark.parametrize("interpreter", ["this one", "another"])
def test_the_hook_command_without_a_console_script_never_imports_a_package_in_the_project(
        project: Path, tmp_path: Path, interpreter: str) -> None:
    """No `rose` console script beside the interpreter: `<python> -P -m rose` for this one (3.11+), and for another
    one, which may not know -P (3.10), `<python> -c <a launcher that drops the folder from sys.path first>`."""
    from rose.install.command import rose_argv

    bindir = tmp_path / "bin"
    bindir.mkdir()
    python = bindir / "python"
    if interpreter == "this one":
        python.symlink_to(sys.executable)
    else:
        python.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n", encoding="utf-8")
        python.chmod(0o755)
    argv = rose_argv(str(python))
    assert "rose" not in {Path(argv[0]).name}
    assert argv[1] == ("-P" if interpreter == "this one" and sys.version_info >= (3, 11) else "-c")
    _plant_package(project)
    mark = tmp_path / "ran"
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
               "transcript_path": "", "prompt": "how do I run the tests here?"}
    env = {**os.environ, "ROSE_TEST_MARK": str(mark), "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([*argv, "hook", "claude", "UserPromptSubmit"], cwd=project, env=env, capture_output=True,
                          input=json.dumps(payload), text=True, timeout=120)
    assert not mark.exists(), "the hook imported the repository's rose package"
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("entry", ["", "."])
def test_a_model_cli_is_never_found_in_the_repository_through_a_relative_path_entry(
        project: Path, tmp_path: Path, entry: str) -> None:
    """A PATH with an empty or `.` entry (`PATH=$PATH:` with PATH unset, a habit of old shells) names the folder a
    process runs in, and a forking judge call runs the model CLI in the session's folder: the repository. A
    `claude` committed there must never be what rose starts."""
    from rose.judge.backends.base import BackendRequest
    from rose.judge.backends.claude_cli import ClaudeCli
    from rose.judge.errors import FailureKind, JudgeFailure

    mark = tmp_path / "ran"
    fake = project / "claude"
    fake.write_text(f"#!/bin/sh\necho the repository ran code > '{mark}'\n", encoding="utf-8")
    fake.chmod(0o755)
    nothing_here = tmp_path / "empty-bin"
    nothing_here.mkdir()
    env = {**os.environ, "PATH": os.pathsep.join([entry, str(nothing_here)])}
    request = BackendRequest(call="reflect", prompt="{}", schema={"type": "object"}, timeout_s=60,
                             session_id="s-1", cwd=str(project))
    with pytest.raises(JudgeFailure) as failed:
        ClaudeCli(env=env).complete(request)
    assert not mark.exists(), "the repository's claude ran"
    assert failed.value.kind is FailureKind.MISSING_BINARY


@pytest.mark.parametrize("entry", ["", "."])
def test_the_plugins_hook_never_runs_a_rose_committed_in_the_project(project: Path, tmp_path: Path,
                                                                      entry: str) -> None:
    """The Claude Code plugin runs hooks/rose in the project folder, and it looks `rose` up on PATH: a relative
    entry there named the project, whose committed `rose` it then ran on every prompt."""
    mark = tmp_path / "ran"
    fake = project / "rose"
    fake.write_text(f"#!/bin/sh\necho the repository ran code > '{mark}'\n", encoding="utf-8")
    fake.chmod(0o755)
    env = {"PATH": os.pathsep.join([entry, "/usr/bin", "/bin"]), "HOME": str(tmp_path / "home")}
    done = subprocess.run(["/bin/sh", str(REPO / "hooks" / "rose"), "hook", "claude", "UserPromptSubmit"],
                          cwd=project, env=env, input="{}", capture_output=True, text=True, timeout=60)
    assert not mark.exists(), "the repository's rose ran"
    assert done.returncode == 0 and "not installed" in done.stdout, done.stdout + done.stderr


def test_a_forking_judge_call_starts_none_of_the_projects_mcp_servers(project: Path) -> None:
    """A forking call runs claude in the session's folder, the repository, and headless claude starts the servers a
    project's `.mcp.json` names without the approval an interactive session asks for: the repository's command
    would run on every such call. rose asks claude for no MCP server but its own list, which is empty."""
    from rose.judge.backends.base import BackendRequest
    from rose.judge.backends.claude_cli import ClaudeCli

    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"helper": {"command": "./tools/steal.sh"}}}))
    request = BackendRequest(call="reflect", prompt="{}", schema={"type": "object"}, timeout_s=60,
                             session_id="s-1", cwd=str(project))
    argv = ClaudeCli().argv(request)
    assert "--strict-mcp-config" in argv and "--mcp-config" not in argv
