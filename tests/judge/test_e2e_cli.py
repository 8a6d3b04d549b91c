"""The claude and codex backends driving the REAL, pinned CLIs offline against the local mock model server.

What this proves beyond the stand-ins: the flags are accepted by the real binaries, structured output comes back
where the backends read it, the child's hooks really do not fire (while the same hooks do fire in a plain run, the
control), forking a live session really carries its context, and the accounting fields are filled."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from rose.judge import FailureKind, Judge, JudgeCache, JudgeFailure, calls, probe
from rose.judge.backends.claude_cli import ClaudeCli
from rose.judge.backends.codex_cli import CodexCli
from rose.judge.schema import strict_form
from rose.store import events
from tests.support.agent_clis import (claude_bin, claude_env, claude_transcripts, codex_bin, codex_env,
                                      codex_trust_hooks, read_hook_log, run_claude, run_codex_exec,
                                      write_claude_project_hooks, write_codex_config, write_codex_hooks,
                                      write_recorder_hook)
from tests.support.mock_model_server import HELD, STRUCTURED_OUTPUT_TOOL, Delay, Error, Structured, Text, ToolUse
from tests.support.waits import hold_deadline, wait_until

from .samples import by_name

pytestmark = pytest.mark.e2e

S = by_name()
HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]
TOKEN = re.compile(r"rose-[0-9a-f]{8}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "clihome"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def structured_only(answer: dict):
    """Answer the judge's StructuredOutput requests with `answer`, anything else (titles, plain runs) with text."""
    return lambda req: Structured(answer, input_tokens=150, output_tokens=20) \
        if STRUCTURED_OUTPUT_TOOL in req.tool_names() else Text("OK")


def judge_requests(mock, api: str) -> list:
    if api == "anthropic":
        return [r for r in mock.model_requests(api) if STRUCTURED_OUTPUT_TOOL in r.tool_names()]
    return [r for r in mock.model_requests(api) if (r.body or {}).get("text", {}).get("format")]


# -- claude --------------------------------------------------------------------------------------------------------

def test_claude_answers_a_judge_call_with_structured_output(mock, home: Path, tmp_path: Path):
    s = S["relevance"]
    mock.handler = structured_only(s.good)
    backend = ClaudeCli(str(claude_bin()), "claude-haiku-4-5", env=claude_env(home, mock.url))
    judge = Judge(backend, cache=JudgeCache(tmp_path / "cache.json"), events_path=tmp_path / "events.jsonl",
                  timeout_s=60)
    answer = judge.ask(calls.RELEVANCE, s.request, stage="recall")
    assert answer.ids(calls.Verdict.RELEVANT) == ["n_aa01"]
    [req] = judge_requests(mock, "anthropic")
    assert req.body["model"] == "claude-haiku-4-5"
    tool = next(t for t in req.body["tools"] if t.get("name") == STRUCTURED_OUTPUT_TOOL)
    assert tool["input_schema"]["properties"] == calls.RELEVANCE.schema["properties"]
    assert "<<<DATA candidates" in req.body_text and "untrusted data" in req.body_text
    assert [t for t in req.tool_names() if t in ("Bash", "Read", "Edit", "Write")] == []  # --tools ""
    [event] = list(events.read(tmp_path / "events.jsonl", kind="judge"))
    assert event["ok"] and event["input_tokens"] and event["output_tokens"] and event["cost_usd"] > 0
    # Cached: the second ask starts no CLI at all.
    judge.ask(calls.RELEVANCE, s.request, stage="recall")
    assert len(judge_requests(mock, "anthropic")) == 1


