"""Smoke tests of the REAL claude and codex CLIs, offline, against the local mock model server.

They prove the facts rose is built on (docs/testing-real-clis.md): project-scope hooks fire with the payloads we
expect, UserPromptSubmit additionalContext reaches the model, the headless structured-output "judge" calls work,
and transcripts / rollouts land where we read them.

They also guard the fixtures other tests use (tests/fixtures/transcripts, tests/fixtures/payloads): a live run must
still produce every key a saved fixture has. ``ROSE_UPDATE_FIXTURES=1`` rewrites the fixtures from the live run.
"""
from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.agent_clis import (
    claude_judge_args,
    claude_transcripts,
    codex_judge_args,
    codex_list_hooks,
    codex_rollouts,
    codex_trust_hooks,
    read_hook_log,
    run_claude,
    run_codex_exec,
    write_claude_project_hooks,
    write_codex_config,
    write_codex_hooks,
    write_recorder_hook,
)
from tests.support.mock_model_server import (HELD, STRUCTURED_OUTPUT_TOOL, Delay, Error, MockModelServer, Structured,
                                             Text, ToolUse)
from tests.support.waits import HANG_S

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
UPDATE_FIXTURES = os.environ.get("ROSE_UPDATE_FIXTURES") == "1"
TIMEOUT = 60
MARKER = "MARKER-123"
COMMON_HOOK_KEYS = {"session_id", "transcript_path", "cwd", "hook_event_name"}

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["keep", "drop"]}, "score": {"type": "number"}},
    "required": ["verdict", "score"],
    "additionalProperties": False,
}
JUDGE_ANSWER = {"verdict": "keep", "score": 0.75}


# ---------------------------------------------------------------------------------------------------------------------
# helpers


def _ok(cp, what: str) -> None:
    assert cp.returncode == 0, f"{what} exited {cp.returncode}\nstdout:\n{cp.stdout[-3000:]}\nstderr:\n{cp.stderr[-3000:]}"


def _by_event(entries: list) -> dict:
    out: dict = {}
    for entry in entries:
        out.setdefault(entry["payload"].get("hook_event_name"), []).append(entry["payload"])
    return out


def _jsonl(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _guard_payload_fixture(cli: str, event: str, live: dict) -> None:
    path = FIXTURES / "payloads" / f"{cli}_{event}.json"
    if UPDATE_FIXTURES:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(live, indent=2) + "\n")
        return
    assert path.exists(), f"{path} is missing; regenerate with ROSE_UPDATE_FIXTURES=1 python3 -m pytest tests/e2e"
    saved = json.loads(path.read_text())
    missing = set(saved) - set(live)
    assert not missing, f"{cli} {event} payload no longer has {sorted(missing)} (fixture {path.name} is stale)"
    assert saved["hook_event_name"] == live["hook_event_name"] == event


def _line_keys(lines: list, kind_of) -> dict:
    keys: dict = {}
    for line in lines:
        keys.setdefault(kind_of(line), set()).update(line)
    return keys


def _guard_transcript_fixture(name: str, live_path: Path, kind_of, kinds: set) -> None:
    path = FIXTURES / "transcripts" / name
    if UPDATE_FIXTURES:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(live_path, path)
        return
    assert path.exists(), f"{path} is missing; regenerate with ROSE_UPDATE_FIXTURES=1 python3 -m pytest tests/e2e"
    saved, live = _line_keys(_jsonl(path), kind_of), _line_keys(_jsonl(live_path), kind_of)
    for kind in kinds:
        assert kind in saved, f"fixture {name} has no {kind!r} line"
        assert kind in live, f"live transcript {live_path} has no {kind!r} line"
        missing = saved[kind] - live[kind]
        assert not missing, f"{kind!r} lines no longer carry {sorted(missing)} (fixture {name} is stale)"


def _claude_kind(line: dict) -> str:
    return line.get("type", "?")


