"""The REAL claude and codex CLIs, offline against the mock model server, fire the hooks `rose install` wrote.

Each test makes a real rose store (`python -m rose init` / `rose add`), installs with the real rose command (the
console script of this venv), runs the CLI headless and asserts that rose's UserPromptSubmit hook injected the lesson
into the request the mock received. That proves at once: the settings file passes the CLI's validation (Claude drops
an invalid file silently), the command resolves and runs through the CLI's shell, and for Codex that the trust rose
wrote is the trust Codex checks (no --dangerously-bypass-hook-trust anywhere here).

They FAIL, never skip, when the CLIs are missing: `bash scripts/install-agent-clis.sh` installs them.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rose
from rose.install import Agent, Scope, install, uninstall, wiring_checks
from rose.install.codex import hook_hash
from tests.conftest import run_rose
from tests.support import agent_clis
from tests.support.agent_clis import (
    claude_env,
    codex_list_hooks,
    run_claude,
    run_cli,
    run_codex_exec,
    write_codex_config,
)
from tests.support.mock_model_server import MockModelServer

from .conftest import diff, snapshot

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
LESSON = "ROSE-E2E-LESSON: run make lint-fix before every commit in this repository"
PROMPT = "how should I commit this change?"


@pytest.fixture
def claude() -> Path:
    return agent_clis.require(agent_clis.claude_bin)


@pytest.fixture
def codex() -> Path:
    return agent_clis.require(agent_clis.codex_bin)


@pytest.fixture
def mock():
    with MockModelServer() as server:
        yield server
    assert not server.handler_errors


@pytest.fixture
def taught(project: Path) -> Path:
    """A project with a real .rose store holding one lesson."""
    for args in (("init",), ("add", LESSON, "--title", "Lint before committing")):
        cp = run_rose(*args, cwd=project)
        assert cp.returncode == 0, cp.stderr
    return project


def _ok(cp, what: str) -> None:
    assert cp.returncode == 0, (f"{what} exited {cp.returncode}\nstdout:\n{cp.stdout[-3000:]}\n"
                                f"stderr:\n{cp.stderr[-3000:]}")


def _injected(mock: MockModelServer, api: str) -> bool:
    return any(LESSON in r.body_text for r in mock.model_requests(api))


def _path_with_rose() -> str:
    return f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.mark.parametrize("scope", list(Scope))
def test_claude_fires_the_installed_hooks(scope: Scope, claude: Path, mock: MockModelServer, taught: Path,
                                          home: Path) -> None:
    report = install(Agent.CLAUDE, scope, taught, home)
    assert report.changed
    cp = run_claude(["-p", PROMPT, "--output-format", "json"], cwd=taught, home=home, mock_url=mock.url)
    _ok(cp, "claude -p")
    assert _injected(mock, "anthropic"), "rose's UserPromptSubmit hook did not inject the lesson"
    checks = {c.name: c for c in wiring_checks(taught, home, env=claude_env(home, mock.url))}
    assert checks[f"claude hooks ({scope.value})"].level.value == "ok"

    before_uninstall = snapshot(taught / ".claude") if scope is Scope.PROJECT else None
    uninstall(Agent.CLAUDE, scope, taught, home)
    assert not (taught / ".claude" / "settings.json").exists() and not (home / ".claude" / "settings.json").exists()
    assert before_uninstall is None or not (taught / ".claude").exists()
    mock.clear()
    cp = run_claude(["-p", PROMPT, "--output-format", "json"], cwd=taught, home=home, mock_url=mock.url)
    _ok(cp, "claude -p after uninstall")
    assert not _injected(mock, "anthropic")


@pytest.mark.parametrize("scope", list(Scope))
def test_codex_fires_the_installed_hooks_without_bypassing_trust(scope: Scope, codex: Path, mock: MockModelServer,
                                                                 taught: Path, home: Path) -> None:
    # the user's codex config as it was before rose (project trusted by the user, as Codex's own prompt would do)
    config = write_codex_config(home, mock.openai_base_url,
                                trusted_projects=[taught] if scope is Scope.PROJECT else [])
    before = snapshot(home / ".codex", taught)
    report = install(Agent.CODEX, scope, taught, home)
    assert report.changed and not report.steps, report.render()

    # Codex itself agrees: every rose hook is trusted, with the hash rose computed
    listed = [h for h in codex_list_hooks(home, taught) if " hook codex " in (h.get("command") or "")]
    assert len(listed) == 4, listed
    for entry in listed:
        assert entry["trustStatus"] == "trusted", entry
        event = {"userPromptSubmit": "UserPromptSubmit", "preCompact": "PreCompact", "stop": "Stop",
                 "sessionEnd": "SessionEnd"}[entry["eventName"]]
        assert entry["currentHash"] == hook_hash(event, entry["command"], entry["timeoutSec"],
                                                 status_message=entry.get("statusMessage"))
        assert entry.get("statusMessage", "").startswith("⋯ ROSE · ")   # what Codex shows while the hook runs
    assert all(c.level.value == "ok" for c in wiring_checks(taught, home, env={"PATH": os.environ["PATH"]})
               if c.name == f"codex hooks ({scope.value})")

    cp = run_codex_exec([PROMPT], cwd=taught, home=home, input="")  # no --dangerously-bypass-hook-trust
    _ok(cp, "codex exec")
    assert _injected(mock, "responses"), f"rose's hook did not inject the lesson\n{cp.stderr[-2000:]}"

    uninstall(Agent.CODEX, scope, taught, home)
    after = snapshot(home / ".codex", taught)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # codex writes its own state (sessions, logs, caches) next to config.toml; rose's files are exactly as before
    rose_touched = [k for k in changed if k.endswith(("hooks.json", "config.toml", "AGENTS.md", ".rose-backup"))]
    assert not rose_touched, diff({k: before.get(k) for k in rose_touched}, {k: after.get(k) for k in rose_touched})
    assert config.read_text().count("[hooks.state.") == 0


def _plugin_repo(tmp_path: Path) -> Path:
    """The plugin's files as a clone of the repository has them (the real checkout also holds a venv and 800 MB of
    test CLIs, which `plugin install` would copy)."""
    repo = tmp_path / "rose-repo"
    for part in (".claude-plugin", "hooks"):
        shutil.copytree(REPO / part, repo / part)
    return repo


def test_claude_installs_the_plugin_from_the_repository_and_its_hooks_fire(claude: Path, mock: MockModelServer,
                                                                           taught: Path, home: Path,
                                                                           tmp_path: Path) -> None:
    repo = _plugin_repo(tmp_path)
    env = claude_env(home, mock.url, {"PATH": _path_with_rose()})
    cp = run_cli([claude, "plugin", "validate", "--strict", str(repo)], cwd=repo, env=env)
    _ok(cp, "claude plugin validate")
    cp = run_cli([claude, "plugin", "marketplace", "add", str(repo)], cwd=taught, env=env)
    _ok(cp, "claude plugin marketplace add")
    cp = run_cli([claude, "plugin", "install", "rose@rose"], cwd=taught, env=env)
    _ok(cp, "claude plugin install rose@rose")
    listed = json.loads(run_cli([claude, "plugin", "list", "--json"], cwd=taught, env=env).stdout)
    mine = [p for p in listed if p["id"] == "rose@rose"]
    assert mine and mine[0]["enabled"] and mine[0]["version"] == rose.__version__

    cp = run_cli([claude, "-p", PROMPT, "--output-format", "json"], cwd=taught, env=env)
    _ok(cp, "claude -p with the plugin")
    assert _injected(mock, "anthropic"), "the plugin's UserPromptSubmit hook did not inject the lesson"
    checks = [c for c in wiring_checks(taught, home, env=env) if c.name == "claude plugin"]
    assert checks and checks[0].level.value == "ok"


def test_plugin_dir_hooks_fire(claude: Path, mock: MockModelServer, taught: Path, home: Path, tmp_path: Path) -> None:
    repo = _plugin_repo(tmp_path)
    cp = run_claude(["-p", PROMPT, "--output-format", "json", "--plugin-dir", str(repo)], cwd=taught, home=home,
                    mock_url=mock.url, env={"PATH": _path_with_rose()})
    _ok(cp, "claude -p --plugin-dir")
    assert _injected(mock, "anthropic")


SYSTEM_PATH = "/usr/bin:/bin"


def _no_rose_on(path: str) -> str:
    found = shutil.which("rose", path=path)
    assert found is None, f"this test needs a PATH without rose, and {found} is on {path}"
    return path


def test_plugin_without_rose_says_what_to_run_and_no_hook_fails(claude: Path, mock: MockModelServer, project: Path,
                                                                home: Path, tmp_path: Path) -> None:
    """Before hooks/rose, each hook failed with "rose: not found" and Claude Code showed only "stop hook problem"."""
    repo = _plugin_repo(tmp_path)
    cp = run_claude(["-p", PROMPT, "--output-format", "stream-json", "--verbose", "--include-hook-events",
                     "--plugin-dir", str(repo)], cwd=project, home=home, mock_url=mock.url,
                    env={"PATH": _no_rose_on(SYSTEM_PATH)})
    _ok(cp, "claude -p --plugin-dir without rose")
    lines = [json.loads(line) for line in cp.stdout.splitlines() if line.startswith("{")]
    responses = {d["hook_event"]: d for d in lines if d.get("subtype") == "hook_response"}
    assert {"UserPromptSubmit", "Stop"} <= set(responses), responses
    for event, response in responses.items():
        assert (response["exit_code"], response["outcome"], response["stderr"]) == (0, "success", ""), response
    assert responses["Stop"]["stdout"] == ""
    notices = [d["content"] for d in lines if d.get("subtype") == "informational"]
    assert any(n.startswith("UserPromptSubmit says: ⋯ ROSE · not installed") and "python3 dev.py install" in n
               for n in notices), notices
    assert not [d for d in lines if "hook-error" in str(d.get("key", "")) or d.get("outcome") == "error"]


def test_plugin_finds_rose_where_dev_install_links_it(claude: Path, mock: MockModelServer, taught: Path, home: Path,
                                                      tmp_path: Path) -> None:
    """Claude Code started without ~/.local/bin on PATH (a desktop launcher, say): the plugin still finds rose."""
    link = home / ".local" / "bin" / "rose"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path(sys.executable).parent / "rose")
    cp = run_claude(["-p", PROMPT, "--output-format", "json", "--plugin-dir", str(_plugin_repo(tmp_path))],
                    cwd=taught, home=home, mock_url=mock.url, env={"PATH": _no_rose_on(SYSTEM_PATH)})
    _ok(cp, "claude -p --plugin-dir with rose only in ~/.local/bin")
    assert _injected(mock, "anthropic"), "the plugin's hook did not run ~/.local/bin/rose"


def test_codex_own_config_edits_keep_rose_trust_and_uninstall_keeps_theirs(codex: Path, mock: MockModelServer,
                                                                           project: Path, home: Path) -> None:
    # `codex exec --trust` trusts the repository: Codex itself rewrites config.toml
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    config = write_codex_config(home, mock.openai_base_url)
    original = config.read_text()
    install(Agent.CODEX, Scope.USER, project, home)
    cp = run_codex_exec(["--trust", PROMPT], cwd=project, home=home, input="")
    _ok(cp, "codex exec --trust")
    edited = config.read_text()
    # four trust entries and rose's MCP server, each marked
    assert "trust_level" in edited[len(original):] and edited.count("# rose-managed:") == 5
    assert all(h["trustStatus"] == "trusted" for h in codex_list_hooks(home, project))
    report = uninstall(Agent.CODEX, Scope.USER, project, home)
    left = config.read_text()
    assert left.startswith(original) and "trust_level" in left and "hooks.state" not in left
    assert "mcp_servers" not in left
    assert any("pre-install copy" in note for note in report.notes)