def test_claude_child_hooks_do_not_fire_but_do_in_a_plain_run(mock, home: Path, project: Path, tmp_path: Path):
    log = tmp_path / "hooks.jsonl"
    command = write_recorder_hook(tmp_path / "hook", log)
    write_claude_project_hooks(project, HOOK_EVENTS, command)
    user_settings = home / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True, exist_ok=True)
    user_settings.write_text(json.dumps(json.loads(Path(project / ".claude/settings.json").read_text())))
    mock.handler = structured_only(S["scope"].good)

    # Control: the same hooks fire in a plain headless run of this project.
    done = run_claude(["-p", "hello", "--output-format", "json"], cwd=project, home=home, mock_url=mock.url)
    assert done.returncode == 0, done.stderr
    fired = read_hook_log(log)
    assert {e["payload"]["hook_event_name"] for e in fired} >= {"UserPromptSubmit", "Stop"}
    assert all("ROSE_CHILD" not in e["env"] for e in fired)

    session_id = json.loads(done.stdout)["session_id"]
    backend = ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url))
    judge = Judge(backend, timeout_s=60)
    judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation")  # scratch folder
    judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation", session_id=session_id, cwd=project)  # fork
    assert read_hook_log(log) == fired, "a hook fired inside a judge call"


def test_claude_fork_sees_the_live_session_and_leaves_it_untouched(mock, home: Path, project: Path):
    mock.handler = structured_only(S["scope"].good)
    mock.enqueue(Text("Noted: the staging database listens on MARKER-7731."))
    done = run_claude(["-p", "remember the staging port", "--output-format", "json"], cwd=project, home=home,
                      mock_url=mock.url)
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    [transcript] = claude_transcripts(home)
    before = transcript.read_bytes()

    backend = ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url))
    answer = Judge(backend, timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="reflection",
                                              session_id=session_id, cwd=project)
    assert answer.scope.value == "global"
    [req] = judge_requests(mock, "anthropic")
    assert "MARKER-7731" in req.body_text  # the fork carried the live session's turns
    assert transcript.read_bytes() == before  # the live session was not written to
    assert claude_transcripts(home) == [transcript]  # and the fork was not persisted


def test_claude_extra_check_violation_is_retried_once_then_fails_closed(mock, home: Path):
    s = S["relevance"]
    mock.handler = structured_only(s.bad_checks["id not among candidates"])
    backend = ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url))
    with pytest.raises(JudgeFailure) as err:
        Judge(backend, timeout_s=60).ask(calls.RELEVANCE, s.request, stage="recall")
    assert err.value.kind is FailureKind.SCHEMA and "n_zz99" in str(err.value)
    _first, second = judge_requests(mock, "anthropic")
    assert "previous answer was rejected" in second.body_text


def test_claude_schema_violation_caught_by_claude_itself_is_a_model_error(mock, home: Path):
    mock.handler = structured_only({"scope": "local"})  # breaks the schema claude validates against
    backend = ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url))
    with pytest.raises(JudgeFailure) as err:
        Judge(backend, timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.MODEL_ERROR and "max_turns" in err.value.detail


def tool_results(req) -> list:
    """The tool_result blocks an Anthropic request carries back (what the real CLI's tools returned)."""
    return [b for m in req.body["messages"] if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def _store_of_one_lesson(tmp_path: Path) -> Path:
    """A store folder outside the CLI's working folder holding one lesson; returns its family folder."""
    nodes = tmp_path / "global-rose" / "nodes" / "retry"
    nodes.mkdir(parents=True)
    (nodes / "n_beef01.md").write_text("---\nid: n_beef01\ntitle: Retry S3 uploads\n---\nParse the body.\n")
    return nodes


def _select(mock, home: Path, project: Path, nodes: Path):
    """The select call through the real claude over that store, the mock playing the model."""
    request = calls.SelectRequest("retry the S3 upload", [str(nodes.parent)], max_lessons=3)
    backend = ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url))
    return Judge(backend, timeout_s=60).ask(calls.SELECT, request, stage="recall", cwd=project)


def test_claude_select_greps_the_store_with_read_only_tools(mock, home: Path, project: Path, tmp_path: Path):
    """select runs agentic: the real claude executes the model's Grep (allowed, read-only) over a store outside its
    working folder and the answer comes back through StructuredOutput."""
    nodes = _store_of_one_lesson(tmp_path)

    def handler(req):
        if STRUCTURED_OUTPUT_TOOL not in req.tool_names():
            return Text("OK")
        results = tool_results(req)
        if not results:
            return ToolUse("Grep", {"pattern": "retry", "path": str(nodes.parent), "output_mode": "content",
                                    "-i": True})
        assert "n_beef01.md" in json.dumps(results)
        return Structured({"nodes": [{"id": "n_beef01", "reason": "the grep found it"}]})

    mock.handler = handler
    assert _select(mock, home, project, nodes).ids == ["n_beef01"]
    first = judge_requests(mock, "anthropic")[0]
    assert {"Read", "Grep", "Glob"} <= set(first.tool_names()) and "Bash" not in first.tool_names()
    assert not mock.handler_errors