def _codex_kind(line: dict) -> str:
    payload = line.get("payload")
    sub = payload.get("type") if isinstance(payload, dict) else None
    return f"{line.get('type')}:{sub}" if line.get("type") in ("response_item", "event_msg") else str(line.get("type"))


# ---------------------------------------------------------------------------------------------------------------------
# a. Claude: project-scope hooks


def test_claude_project_hooks_inject_context_and_fire(claude, mock_server, cli_home, cli_project, tmp_path, timed):
    log = tmp_path / "hooks.jsonl"
    command = write_recorder_hook(tmp_path / "hookbin", log, additional_context=MARKER)
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd", "PreCompact", "PostCompact"]
    write_claude_project_hooks(cli_project, events, command, timeout=30)

    # Turn 1: one real tool call (Bash echo), then a text answer.
    mock_server.enqueue(ToolUse("Bash", {"command": "echo hi-from-tool", "description": "say hi"}), Text("done"))
    cp = run_claude(
        ["-p", "please say hi", "--output-format", "json", "--allowedTools", "Bash(echo *)"],
        cwd=cli_project, home=cli_home, mock_url=mock_server.url, timeout=TIMEOUT,
    )
    timed("claude -p with hooks + 1 tool call", cp)
    _ok(cp, "claude -p")
    result = json.loads(cp.stdout)
    assert result["is_error"] is False and result["result"] == "done", result
    session_id = result["session_id"]

    model_requests = mock_server.model_requests("anthropic")
    assert len(model_requests) == 2, [r.path for r in mock_server.requests]
    first = model_requests[0]
    assert first.path == "/v1/messages" and first.query.get("beta") == ["true"] and first.stream
    # additionalContext reaches the model inside the conversation (not the system prompt) ...
    assert MARKER in json.dumps(first.body["messages"]), "UserPromptSubmit additionalContext did not reach the model"
    carrier = [m for m in first.body["messages"] if MARKER in json.dumps(m)]
    assert carrier[0]["role"] == "system", carrier  # a system-role message after the user message (2.1.332)
    assert "UserPromptSubmit hook additional context: " + MARKER in json.dumps(carrier[0])
    # ... and the tool really ran: its output went back in the second request.
    assert "hi-from-tool" in model_requests[1].body_text

    fired = _by_event(read_hook_log(log))
    for event in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]:
        assert event in fired, f"{event} hook did not fire; fired: {sorted(fired)}"
        assert COMMON_HOOK_KEYS <= set(fired[event][0]), fired[event][0]
        assert fired[event][0]["session_id"] == session_id
    assert fired["UserPromptSubmit"][0]["prompt"] == "please say hi"
    assert fired["Stop"][0]["stop_hook_active"] is False and fired["Stop"][0]["last_assistant_message"] == "done"
    assert fired["SessionEnd"][0]["reason"] == "other"
    assert fired["PreToolUse"][0]["tool_name"] == "Bash"
    assert "tool_response" in fired["PostToolUse"][0]
    env = read_hook_log(log)[0]["env"]
    assert env.get("CLAUDE_PROJECT_DIR") == str(cli_project)

    # Turn 2: a manual compaction of the same session fires PreCompact (trigger manual) and PostCompact.
    cp2 = run_claude(
        ["-p", "/compact keep the greeting", "--resume", session_id, "--output-format", "json"],
        cwd=cli_project, home=cli_home, mock_url=mock_server.url, timeout=TIMEOUT,
    )
    timed("claude -p /compact --resume", cp2)
    _ok(cp2, "claude -p /compact --resume")
    fired = _by_event(read_hook_log(log))
    assert fired["PreCompact"][0]["trigger"] == "manual"
    assert fired["PreCompact"][0]["custom_instructions"] == "keep the greeting"
    assert "compact_summary" in fired["PostCompact"][0]
    assert [p["source"] for p in fired["SessionStart"]] == ["startup", "resume", "compact"]

    # e. the transcript is where hooks say it is, and holds user / assistant lines.
    transcripts = claude_transcripts(cli_home)
    assert len(transcripts) == 1, transcripts
    transcript = transcripts[0]
    assert transcript.name == f"{session_id}.jsonl"
    assert str(transcript) == fired["Stop"][0]["transcript_path"]
    lines = _jsonl(transcript)
    types = {line["type"] for line in lines}
    assert {"user", "assistant", "attachment", "system"} <= types, types
    assert any(line.get("subtype") == "compact_boundary" for line in lines)
    assert any(line.get("isCompactSummary") for line in lines if line["type"] == "user")
    hook_ctx = [l for l in lines if l["type"] == "attachment" and l["attachment"].get("type") == "hook_additional_context"]
    assert hook_ctx and hook_ctx[0]["attachment"]["content"] == [MARKER]

    _guard_transcript_fixture("claude_session.jsonl", transcript, _claude_kind, {"user", "assistant"})
    for event in ["UserPromptSubmit", "Stop", "SessionEnd", "PreCompact", "SessionStart", "PostCompact"]:
        _guard_payload_fixture("claude", event, fired[event][0])


