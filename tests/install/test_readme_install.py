"""The README's install block, run exactly as written, on an empty HOME, with nothing on PATH but python3 and git.

The commands are read from the README's "Install it for your agents" code block, so the README and this test cannot
drift apart. Each runs through /bin/sh in a copy of the repository (its tracked and unignored files: what a clone
has), as a user would type it in a fresh terminal; when `dev.py install` prints the line that puts its folder on
PATH, that line is run too, and later commands start from a shell that reads it. Then:

* `rose` resolves from ~/.local/bin, and runs an install that lives in ~/.local/share/rose/venv, not in the clone,
  which stays as it was and can be moved away without breaking rose or its hooks;
* `rose install --scope user` wired Claude Code's user settings in that HOME (and said it skipped Codex);
* `rose doctor` reports those hooks as resolving, and the real claude CLI fires them;
* the plugin, with `rose` not on PATH, finds the installed rose in ~/.local/bin;
* installing again upgrades in place; `python3 dev.py uninstall` removes the hooks, the link and the venv.

pip needs PyPI (or PIP_FIND_LINKS wheels) for PyYAML and wordllama; its cache is kept in .cache/pip of the checkout
(PIP_CACHE_DIR wins), so only the first run downloads. The whole module takes ~30-60 s.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rose
from tests.support import agent_clis
from tests.support.agent_clis import claude_env, run_cli
from tests.support.mock_model_server import MockModelServer

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
LESSON = "ROSE-README-LESSON: run make lint-fix before every commit in this repository"
PROMPT = "how should I commit this change?"
PROFILE_LINE = re.compile(r"^\[dev\]\s+(echo 'export PATH=.*' >> ~/\.profile)$", re.M)


def readme_install_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Install it for your agents\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's install section has no ```sh block"
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words:
            commands.append(shlex.join(words))
    return commands


def test_the_readme_block_is_the_install_this_module_checks() -> None:
    commands = readme_install_commands()
    assert commands[0] == "python3 dev.py install"
    assert "rose install --scope user" in commands and "rose doctor" in commands
    for bad in ("pip install", "pipx", "uv tool", "uvx", "rose-memory"):
        assert not any(bad in c for c in commands), f"the README's install block relies on {bad}"


def _base_python() -> Path:
    """The interpreter this venv was made from: a user's system python3."""
    for candidate in (Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}",
                      Path(sys.base_prefix) / "bin" / "python3"):
        if candidate.is_file():
            return candidate
    pytest.fail(f"no base interpreter under {sys.base_prefix}")