def test_claude_select_reads_the_store_and_nothing_else(mock, home: Path, project: Path, tmp_path: Path):
    """A lesson can hold anything, so the model select asks may be told to read a private file and repeat it to
    its provider: the real claude lets its read-only tools into the store folders alone."""
    nodes = _store_of_one_lesson(tmp_path)
    private = tmp_path / "private"
    private.mkdir()
    (private / "id_ed25519").write_text("PRIVATE-KEY-MATERIAL-4f7a\n")
    asks = [ToolUse("Read", {"file_path": str(private / "id_ed25519")}),
            ToolUse("Grep", {"pattern": "PRIVATE", "path": str(private), "output_mode": "content"}),
            ToolUse("Read", {"file_path": str(nodes / "n_beef01.md")})]

    def handler(req):
        if STRUCTURED_OUTPUT_TOOL not in req.tool_names():
            return Text("OK")
        results = tool_results(req)
        if len(results) < len(asks):
            return asks[len(results)]
        return Structured({"nodes": [{"id": "n_beef01", "reason": "read it"}]})

    mock.handler = handler
    assert _select(mock, home, project, nodes).ids == ["n_beef01"]
    sent = json.dumps([r.body for r in mock.model_requests("anthropic")])
    assert "PRIVATE-KEY-MATERIAL" not in sent            # never read, so never sent
    assert "Parse the body." in sent                     # the store is read
    assert not mock.handler_errors


def test_claude_probe(mock, home: Path):
    mock.handler = lambda req: Structured({"echo": TOKEN.search(req.body_text).group(0)}) \
        if STRUCTURED_OUTPUT_TOOL in req.tool_names() else Text("OK")
    result = probe(ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url)), timeout_s=60)
    assert result.ok, result.line()


# -- codex ---------------------------------------------------------------------------------------------------------

def test_codex_answers_a_judge_call_with_the_strict_schema(mock, home: Path, tmp_path: Path):
    s = S["assess"]
    write_codex_config(home, mock.openai_base_url)
    mock.handler = lambda req: Structured(s.good, input_tokens=400, output_tokens=30)
    backend = CodexCli(str(codex_bin()), env=codex_env(home))
    judge = Judge(backend, events_path=tmp_path / "events.jsonl", timeout_s=60)
    answer = judge.ask(calls.ASSESS, s.request, stage="attribution")
    assert answer.used == ["n_aa01"]
    [req] = judge_requests(mock, "responses")
    # no command tool: a lesson in the prompt cannot have the judge read a private file (the read-only sandbox
    # reads anything) and send it on
    assert not {"exec_command", "write_stdin", "shell"} & set(req.tool_names())
    fmt = req.body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True
    assert fmt["schema"] == strict_form(calls.ASSESS.schema)
    assert "<<<DATA digest" in req.body_text
    [event] = list(events.read(tmp_path / "events.jsonl", kind="judge"))
    assert (event["input_tokens"], event["output_tokens"]) == (400, 30)