# ---------------------------------------------------------------------------------------------------------------------
# b. Claude: headless judge call with structured output, hooks off


@pytest.mark.parametrize("hooks_off", ["setting-sources", "disable-all-hooks"])
def test_claude_json_schema_judge(claude, mock_server, cli_home, cli_project, tmp_path, timed, hooks_off):
    # A project whose hooks would fire if the judge call loaded them.
    log = tmp_path / "hooks.jsonl"
    write_claude_project_hooks(cli_project, ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"],
                               write_recorder_hook(tmp_path / "hookbin", log, additional_context=MARKER))
    mock_server.handler = lambda req: Structured(JUDGE_ANSWER) if STRUCTURED_OUTPUT_TOOL in req.tool_names() else None

    cp = run_claude(claude_judge_args("Judge this lesson.", JUDGE_SCHEMA, model="claude-haiku-4-5", hooks_off=hooks_off),
                    cwd=cli_project, home=cli_home, mock_url=mock_server.url, timeout=TIMEOUT)
    timed(f"claude -p --json-schema ({hooks_off})", cp)
    _ok(cp, "claude judge call")
    out = json.loads(cp.stdout)
    assert out["structured_output"] == JUDGE_ANSWER, out
    assert out["is_error"] is False and out["subtype"] == "success"

    requests = mock_server.model_requests("anthropic")
    assert len(requests) == 1
    assert requests[0].tool_names() == [STRUCTURED_OUTPUT_TOOL]  # --tools "" leaves only the schema tool
    assert requests[0].model == "claude-haiku-4-5"
    assert MARKER not in requests[0].body_text
    assert read_hook_log(log) == [], "hooks fired inside the judge call"
    assert claude_transcripts(cli_home) == []  # --no-session-persistence


# ---------------------------------------------------------------------------------------------------------------------
# c. Codex: project hooks (trusted project + --dangerously-bypass-hook-trust), auto-compaction


