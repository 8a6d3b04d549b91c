"""Shared fixtures: every test gets its own HOME, global store and project folder, so nothing leaks between tests
or into the developer's real ~/.rose."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ROSE_HOME", str(home / ".rose"))
    monkeypatch.delenv("ROSE_CHILD", raising=False)
    monkeypatch.setenv("ROSE_WARM_HELPER", "0")  # tests that want the warm embedding helper start it themselves
    return home


@pytest.fixture(scope="session", autouse=True)
def stop_warm_helpers(tmp_path_factory: pytest.TempPathFactory):
    """Hooks run by the real CLIs may start warm helpers under the tests' temp folders: end them with the run."""
    yield
    from tests.support.processes import stop_warm_helpers

    stop_warm_helpers(tmp_path_factory.getbasetemp())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def layers(project: Path):
    from rose.store import Layers

    layers = Layers.discover(project)
    layers.init_project()
    yield layers
    layers.close()


def write_own_config(text: str) -> Path:
    """The user's own settings (the global store's config.yaml, created if needed): the only file that may choose
    a backend, a program or an endpoint. A project's .rose/config.yaml is a repository's and cannot."""
    from rose.model import Scope
    from rose.store import Store, global_root

    store = Store.create(global_root(), Scope.GLOBAL)
    store.config_path.write_text(text, encoding="utf-8")
    store.close()
    return store.config_path


@pytest.fixture
def own_config():
    return write_own_config


def run_rose(*args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real `python -m rose` in a separate process, as a user's shell would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "rose", *args], cwd=cwd, input=input, capture_output=True,
                          text=True, env=full_env, timeout=timeout)


def run_rose_here(*args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None,
                  timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`rose ARGS` run in this process, through `rose.cli.main(argv)`: what run_rose does, without a new
    interpreter per call. The working directory, the environment, stdin, stdout and stderr are the call's own and
    restored after it. `rose hook` keeps its own process (its watchdog may end the process at its budget), as do the
    tests that are about a real process (tests/test_cli.py keeps a few)."""
    if args[:1] == ("hook",):
        return run_rose(*args, cwd=cwd, input=input, env=env, timeout=timeout)
    import contextlib
    import importlib.util
    import io

    from rose import cli

    # the MCP SDK binds sys.stderr as a default argument when first imported: never let that be this call's buffer
    if importlib.util.find_spec("mcp") is not None:
        import mcp.client.stdio  # noqa: F401

    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        sys.stdin = io.StringIO(input or "")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as done:   # argparse's usage errors and --help
                code = done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    finally:
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["rose", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture
def rose_cli():
    """`rose ARGS` in-process (run_rose_here); tests about a real process call run_rose themselves."""
    return run_rose_here