def test_codex_child_hooks_do_not_fire_but_do_in_a_plain_run(mock, home: Path, project: Path, tmp_path: Path):
    write_codex_config(home, mock.openai_base_url, trusted_projects=[project])
    log = tmp_path / "hooks.jsonl"
    write_codex_hooks(home, HOOK_EVENTS, write_recorder_hook(tmp_path / "hook", log))
    assert codex_trust_hooks(home, project)
    mock.handler = lambda req: Structured(S["scope"].good) if (req.body or {}).get("text", {}).get("format") \
        else Text("OK")

    done = run_codex_exec(["hello"], cwd=project, home=home)  # control
    assert done.returncode == 0, done.stderr
    fired = read_hook_log(log)
    assert {e["payload"]["hook_event_name"] for e in fired} >= {"UserPromptSubmit"}

    backend = CodexCli(str(codex_bin()), env=codex_env(home))
    Judge(backend, timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    Judge(backend, timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation", cwd=project)
    assert read_hook_log(log) == fired, "a hook fired inside a judge call"


def test_codex_fork_sees_the_live_session(mock, home: Path, project: Path):
    write_codex_config(home, mock.openai_base_url, trusted_projects=[project])
    mock.enqueue(Text("Noted: the staging database listens on MARKER-4410."))
    done = run_codex_exec(["--json", "remember the staging port"], cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    thread_id = json.loads(done.stdout.splitlines()[0])["thread_id"]
    mock.handler = lambda req: Structured(S["scope"].good)
    backend = CodexCli(str(codex_bin()), env=codex_env(home))
    answer = Judge(backend, timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="reflection",
                                              session_id=thread_id, cwd=project)
    assert answer.scope.value == "global"
    [req] = judge_requests(mock, "responses")
    assert "MARKER-4410" in req.body_text
    assert not {"exec_command", "write_stdin", "shell"} & set(req.tool_names())   # a fork runs no command either


def test_codex_api_error_is_a_model_error(mock, home: Path):
    write_codex_config(home, mock.openai_base_url)
    mock.enqueue(Error(400, "bad request from the mock"))
    with pytest.raises(JudgeFailure) as err:
        Judge(CodexCli(str(codex_bin()), env=codex_env(home)), timeout_s=60).ask(
            calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.MODEL_ERROR and "bad request from the mock" in err.value.detail


def test_codex_probe(mock, home: Path):
    write_codex_config(home, mock.openai_base_url)
    mock.handler = lambda req: Structured({"echo": TOKEN.search(req.body_text).group(0)})
    result = probe(CodexCli(str(codex_bin()), env=codex_env(home)), timeout_s=60)
    assert result.ok, result.line()


# -- timeouts leave nothing behind -----------------------------------------------------------------------------------

def processes_with_home(home: Path) -> list[int]:
    """Live processes whose environment has HOME=<home> (the CLI and anything it spawned)."""
    marker = f"HOME={home}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state not in ("Z", "X"):
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("flavour", ["claude", "codex"])
def test_a_real_cli_past_its_deadline_is_killed_with_everything_it_started(mock, home: Path, flavour: str,
                                                                            monkeypatch):
    """The mock holds every model request open (it never answers), so the CLI cannot finish: it can only be killed.
    The judge's deadline (4 s) starts once the CLI has reached the mock, i.e. once it is fully up with every process it
    starts; before that there is no race to lose, however slow the machine. Past the deadline, the CLI and all it
    started must be gone; the CLI leads the process group the judge kills."""
    mock.handler = lambda req: Delay(HELD)
    if flavour == "claude":
        backend = ClaudeCli(str(claude_bin()), env=claude_env(home, mock.url))
    else:
        write_codex_config(home, mock.openai_base_url)
        backend = CodexCli(str(codex_bin()), env=codex_env(home))
    started: dict[int, int] = {}  # pid -> process group, of everything with this HOME once the CLI is up

    def cli_is_up() -> bool:
        if not mock.model_requests():
            return False
        for pid in processes_with_home(home):
            try:
                started[pid] = os.getpgid(pid)
            except ProcessLookupError:
                pass
        return True

    gate = hold_deadline(monkeypatch, cli_is_up)
    with pytest.raises(JudgeFailure) as err:
        Judge(backend, timeout_s=4).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.TIMEOUT and "process group killed" in err.value.detail
    [cli] = gate.children
    assert gate.deadlines == [4]                      # the judge's own deadline is the one that expired
    assert mock.model_requests(), "the CLI never reached the model"
    # The CLI leads its own group, the one the judge killed. A CLI may also run a short-lived helper of its own in
    # another session (codex snapshots the user's shell at start-up, which may still be running under load): that is
    # not the judge's to kill, but it must be gone by the end like everything else, which the wait below checks.
    assert started.get(cli.pid) == cli.pid, started
    wait_until(lambda: not processes_with_home(home), lambda: f"the {flavour} processes to be gone: still "
               f"{processes_with_home(home)}")