def test_codex_project_hooks_inject_context_and_fire(codex, mock_server, cli_home, cli_project, tmp_path, timed):
    log = tmp_path / "hooks.jsonl"
    command = write_recorder_hook(tmp_path / "hookbin", log, additional_context=MARKER)
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd", "PreCompact", "PostCompact"]
    write_codex_hooks(cli_project, events, command, timeout=30)
    # A low auto-compact limit plus a huge reported usage makes codex compact mid-turn (PreCompact trigger auto).
    write_codex_config(cli_home, mock_server.openai_base_url, trusted_projects=[cli_project],
                       extra_toml="model_auto_compact_token_limit = 1000")
    mock_server.enqueue(
        ToolUse("exec_command", {"cmd": "echo hi-from-tool"}, input_tokens=990_000),  # 1: a tool call, "huge" usage
        Text("summary of the work so far"),  # 2: the compaction request
        Text("done"),  # 3: the turn goes on after compaction
    )
    cp = run_codex_exec(["--json", "-s", "danger-full-access", "please say hi"],
                        cwd=cli_project, home=cli_home, bypass_hook_trust=True, timeout=TIMEOUT)
    timed("codex exec with hooks + 1 tool call + auto-compaction", cp)
    _ok(cp, "codex exec")
    events_out = [json.loads(line) for line in cp.stdout.splitlines() if line.startswith("{")]
    thread_id = next(e["thread_id"] for e in events_out if e["type"] == "thread.started")
    messages = [e["item"]["text"] for e in events_out if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"]
    assert messages[-1] == "done", events_out

    requests = mock_server.model_requests("responses")
    assert len(requests) == 3, [r.path for r in mock_server.requests]
    first = requests[0]
    assert first.path == "/v1/responses" and first.stream and first.model == "gpt-mock"
    carriers = [item for item in first.body["input"] if MARKER in json.dumps(item)]
    assert carriers, "UserPromptSubmit additionalContext did not reach the model"
    assert carriers[0]["type"] == "message" and carriers[0]["role"] == "developer", carriers[0]
    assert "hi-from-tool" in requests[1].body_text

    fired = _by_event(read_hook_log(log))
    for event in events:
        assert event in fired, f"{event} hook did not fire; fired: {sorted(fired)}"
        assert COMMON_HOOK_KEYS <= set(fired[event][0]), fired[event][0]
        assert fired[event][0]["session_id"] == thread_id
    assert fired["UserPromptSubmit"][0]["prompt"] == "please say hi"
    assert {"turn_id", "model"} <= set(fired["UserPromptSubmit"][0])
    assert fired["PreCompact"][0]["trigger"] == "auto"
    assert fired["SessionEnd"][0]["reason"] == "other"
    assert fired["PreToolUse"][0]["tool_name"] == "Bash"

    # e. the rollout is the hooks' transcript_path.
    rollouts = codex_rollouts(cli_home)
    assert len(rollouts) == 1 and thread_id in rollouts[0].name, rollouts
    assert str(rollouts[0]) == fired["Stop"][0]["transcript_path"]
    lines = _jsonl(rollouts[0])
    kinds = {_codex_kind(line) for line in lines}
    assert {"session_meta", "turn_context", "response_item:message", "response_item:function_call",
            "response_item:function_call_output", "compacted"} <= kinds, kinds
    assert all({"timestamp", "type", "payload"} <= set(line) for line in lines)

    _guard_transcript_fixture("codex_rollout.jsonl", rollouts[0], _codex_kind,
                              {"session_meta", "turn_context", "response_item:message", "response_item:function_call"})
    for event in ["UserPromptSubmit", "Stop", "SessionEnd", "PreCompact", "SessionStart", "PostCompact"]:
        _guard_payload_fixture("codex", event, fired[event][0])


def test_codex_hooks_need_trust_and_persistent_trust_works(codex, mock_server, cli_home, cli_project, tmp_path, timed):
    log = tmp_path / "hooks.jsonl"
    write_codex_hooks(cli_project, ["UserPromptSubmit", "Stop", "SessionEnd"],
                      write_recorder_hook(tmp_path / "hookbin", log, additional_context=MARKER))

    # Untrusted project, even with the bypass flag: project hooks are not loaded.
    write_codex_config(cli_home, mock_server.openai_base_url)
    cp = run_codex_exec(["hi"], cwd=cli_project, home=cli_home, bypass_hook_trust=True, timeout=TIMEOUT)
    timed("codex exec, untrusted project, bypass flag", cp)
    _ok(cp, "codex exec")
    assert read_hook_log(log) == []

    # Trusted project, hooks not trusted, no bypass: skipped silently.
    write_codex_config(cli_home, mock_server.openai_base_url, trusted_projects=[cli_project])
    cp = run_codex_exec(["hi"], cwd=cli_project, home=cli_home, timeout=TIMEOUT)
    timed("codex exec, trusted project, untrusted hooks", cp)
    _ok(cp, "codex exec")
    assert read_hook_log(log) == []
    assert all(MARKER not in r.body_text for r in mock_server.model_requests())

    # Persistent trust, as codex itself stores it: [hooks.state."<key>"] trusted_hash = "<currentHash>".
    hooks = codex_list_hooks(cli_home, cli_project)
    assert {h["trustStatus"] for h in hooks} == {"untrusted"} and {h["source"] for h in hooks} == {"project"}
    keys = codex_trust_hooks(cli_home, cli_project)
    assert sorted(keys) == sorted(f"{os.path.realpath(cli_project)}/.codex/hooks.json:{e}:0:0"
                                  for e in ["user_prompt_submit", "stop", "session_end"])
    assert {h["trustStatus"] for h in codex_list_hooks(cli_home, cli_project)} == {"trusted"}
    mock_server.clear()
    cp = run_codex_exec(["hi"], cwd=cli_project, home=cli_home, timeout=TIMEOUT)
    timed("codex exec, persistently trusted hooks", cp)
    _ok(cp, "codex exec")
    assert sorted(_by_event(read_hook_log(log))) == ["SessionEnd", "Stop", "UserPromptSubmit"]
    assert MARKER in mock_server.model_requests()[0].body_text


# ---------------------------------------------------------------------------------------------------------------------
# d. Codex: headless judge call with --output-schema / -o


def test_codex_output_schema_judge(codex, mock_server, cli_home, cli_project, tmp_path, timed):
    # User-level hooks that would fire (bypass flag given) unless `--disable hooks` works.
    log = tmp_path / "hooks.jsonl"
    write_codex_hooks(cli_home, ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"],
                      write_recorder_hook(tmp_path / "hookbin", log, additional_context=MARKER))
    write_codex_config(cli_home, mock_server.openai_base_url)
    schema_file, last_file = tmp_path / "schema.json", tmp_path / "last.txt"
    schema_file.write_text(json.dumps(JUDGE_SCHEMA))
    mock_server.default = Structured(JUDGE_ANSWER)

    cp = run_codex_exec(codex_judge_args("Judge this lesson.", schema_file, last_file),
                        cwd=cli_project, home=cli_home, bypass_hook_trust=True, timeout=TIMEOUT)
    timed("codex exec --output-schema -o (--ephemeral --disable hooks)", cp)
    _ok(cp, "codex judge call")
    assert json.loads(last_file.read_text()) == JUDGE_ANSWER
    requests = mock_server.model_requests("responses")
    assert len(requests) == 1
    fmt = requests[0].body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True and fmt["schema"] == JUDGE_SCHEMA
    assert read_hook_log(log) == [], "hooks fired inside the judge call"
    assert codex_rollouts(cli_home) == []  # --ephemeral


# ---------------------------------------------------------------------------------------------------------------------
# The mock's own surface that rose's judge backends use directly (no CLI): chat completions and fallbacks.


def _post(url: str, body: dict, timeout: float = HANG_S) -> tuple:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read() or b"null")


