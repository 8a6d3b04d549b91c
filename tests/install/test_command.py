"""The hook command rose writes, how it recognises its own, and the JSON style it keeps."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rose.install import Agent, agents_for, rose_argv
from rose.install.command import (
    MARKER,
    command_executable,
    executable_resolves,
    hook_command,
    parse_rose_hook,
)
from rose.install.jsonhooks import JsonStyle, add_hooks, remove_hooks
from rose.install.hooks import HOOKS


def test_rose_argv_prefers_the_console_script_beside_the_interpreter(tmp_path: Path) -> None:
    bindir = tmp_path / "my venv" / "bin"
    bindir.mkdir(parents=True)
    python = bindir / "python"
    python.symlink_to(sys.executable)  # a venv's python is a symlink: it must not be resolved away
    # -P: the project folder an agent starts the hook in is never on sys.path (tests/trust/test_repository_code_never_runs.py)
    assert rose_argv(str(python)) == [str(bindir / "python"), *(["-P"] if sys.version_info >= (3, 11) else []), "-m",
                                      "rose"]
    script = bindir / "rose"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert rose_argv(str(python)) == [str(script)]


def test_the_running_interpreter_gives_an_absolute_command() -> None:
    script = Path(sys.executable).parent / "rose"
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    expected = [str(script)] if script.exists() else [sys.executable, *safe, "-m", "rose"]
    assert rose_argv() == expected and Path(expected[0]).is_absolute()


def test_a_throwaway_uvx_environment_is_flagged(home: Path, project: Path, env: dict) -> None:
    from rose.install import InstallScope, install

    uvx = ["/home/me/.cache/uv/archive-v0/AbC123/bin/rose"]
    report = install(Agent.CLAUDE, InstallScope.USER, project, home, rose=uvx, env=env)
    assert any("temporary environment" in step for step in report.steps)
    assert not install(Agent.CLAUDE, InstallScope.USER, project, home, rose=["/opt/rose/bin/rose"], env=env).steps


def test_commands_survive_a_real_shell(tmp_path: Path) -> None:
    weird = tmp_path / "it's a \"dir\" with $pace"
    weird.mkdir()
    script = weird / "rose"
    script.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    script.chmod(0o755)
    command = hook_command([str(script)], Agent.CLAUDE, "UserPromptSubmit")
    assert command.endswith(" hook claude UserPromptSubmit " + MARKER)
    out = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=True, timeout=10).stdout
    assert out == "hook|claude|UserPromptSubmit|"
    python_form = hook_command([sys.executable, "-m", "rose"], Agent.CODEX, "Stop")
    assert shlex.split(python_form, comments=True)[-5:] == ["-m", "rose", "hook", "codex", "Stop"]


@pytest.mark.parametrize(("command", "expected"), [
    (f"/x/rose hook claude Stop {MARKER}", ("claude", "Stop", True)),
    (f"'/a b/python' -m rose hook codex SessionEnd {MARKER}", ("codex", "SessionEnd", True)),
    ("rose hook claude UserPromptSubmit", ("claude", "UserPromptSubmit", False)),
    ("/usr/bin/python3 -m rose hook codex PreCompact", ("codex", "PreCompact", False)),
    ("~/.local/bin/rose hook claude Stop  # my own", ("claude", "Stop", False)),
    ("git hook claude Stop", None),                  # not rose
    ("echo rose hook claude", None),
    ("my-rose-wrapper.sh hook claude Stop", None),
    ("rose hook gemini Stop", None),
    (None, None),
    (42, None),
])
def test_recognising_rose_hooks(command, expected) -> None:
    found = parse_rose_hook(command)
    assert (None if found is None else (found.agent.value, found.event, found.managed)) == expected


def test_command_executable() -> None:
    assert command_executable("'/a b/rose' hook claude Stop # x") == "/a b/rose"
    assert command_executable("FOO=1 BAR=2 rose hook claude Stop") == "rose"
    assert command_executable("'unclosed") is None
    assert executable_resolves("${CLAUDE_PLUGIN_ROOT}/bin/rose")
    assert executable_resolves(sys.executable)
    assert not executable_resolves("/no/such/rose")
    assert not executable_resolves("no-such-program-xyz", "/nonexistent")


def test_agents_for(tmp_path: Path) -> None:
    assert agents_for("all") == [Agent.CLAUDE, Agent.CODEX]
    assert agents_for("codex") == [Agent.CODEX]
    empty = {"PATH": "/nonexistent"}
    assert agents_for("auto", home=tmp_path, env=empty) == [Agent.CLAUDE]
    (tmp_path / ".codex").mkdir()
    assert agents_for("auto", home=tmp_path, env=empty) == [Agent.CODEX]
    (tmp_path / ".claude").mkdir()
    assert agents_for("auto", home=tmp_path, env=empty) == [Agent.CLAUDE, Agent.CODEX]


@pytest.mark.parametrize("text", [
    '{\n  "a": 1\n}\n',
    '{\n    "a": "é"\n}',
    '{\r\n\t"a": "\\u00e9"\r\n}\r\n',
    '{"a": [1, 2]}',
])
def test_json_style_is_kept(text: str) -> None:
    style = JsonStyle.of(text)
    assert style.render(json.loads(text)).decode() == text


def test_add_and_remove_leave_other_groups_in_place() -> None:
    data = {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "a"}]}]}}
    merged = add_hooks(data, Agent.CODEX, HOOKS[Agent.CODEX], lambda e: f"/r hook codex {e} {MARKER}")
    assert merged.added == ["UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"]
    assert merged.data["hooks"]["Stop"][0] == data["hooks"]["Stop"][0]
    assert data == {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "a"}]}]}}
    back, removed = remove_hooks(merged.data, Agent.CODEX)
    assert back == data and set(removed) == set(merged.added)
    # claude's entries are not codex's
    assert remove_hooks(merged.data, Agent.CLAUDE) == (merged.data, [])


def test_rose_handler_inside_a_users_group_is_removed_alone() -> None:
    group = {"hooks": [{"type": "command", "command": "mine"},
                       {"type": "command", "command": f"/r hook claude Stop {MARKER}"}]}
    data, removed = remove_hooks({"hooks": {"Stop": [group]}}, Agent.CLAUDE)
    assert data == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}} and removed == ["Stop"]


def test_duplicate_rose_entries_collapse_to_one() -> None:
    entry = {"hooks": [{"type": "command", "command": f"/r hook claude Stop {MARKER}", "timeout": 10,
                        "statusMessage": "⋯ ROSE · noting this turn"}]}
    merged = add_hooks({"hooks": {"Stop": [entry, json.loads(json.dumps(entry))]}}, Agent.CLAUDE,
                       HOOKS[Agent.CLAUDE], lambda e: f"/r hook claude {e} {MARKER}")
    assert merged.data["hooks"]["Stop"] == [entry]


def test_auto_says_which_agent_it_skipped_and_why(tmp_path: Path, project: Path) -> None:
    from rose.install import InstallScope, install_agents

    home, empty = tmp_path / "h", {"PATH": "/nonexistent"}
    (home / ".claude").mkdir(parents=True)
    claude, codex = install_agents("auto", InstallScope.USER, project, home, rose=["/opt/rose/bin/rose"], env=empty)
    assert claude.agent is Agent.CLAUDE and claude.changed and not claude.skipped
    assert codex.agent is Agent.CODEX and codex.skipped and not codex.changes
    assert codex.summary == "skipped (no codex on PATH and no ~/.codex)"
    assert codex.render().splitlines()[0] == "codex: skipped (no codex on PATH and no ~/.codex)"
    assert "`rose install --agent codex` wires it anyway" in codex.render()
    assert codex.to_dict()["skipped"] is True and claude.to_dict()["skipped"] is False
    assert not (home / ".codex").exists()
    # CODEX_HOME is where it would look, so that is what the report names
    custom = {**empty, "CODEX_HOME": str(tmp_path / "codex-home")}
    [_claude, codex] = install_agents("auto", InstallScope.USER, project, home, rose=["/r"], env=custom, dry_run=True)
    assert codex.summary == f"skipped (no codex on PATH and no {tmp_path / 'codex-home'})"


def test_auto_with_no_agent_wires_claude_and_says_why(tmp_path: Path, project: Path) -> None:
    from rose.install import InstallScope, install_agents

    claude, codex = install_agents("auto", InstallScope.USER, project, tmp_path, rose=["/r"], env={"PATH": "/nonexistent"})
    assert claude.changed and any("no claude on PATH and no ~/.claude: wired anyway" in n for n in claude.notes)
    assert codex.skipped


def test_a_named_agent_is_never_skipped(tmp_path: Path, project: Path) -> None:
    from rose.install import InstallScope, install_agents

    [codex] = install_agents("codex", InstallScope.USER, project, tmp_path, rose=["/r"], env={"PATH": "/nonexistent"})
    assert codex.agent is Agent.CODEX and codex.changed and not codex.skipped
    reports = install_agents("all", InstallScope.USER, project, tmp_path, rose=["/r"], env={"PATH": "/nonexistent"})
    assert [r.agent for r in reports] == [Agent.CLAUDE, Agent.CODEX] and not any(r.skipped for r in reports)


def test_rose_install_reports_the_skipped_agent(project: Path, home: Path, rose_cli) -> None:
    cp = rose_cli("install", "--scope", "user", cwd=project, env={"PATH": "/nonexistent"})
    assert cp.returncode == 0, cp.stderr
    assert "codex: skipped (no codex on PATH and no ~/.codex)" in cp.stdout.splitlines()
    cp = rose_cli("install", "--scope", "user", "--json", cwd=project, env={"PATH": "/nonexistent"})
    by_agent = {r["agent"]: r for r in json.loads(cp.stdout)}
    assert by_agent["codex"]["skipped"] is True and by_agent["codex"]["changes"] == []
    assert by_agent["claude"]["skipped"] is False and (home / ".claude" / "settings.json").is_file()
