"""The Claude Code plugin in the repository: manifests that agree with the package and with `rose install`, and its
hook script (hooks/rose), run by a real POSIX sh: it finds rose where `python3 dev.py install` puts it, or says what
to run in one line of valid hook JSON and exits 0."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import rose
from rose.install import Agent
from rose.install.command import parse_rose_hook, user_install
from rose.install.hooks import HOOKS

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "rose"
SH = "/bin/sh"  # as hooks/hooks.json runs it


def _load(rel: str) -> dict:
    return json.loads((REPO / rel).read_text())


def test_plugin_version_is_the_package_version() -> None:
    plugin = _load(".claude-plugin/plugin.json")
    assert plugin["name"] == "rose"
    assert plugin["version"] == rose.__version__
    assert plugin["description"] and plugin["author"]["name"]


def test_the_manifests_advertise_only_the_install_that_exists() -> None:
    """rose-memory is not on PyPI: nothing may tell a user to `uv tool install` / `pipx install` / `uvx` it."""
    texts = {rel: (REPO / rel).read_text() for rel in (".claude-plugin/plugin.json", ".claude-plugin/marketplace.json",
                                                       "hooks/hooks.json", "hooks/rose")}
    texts.update({str(p.relative_to(REPO)): p.read_text() for p in (REPO / "src" / "rose" / "install").glob("*.py")})
    for rel, text in texts.items():
        for bad in ("install rose-memory", "uvx rose-memory", "pipx run rose-memory"):
            assert bad not in text, f"{rel} suggests `{bad}`"
    assert "python3 dev.py install" in _load(".claude-plugin/plugin.json")["description"]


def test_marketplace_lists_the_plugin_at_the_repository_root() -> None:
    market = _load(".claude-plugin/marketplace.json")
    assert market["name"] == "rose" and market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == "rose" and entry["source"] == "./"
    assert entry["version"] == rose.__version__


def test_plugin_hooks_are_the_installed_hooks_run_through_hooks_rose() -> None:
    hooks = _load("hooks/hooks.json")["hooks"]
    want = {spec.event.value: spec for spec in HOOKS[Agent.CLAUDE]}
    assert set(hooks) == set(want)
    for event, groups in hooks.items():
        [group] = groups
        [handler] = group["hooks"]
        # /bin/sh by its path: Claude Code runs the command with /bin/sh, whatever PATH it was started with
        assert handler == {"type": "command", "timeout": want[event].timeout_s, "statusMessage": want[event].status,
                           "command": f'/bin/sh "${{CLAUDE_PLUGIN_ROOT}}/hooks/rose" hook claude {event}'}
        found = parse_rose_hook(handler["command"])
        # recognised as a rose hook, but not as one `rose install` manages: uninstall never touches the plugin
        assert found is not None and found.event == event and not found.managed


# -- hooks/rose, run by /bin/sh as Claude Code runs it ------------------------------------------------------------
def _fake_rose(path: Path) -> Path:
    """An executable `rose` that records its arguments and its stdin, so the test sees what the hook handed on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\nprintf \'ran %s with %s\\n\' "$0" "$*"\ncat\n')
    path.chmod(0o755)
    return path


def _hook(event: str, home: Path, path: str = "/usr/bin:/bin", script: Path = HOOK, **extra: str):
    env = {"HOME": str(home), "PATH": path, **extra}
    return subprocess.run([SH, str(script), "hook", "claude", event], input='{"prompt": "hi"}', env=env,
                          capture_output=True, text=True, timeout=30)


@pytest.fixture
def bare_path(tmp_path: Path) -> str:
    """A PATH with what a POSIX shell script needs (cat) and certainly no rose."""
    folder = tmp_path / "sysbin"
    folder.mkdir()
    (folder / "cat").symlink_to(shutil.which("cat"))
    return str(folder)