def test_mock_chat_completions_errors_delays_and_fallback():
    with MockModelServer() as mock:
        mock.enqueue(Structured(JUDGE_ANSWER), Error(429, "slow down"), Delay(0.2, Text("late")))
        url = f"{mock.openai_base_url}/chat/completions"
        status, body = _post(url, {"model": "m", "messages": [{"role": "user", "content": "judge"}]})
        assert status == 200 and json.loads(body["choices"][0]["message"]["content"]) == JUDGE_ANSWER
        assert body["usage"]["total_tokens"] > 0
        status, body = _post(url, {"model": "m", "messages": []})
        assert status == 429 and body["error"]["message"] == "slow down"
        status, body = _post(url, {"model": "m", "messages": []})
        assert status == 200 and body["choices"][0]["message"]["content"] == "late"
        status, body = _post(url, {"model": "m", "messages": []})  # queue empty: the default
        assert body["choices"][0]["message"]["content"] == "OK"
        assert _post(f"{mock.url}/v1/messages/count_tokens", {"x": 1}) == (200, {})
        assert _post(f"{mock.url}/anything/else", {}) == (200, {})
        assert [r.api for r in mock.requests] == ["chat"] * 4 + ["other", "other"]
        assert mock.requests[0].body["messages"][0]["content"] == "judge"
    # Closed: nothing listens any more.
    with pytest.raises(urllib.error.URLError):
        _post(url, {}, timeout=2)