class Machine:
    """An empty HOME, a PATH of python3 and git only, and a clone of the repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.clone = root / "rose"
        self.sysbin = root / "sysbin"
        for folder in (self.home, self.sysbin, root / "tmp"):
            folder.mkdir()
        (self.sysbin / "python3").symlink_to(_base_python())
        (self.sysbin / "git").symlink_to(shutil.which("git") or pytest.fail("git is not installed"))
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                                capture_output=True, timeout=60).stdout.decode().split("\0")
        for rel in filter(None, listed):
            source = REPO / rel
            if source.is_file():  # a file deleted in the work tree is still listed
                (self.clone / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, self.clone / rel)
        self.env = {"HOME": str(self.home), "PATH": str(self.sysbin), "LANG": "C.UTF-8", "TMPDIR": str(root / "tmp")}
        self.env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})  # the machine's pip setup
        self.env.setdefault("PIP_CACHE_DIR", str(REPO / ".cache" / "pip"))
        self.venv = self.home / ".local" / "share" / "rose" / "venv"
        self.link = self.home / ".local" / "bin" / "rose"
        self.runs: list[tuple[str, subprocess.CompletedProcess[str]]] = []

    def sh(self, command: str, cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        """``command`` in a new terminal: a shell that has read ~/.profile when there is one."""
        script = f'if [ -f "$HOME/.profile" ]; then . "$HOME/.profile"; fi\n{command}'
        return subprocess.run(["/bin/sh", "-c", script], cwd=cwd or self.clone, env=self.env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def files(self) -> dict[str, bytes]:
        return {str(p.relative_to(self.clone)): p.read_bytes() for p in self.clone.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Machine:
    m = Machine(tmp_path_factory.mktemp("readme-install"))
    m.before = m.files()
    for command in readme_install_commands():
        cp = m.sh(command)
        m.runs.append((command, cp))
        assert cp.returncode == 0, f"`{command}` exited {cp.returncode}\nstdout:\n{cp.stdout}\nstderr:\n{cp.stderr}"
        advice = PROFILE_LINE.search(cp.stdout)
        if advice:  # do what it says
            done = m.sh(advice.group(1))
            assert done.returncode == 0, done.stderr
    return m


def _output(machine: Machine, command: str) -> str:
    return next(cp.stdout for c, cp in machine.runs if c == command)


def test_dev_install_says_how_to_reach_rose_and_that_works(machine: Machine) -> None:
    out = _output(machine, "python3 dev.py install")
    assert f"rose {rose.__version__} installed: {machine.link} -> {machine.venv / 'bin' / 'rose'}" in out
    # nothing but python3 and git on PATH: the folder is not on it, and the line to add is printed
    assert "~/.local/bin is not on your PATH" in out and PROFILE_LINE.search(out), out
    cp = machine.sh("command -v rose && rose --version")
    assert cp.stdout.splitlines() == [str(machine.link), f"rose {rose.__version__}"], cp.stderr
    assert os.readlink(machine.link) == str(machine.venv / "bin" / "rose")
    where = subprocess.run([str(machine.venv / "bin" / "python"), "-c", "import rose; print(rose.__file__)"],
                           env=machine.env, capture_output=True, text=True, timeout=60, check=True).stdout
    assert where.startswith(str(machine.venv)), where  # copied out of the clone, not an editable install


def test_rose_install_wired_claude_in_that_home_and_said_it_skipped_codex(machine: Machine) -> None:
    out = _output(machine, "rose install --scope user")
    assert "codex: skipped (no codex on PATH and no ~/.codex)" in out.splitlines(), out
    settings = json.loads((machine.home / ".claude" / "settings.json").read_text())
    commands = {event: [h["command"] for g in groups for h in g["hooks"]]
                for event, groups in settings["hooks"].items()}
    assert set(commands) == {"UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
    program = shlex.quote(str(machine.venv / "bin" / "rose"))
    for event, [command] in commands.items():
        assert command == f"{program} hook claude {event} # rose-managed"
    assert not (machine.home / ".codex").exists()
    # dev.py install brings the MCP SDK, so rose install registered `rose mcp` beside the hooks
    server = json.loads((machine.home / ".claude.json").read_text())["mcpServers"]["rose"]
    assert [server["command"], *server["args"]] == [str(machine.venv / "bin" / "rose"), "mcp"]


def test_rose_doctor_reports_the_hooks_resolving(machine: Machine) -> None:
    out = _output(machine, "rose doctor")
    assert f"[ok  ] claude hooks (user): UserPromptSubmit, PreCompact, Stop, SessionEnd in {machine.home}" in out
    checks = json.loads(machine.sh("rose doctor --json").stdout)
    assert {c["name"]: c["level"] for c in checks}["claude hooks (user)"] == "ok"
    assert not [c for c in checks if c["level"] == "fail"], checks


def _project(machine: Machine, name: str) -> Path:
    project = machine.root / name
    project.mkdir()
    for command in ("git init -q", "rose init", f"rose add {shlex.quote(LESSON)} --title 'Lint before committing'"):
        cp = machine.sh(command, cwd=project)
        assert cp.returncode == 0, f"{command}: {cp.stdout}\n{cp.stderr}"
    return project


def _claude(machine: Machine, project: Path, mock: MockModelServer, args: list[str], **extra: str):
    claude = agent_clis.require(agent_clis.claude_bin)
    env = claude_env(machine.home, mock.url, {"PATH": str(machine.sysbin), **extra})  # no ~/.local/bin on PATH
    cp = run_cli([claude, "-p", PROMPT, "--output-format", "json", *args], cwd=project, env=env)
    assert cp.returncode == 0, f"claude exited {cp.returncode}\n{cp.stdout[-2000:]}\n{cp.stderr[-2000:]}"
    return any(LESSON in r.body_text for r in mock.model_requests("anthropic"))


def test_the_real_claude_fires_the_hooks_that_install_wrote(machine: Machine) -> None:
    project = _project(machine, "project")
    with MockModelServer() as mock:
        assert _claude(machine, project, mock, []), "the installed hooks did not inject the lesson"
    assert not mock.handler_errors


def test_the_plugin_finds_the_installed_rose_without_it_on_path(machine: Machine) -> None:
    project = _project(machine, "plugin-project")
    empty_config = machine.root / "claude-config"  # settings without rose's user hooks: only the plugin runs rose
    empty_config.mkdir()
    with MockModelServer() as mock:
        assert _claude(machine, project, mock, ["--plugin-dir", str(machine.clone)],
                       CLAUDE_CONFIG_DIR=str(empty_config)), "the plugin's hook did not find ~/.local/bin/rose"


def test_the_clone_is_left_as_it_was_and_can_be_moved_away(machine: Machine) -> None:
    assert machine.files() == machine.before  # no build/, no *.egg-info, nothing written into the clone
    moved = machine.root / "moved-clone"
    machine.clone.rename(moved)
    try:
        cp = machine.sh("rose --version && rose doctor --json", cwd=machine.root)
        assert cp.returncode == 0, cp.stderr
        checks = json.loads(cp.stdout.split("\n", 1)[1])
        assert {c["name"]: c["level"] for c in checks}["claude hooks (user)"] == "ok"
    finally:
        moved.rename(machine.clone)


def test_installing_again_upgrades_in_place_then_uninstall_removes_it(machine: Machine) -> None:
    settings = machine.home / ".claude" / "settings.json"
    wired = settings.read_bytes()
    cp = machine.sh("python3 dev.py install")
    assert cp.returncode == 0, cp.stderr
    assert f"rose {rose.__version__} upgraded" in cp.stdout and "is on your PATH" in cp.stdout
    assert os.readlink(machine.link) == str(machine.venv / "bin" / "rose") and settings.read_bytes() == wired

    cp = machine.sh("python3 dev.py uninstall")
    assert cp.returncode == 0, cp.stderr
    assert "rose uninstall --scope user" in cp.stdout
    assert not settings.exists()  # rose created it, so rose's uninstall deleted it
    assert not machine.link.is_symlink() and not machine.venv.exists()
    assert (machine.home / ".rose").is_dir()  # the lessons stay
    assert machine.sh("command -v rose").returncode != 0