def test_without_rose_a_prompt_says_what_to_run_and_nothing_fails(home: Path, bare_path: str) -> None:
    for event in HOOKS[Agent.CLAUDE]:
        cp = _hook(event.event.value, home, bare_path)
        assert cp.returncode == 0 and cp.stderr == "", (event, cp)
        if event.event.value != "UserPromptSubmit":
            assert cp.stdout == ""  # one notice per prompt, not one per event
            continue
        [line] = cp.stdout.splitlines()
        message = json.loads(line)["systemMessage"]  # valid hook JSON: Claude Code shows it as a notice
        assert message.startswith("⋯ ROSE · not installed")
        # the repository is right there (a plugin is a copy of it), so the exact command names its dev.py
        assert f"`python3 {REPO}/dev.py install`" in message and str(home / ".local" / "bin") in message


def test_a_plugin_copy_without_dev_py_points_at_a_clone(home: Path, tmp_path: Path, bare_path: str) -> None:
    script = tmp_path / "plugin" / "hooks" / "rose"
    script.parent.mkdir(parents=True)
    shutil.copy(HOOK, script)
    message = json.loads(_hook("UserPromptSubmit", home, bare_path, script).stdout)["systemMessage"]
    assert "in a clone of https://github.com/yiheinchai/rose run `python3 dev.py install`" in message


def test_paths_that_would_break_the_json_are_left_out(tmp_path: Path, bare_path: str) -> None:
    home = tmp_path / 'a "quoted" \\ home'
    home.mkdir()
    cp = _hook("UserPromptSubmit", home, bare_path)
    assert "~/.local/bin" in json.loads(cp.stdout)["systemMessage"]


@pytest.mark.parametrize("where", ["path", "bin link", "xdg bin", "venv", "xdg venv"])
def test_the_hook_runs_the_first_rose_it_finds(where: str, home: Path, tmp_path: Path, bare_path: str) -> None:
    extra: dict[str, str] = {}
    path = bare_path
    if where == "path":
        rose = _fake_rose(tmp_path / "on path" / "rose")
        path = f"{rose.parent}:{bare_path}"
        _fake_rose(home / ".local" / "bin" / "rose")  # PATH wins over the link
    elif where == "bin link":
        rose = _fake_rose(home / ".local" / "bin" / "rose")
        _fake_rose(home / ".local" / "share" / "rose" / "venv" / "bin" / "rose")  # the link wins over the venv
    elif where == "xdg bin":
        rose = _fake_rose(tmp_path / "xdg-bin" / "rose")
        extra["XDG_BIN_HOME"] = str(rose.parent)
    elif where == "venv":
        not_executable = home / ".local" / "bin" / "rose"
        not_executable.parent.mkdir(parents=True)
        not_executable.write_text("")  # skipped: not executable
        rose = _fake_rose(home / ".local" / "share" / "rose" / "venv" / "bin" / "rose")
    else:
        rose = _fake_rose(tmp_path / "data" / "rose" / "venv" / "bin" / "rose")
        extra["XDG_DATA_HOME"] = str(tmp_path / "data")
    cp = _hook("Stop", home, path, **extra)
    assert cp.returncode == 0, cp.stderr
    # exec'd with the hook's arguments, and the payload on its stdin
    assert cp.stdout == f'ran {rose} with hook claude Stop\n{{"prompt": "hi"}}'
    # `rose doctor` looks where the hook looks (rose on PATH aside)
    if where != "path":
        env = {"HOME": str(home), **extra}
        assert rose in [p for p in user_install(home, env) if os.access(p, os.X_OK) and p.is_file()][:1]


def test_dev_py_hook_and_doctor_agree_on_the_install_location(home: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("rose_dev_py", REPO / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    for extra in ({}, {"XDG_BIN_HOME": str(tmp_path / "b"), "XDG_DATA_HOME": str(tmp_path / "d")},
                  {"XDG_BIN_HOME": "relative/is/ignored", "XDG_DATA_HOME": ""}):
        for var in ("XDG_BIN_HOME", "XDG_DATA_HOME"):
            monkeypatch.delenv(var, raising=False)
        for var, value in extra.items():
            monkeypatch.setenv(var, value)
        venv, bin_dir = dev.user_paths()
        assert user_install(home, {**extra}) == [bin_dir / "rose", venv / "bin" / "rose"]