def test_mock_closes_promptly_while_a_reply_is_delayed():
    import threading

    mock = MockModelServer(default=Delay(HELD)).start()
    answers: list = []
    client = threading.Thread(target=lambda: answers.append(_post(f"{mock.openai_base_url}/chat/completions", {},
                                                                  timeout=HANG_S)))
    client.start()
    mock.wait_for(lambda r: r.api == "chat")  # the request is in, and its reply is being held
    mock.close()
    client.join(timeout=HANG_S)  # a bound on a hang only: close() must end the held reply, not outlast it
    assert not client.is_alive()
    assert answers and answers[0][0] == 503  # the delayed reply was cut short by close(), not answered late


def _post_sse(url: str, body: dict) -> list:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=HANG_S) as resp:
        assert resp.headers["Content-Type"] == "text/event-stream"
        text = resp.read().decode()
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = json.loads(fields["data"])
        assert fields.get("event", data["type"]) == data["type"]
        events.append(data)
    return events


def test_mock_anthropic_and_responses_rendering():
    with MockModelServer() as mock:
        msgs = f"{mock.url}/v1/messages?beta=true"
        mock.enqueue(ToolUse("Bash", {"command": "ls"}, text="let me look"), Structured(JUDGE_ANSWER))
        events = _post_sse(msgs, {"model": "claude-x", "stream": True, "messages": []})
        assert [e["type"] for e in events] == [
            "message_start", "content_block_start", "content_block_delta", "content_block_stop",
            "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
        assert events[4]["content_block"]["name"] == "Bash"
        assert json.loads(events[5]["delta"]["partial_json"]) == {"command": "ls"}
        assert events[-2]["delta"]["stop_reason"] == "tool_use"
        status, body = _post(msgs, {"model": "claude-x", "messages": []})  # non-stream JSON
        assert status == 200 and body["content"][0]["name"] == STRUCTURED_OUTPUT_TOOL
        assert body["content"][0]["input"] == JUDGE_ANSWER and body["stop_reason"] == "tool_use"
        assert mock.requests[0].query == {"beta": ["true"]} and mock.requests[0].path == "/v1/messages"

        resp = f"{mock.openai_base_url}/responses"
        mock.enqueue(Text("hello"), ToolUse("exec_command", {"cmd": "ls"}, id="call_1"))
        events = _post_sse(resp, {"model": "gpt-x", "stream": True, "input": []})
        assert [e["type"] for e in events] == [
            "response.created", "response.output_item.added", "response.output_text.delta",
            "response.output_item.done", "response.completed"]
        assert events[2]["delta"] == "hello" and events[-1]["response"]["usage"]["output_tokens"] > 0
        status, body = _post(resp, {"model": "gpt-x", "input": []})  # non-stream JSON
        call = body["output"][0]
        assert call["type"] == "function_call" and call["call_id"] == "call_1" and json.loads(call["arguments"]) == {"cmd": "ls"}
        assert [r.api for r in mock.model_requests()] == ["anthropic", "anthropic", "responses", "responses"]
