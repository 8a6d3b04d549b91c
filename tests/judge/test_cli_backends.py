"""The claude and codex backends against stand-in executables: the exact flags, stdin and environment the child
gets (hooks off, ROSE_CHILD=1), and every failure (exit 1, hang, garbage, is_error, missing binary) mapped to its
kind, with the hung child's whole process group killed."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose.config import AgentSettings, BackendName
from rose.judge import BackendRequest, FailureKind, Judge, JudgeFailure, calls, make_backend, probe
from rose.judge.backends.claude_cli import ClaudeCli
from rose.judge.backends.codex_cli import CodexCli
from rose.judge.schema import strict_form

from tests.support.waits import hold_deadline, wait_until

from .samples import by_name
from .standins import StandIn, alive

S = by_name()


@pytest.fixture
def claude(tmp_path: Path) -> StandIn:
    return StandIn(tmp_path / "bin-claude", "claude")


@pytest.fixture
def codex(tmp_path: Path) -> StandIn:
    return StandIn(tmp_path / "bin-codex", "codex")


def ask(backend, name: str = "scope", **kw):
    s = S[name]
    return Judge(backend, timeout_s=kw.pop("timeout_s", 20)).ask(s.call, s.request, stage="consolidation", **kw)


# -- claude --------------------------------------------------------------------------------------------------------

def test_claude_gets_the_headless_flags_the_prompt_on_stdin_and_hooks_off(claude: StandIn, monkeypatch, tmp_path):
    monkeypatch.setenv("ROSE_TEST_INHERITED", "yes")
    monkeypatch.chdir(tmp_path)
    claude.behave("ok", S["scope"].good)
    answer = ask(ClaudeCli(str(claude.path)))
    assert answer.scope.value == "global"
    [run] = claude.records
    assert run["argv"] == [
        "-p", "--output-format", "json", "--json-schema", json.dumps(calls.SCOPE.schema, separators=(",", ":")),
        "--max-turns", "3", "--tools", "", "--setting-sources", "", "--settings", '{"disableAllHooks":true}',
        "--strict-mcp-config", "--no-session-persistence"]
    assert json.loads(run["argv"][4]) == calls.SCOPE.schema
    assert run["stdin"] == calls.SCOPE.render(S["scope"].request)
    assert run["env"]["ROSE_CHILD"] == "1" and run["env"]["ROSE_TEST_INHERITED"] == "yes"
    # Its own session and process group; a scratch folder, not ours, removed afterwards.
    assert run["sid"] == run["pid"] == run["pgid"] and run["pgid"] != os.getpgid(0)
    assert Path(run["cwd"]).name.startswith("rose-judge-") and not Path(run["cwd"]).exists()


def test_claude_passes_model_fork_and_tools_when_asked(claude: StandIn, tmp_path: Path):
    claude.behave("ok", S["select"].good)
    session_dir = tmp_path / "project"
    session_dir.mkdir()
    backend = ClaudeCli(str(claude.path), "claude-haiku-4-5")
    ask(backend, "select", session_id="3f2a-live", cwd=session_dir, max_turns=9)
    [run] = claude.records
    argv = run["argv"]
    assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob"
    assert "--allowedTools" not in argv       # an allow rule would let the tools read anywhere
    assert argv[argv.index("--add-dir") + 1] == S["select"].request.store_dirs[0]   # only the store folders
    assert argv[argv.index("--max-turns") + 1] == "9"
    assert argv[argv.index("--model") + 1] == "claude-haiku-4-5"
    assert argv[-3:] == ["--resume", "3f2a-live", "--fork-session"]
    assert "--no-session-persistence" in argv and "--setting-sources" in argv
    assert run["cwd"] == str(session_dir)


def test_claude_reports_tokens_and_cost(claude: StandIn):
    claude.behave("ok", S["scope"].good)
    s = S["scope"]
    reply = ClaudeCli(str(claude.path)).complete(
        BackendRequest("scope", s.call.render(s.request), s.call.schema, timeout_s=20))
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (1234, 56, 0.0042)


def test_claude_result_text_is_accepted_only_when_it_is_a_json_object(claude: StandIn):
    claude.behave("json_text", S["scope"].good)
    assert ask(ClaudeCli(str(claude.path))).scope.value == "global"
    claude.behave("text")
    with pytest.raises(JudgeFailure) as err:
        ask(ClaudeCli(str(claude.path)))
    assert err.value.kind is FailureKind.UNPARSEABLE and len(claude.records) == 3  # 1 + the retried pair


@pytest.mark.parametrize("mode,kind", [("exit1", FailureKind.EXIT), ("is_error", FailureKind.MODEL_ERROR),
                                       ("garbage", FailureKind.UNPARSEABLE)])
def test_claude_failures(claude: StandIn, mode: str, kind: FailureKind):
    claude.behave(mode)
    with pytest.raises(JudgeFailure) as err:
        ask(ClaudeCli(str(claude.path)))
    assert err.value.kind is kind and err.value.backend == "claude"
    if mode == "exit1":
        assert "boom: the stand-in failed on purpose" in err.value.detail
    if mode == "is_error":
        assert "error_max_turns" in err.value.detail and "maximum number of turns" in err.value.detail
    assert len(claude.records) == (2 if kind is FailureKind.UNPARSEABLE else 1)


@pytest.mark.parametrize("flavour", ["claude", "codex"])
def test_a_hung_cli_times_out_and_its_whole_process_group_is_killed(tmp_path: Path, flavour: str, monkeypatch):
    stand = StandIn(tmp_path / f"bin-{flavour}", flavour).behave("hang")
    backend = ClaudeCli(str(stand.path)) if flavour == "claude" else CodexCli(str(stand.path))
    # The 1.5 s deadline starts once the stand-in has started its grandchild and recorded both pids (a loaded
    # machine may take longer than that just to start Python); from then on it sleeps 300 s, so only a kill ends it.
    gate = hold_deadline(monkeypatch, lambda: stand.recorded)
    with pytest.raises(JudgeFailure) as err:
        ask(backend, timeout_s=1.5)
    assert err.value.kind is FailureKind.TIMEOUT and "process group killed" in err.value.detail
    assert gate.deadlines == [1.5]
    [run] = stand.records
    wait_until(lambda: not alive(run["pid"]), "the CLI to die (it survived its timeout)")
    wait_until(lambda: not alive(run["grandchild"]), "the CLI's child to die (orphaned instead of killed)")


@pytest.mark.parametrize("flavour", ["claude", "codex"])
def test_a_missing_or_non_executable_binary_is_missing_binary(tmp_path: Path, flavour: str):
    cls = ClaudeCli if flavour == "claude" else CodexCli
    with pytest.raises(JudgeFailure) as err:
        ask(cls(str(tmp_path / "not-installed")))
    assert err.value.kind is FailureKind.MISSING_BINARY
    plain = tmp_path / "plain-file"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(JudgeFailure) as err:
        ask(cls(str(plain)))
    assert err.value.kind is FailureKind.MISSING_BINARY and "not executable" in err.value.detail


# -- codex ---------------------------------------------------------------------------------------------------------

def test_codex_gets_exec_flags_a_strict_schema_file_stdin_prompt_and_hooks_off(codex: StandIn, monkeypatch):
    monkeypatch.setenv("ROSE_TEST_INHERITED", "yes")
    codex.behave("ok", S["relevance"].good)
    answer = ask(CodexCli(str(codex.path)), "relevance")
    assert answer.ids(calls.Verdict.RELEVANT) == ["n_aa01"]
    [run] = codex.records
    argv = run["argv"]
    schema_file, last_file = argv[argv.index("--output-schema") + 1], argv[argv.index("-o") + 1]
    assert argv == ["exec", "--skip-git-repo-check", "--ephemeral", "--disable", "hooks", "--disable", "shell_tool",
                    "--disable", "unified_exec", "--sandbox", "read-only",
                    "--json", "--output-schema", schema_file, "-o", last_file, "-"]
    assert run["schema"] == strict_form(calls.RELEVANCE.schema)
    assert "maxLength" not in json.dumps(run["schema"]) and "maxLength" in json.dumps(calls.RELEVANCE.schema)
    assert run["stdin"] == calls.RELEVANCE.render(S["relevance"].request)
    assert run["env"]["ROSE_CHILD"] == "1" and run["env"]["ROSE_TEST_INHERITED"] == "yes"
    assert run["sid"] == run["pid"] and not Path(schema_file).exists()  # scratch removed


def test_codex_fork_model_and_tokens(codex: StandIn, tmp_path: Path):
    codex.behave("ok", S["scope"].good)
    s = S["scope"]
    reply = CodexCli(str(codex.path), "gpt-5-mini").complete(BackendRequest(
        "scope", s.call.render(s.request), s.call.schema, timeout_s=20, session_id="01a2-live", cwd=str(tmp_path)))
    [run] = codex.records
    assert run["argv"][:2] == ["exec", "fork"] and run["argv"][-2:] == ["01a2-live", "-"]
    assert "--sandbox" not in run["argv"] and run["argv"][run["argv"].index("-m") + 1] == "gpt-5-mini"
    assert run["cwd"] == str(tmp_path)
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (777, 33, None)


@pytest.mark.parametrize("mode,kind", [("exit1", FailureKind.EXIT), ("is_error", FailureKind.MODEL_ERROR),
                                       ("garbage", FailureKind.UNPARSEABLE), ("no_last", FailureKind.UNPARSEABLE)])
def test_codex_failures(codex: StandIn, mode: str, kind: FailureKind):
    codex.behave(mode, S["scope"].good)
    with pytest.raises(JudgeFailure) as err:
        ask(CodexCli(str(codex.path)))
    assert err.value.kind is kind and err.value.backend == "codex"
    if mode == "is_error":
        assert "bad request" in err.value.detail


def test_codex_schema_breaking_answer_is_retried_once_then_fails(codex: StandIn):
    codex.behave("ok", {"scope": "local", "reason": "x"})
    with pytest.raises(JudgeFailure) as err:
        ask(CodexCli(str(codex.path)))
    assert err.value.kind is FailureKind.SCHEMA and len(codex.records) == 2
    assert "previous answer was rejected" in codex.records[1]["stdin"]


# -- selection and probe ---------------------------------------------------------------------------------------------

def test_auto_picks_claude_then_codex_from_path_else_model_free(tmp_path: Path, monkeypatch):
    both, only_codex, empty = tmp_path / "both", tmp_path / "only-codex", tmp_path / "empty"
    StandIn(both, "claude")
    StandIn(both, "codex")
    StandIn(only_codex, "codex")
    empty.mkdir()
    monkeypatch.setenv("PATH", str(both))
    assert isinstance(make_backend(AgentSettings()), ClaudeCli)
    monkeypatch.setenv("PATH", str(only_codex))
    assert isinstance(make_backend(AgentSettings()), CodexCli)
    monkeypatch.setenv("PATH", str(empty))
    assert make_backend(AgentSettings()) is None
    # Commands are configurable, by name on PATH or by path.
    assert isinstance(make_backend(AgentSettings(claude_command=str(both / "claude"))), ClaudeCli)
    # An explicitly chosen CLI is built even when missing, so its calls say missing_binary.
    explicit = make_backend(AgentSettings(backend=BackendName.CLAUDE))
    assert isinstance(explicit, ClaudeCli)
    with pytest.raises(JudgeFailure) as err:
        ask(explicit)
    assert err.value.kind is FailureKind.MISSING_BINARY


def test_settings_reach_the_cli_backends():
    backend = make_backend(AgentSettings(backend=BackendName.CODEX, codex_command="/opt/codex", model="gpt-5-mini"))
    assert isinstance(backend, CodexCli) and (backend.command, backend.model) == ("/opt/codex", "gpt-5-mini")
    backend = make_backend(AgentSettings(backend=BackendName.CLAUDE, claude_command="cc", model="sonnet"))
    assert isinstance(backend, ClaudeCli) and (backend.command, backend.model) == ("cc", "sonnet")


def test_probe_reports_latency_or_the_exact_failure(claude: StandIn, tmp_path: Path):
    claude.behave("probe")
    result = probe(ClaudeCli(str(claude.path)), timeout_s=20)
    assert result.ok and result.backend == "claude" and result.ms >= 0 and result.failure is None
    assert "answered in" in result.line()
    claude.behave("exit1")
    result = probe(ClaudeCli(str(claude.path)), timeout_s=20)
    assert not result.ok and result.failure == "exit" and "boom" in result.reason
    assert result.line().startswith("claude (default): exit: exit 1: boom")
    result = probe(None)
    assert not result.ok and result.failure == "no_backend" and result.line().startswith("no backend")


def test_an_interruption_while_a_cli_starts_ends_it_instead_of_orphaning_it(tmp_path, monkeypatch) -> None:
    """The learner's alarm can land inside Popen, before there is a handle on the child: it is held until there is
    one, and then the child's whole group is killed with it."""
    import subprocess as real

    from rose.judge.backends import _proc

    pid_file = tmp_path / "child.pid"
    started: list[int] = []

    class Popen(real.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self.pid)
            _proc.interrupt(KeyboardInterrupt())   # as the alarm would, inside Popen, before run() has `proc`

    monkeypatch.setattr(_proc.subprocess, "Popen", Popen)
    import pytest

    with pytest.raises(KeyboardInterrupt):
        _proc.run(["/bin/sh", "-c", f"echo $$ > {pid_file}; exec sleep 300"], stdin="", env={"PATH": "/usr/bin:/bin"},
                  cwd=str(tmp_path), timeout_s=600)
    from tests.support.processes import alive

    assert started and not alive(started[0]), "the CLI started during the interruption was left running"
