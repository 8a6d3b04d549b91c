"""Claude Code transcripts: the captured real session and a hand-written one with every rule's case."""
from __future__ import annotations

import pytest

from rose.transcripts import Agent, Kind, Role, ToolOutcome, counts, read_claude, read_transcript, user_turns

from .build import FIXTURES

REAL = FIXTURES / "claude_session.jsonl"
RICH = FIXTURES / "claude_rich.jsonl"


@pytest.fixture(scope="module")
def rich():
    return read_claude(RICH)


def kinds(conv):
    return [m.kind for m in conv.messages]


def test_real_session_parses():
    conv = read_transcript(REAL)
    assert conv.agent is Agent.CLAUDE
    assert conv.session_id == "2e192d99-9243-4a0a-a230-0503296cc3d4"
    assert conv.cwd.endswith("/cli-project") and conv.version == "2.1.332"
    assert conv.skipped == 0 and not conv.partial_last_line
    assert kinds(conv) == [Kind.PROMPT, Kind.INJECTED, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.TEXT,
                           Kind.COMPACTION, Kind.SYNTHETIC, Kind.COMMAND, Kind.SYNTHETIC]
    prompt, injected, call, result, text, compaction, _caveat, command, _stdout = conv.messages
    assert prompt.text == "please say hi" and prompt.role is Role.USER
    assert injected.text == "MARKER-123" and injected.role is Role.SYSTEM
    assert call.tool_name == "Bash" and '"command":"echo hi-from-tool"' in call.text
    assert result.role is Role.TOOL and result.text == "hi-from-tool" and result.outcome is ToolOutcome.SUCCEEDED
    assert result.call_id == call.call_id == "toolu_mock000001" and result.tool_name == "Bash"
    assert text.text == "done" and text.role is Role.ASSISTANT
    assert compaction.text.startswith("This session is being continued")
    assert command.text == "/compact keep the greeting"
    assert user_turns(conv) == [(0, "please say hi"), (7, "/compact keep the greeting")]


def test_indices_are_positions_and_handles_cite_them():
    conv = read_claude(REAL)
    assert [m.n for m in conv.messages] == list(range(len(conv)))
    assert conv.handle(4) == "session://2e192d99-9243-4a0a-a230-0503296cc3d4/message/4"


def test_indices_are_stable_when_the_file_grows(tmp_path):
    lines = RICH.read_text(encoding="utf-8").splitlines(keepends=True)
    full = read_claude(RICH)
    for cut in (10, 25, 40):
        part = tmp_path / f"part{cut}.jsonl"
        part.write_text("".join(lines[:cut]), encoding="utf-8")
        early = read_claude(part)
        for m in early.messages[:-1]:   # the last one may still be gaining blocks of its response
            twin = full.messages[m.n]
            assert (twin.kind, twin.text) == (m.kind, m.text)


def test_sidechain_lines_are_removed(rich):
    assert not any("SIDECHAIN-ONLY" in m.text for m in rich.messages)
    assert not any(m.tool_name == "Grep" for m in rich.messages)
    # the Task call and its result stay: that is the main agent's own work
    task = [m for m in rich.messages if m.tool_name == "Task"]
    assert [m.kind for m in task] == [Kind.TOOL_CALL, Kind.TOOL_RESULT]
    assert not rich.subagent


@pytest.mark.parametrize("name", ["agent-a1b2c3.jsonl", "side.jsonl"])
def test_a_file_of_sidechain_lines_is_a_subagent_conversation(tmp_path, name):
    lines = [line for line in RICH.read_text(encoding="utf-8").splitlines() if '"isSidechain":true' in line]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = read_claude(path)
    assert conv.subagent and conv.agent_id == "a1b2c3"
    # the sub-agent's lines carry the parent session's id, its cwd and the CLI version: none of them is lost
    assert conv.session_id == "7f3c2a10-5b8e-4c1d-9a6f-2e4b8d0c1a77"
    assert conv.cwd == "/home/dev/shop" and conv.version == "2.1.332"
    assert kinds(conv) == [Kind.SYNTHETIC, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.TEXT]
    # its "user" is the parent agent: the task it was given is never the user's words
    assert conv.messages[0].text == "Find every caller of apply_discount in the repo."
    assert user_turns(conv) == [] and counts(conv).user_turns == 0
    assert conv.messages[1].tool_name == "Grep" and conv.messages[2].outcome is ToolOutcome.SUCCEEDED


def test_a_subagent_file_without_an_agent_id_takes_it_from_its_name(tmp_path):
    lines = [line.replace('"agentId":"a1b2c3",', "") for line in RICH.read_text(encoding="utf-8").splitlines()
             if '"isSidechain":true' in line]
    path = tmp_path / "agent-feedc0de.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = read_transcript(path)
    assert conv.agent is Agent.CLAUDE and conv.subagent and conv.agent_id == "feedc0de"
    assert conv.session_id == "7f3c2a10-5b8e-4c1d-9a6f-2e4b8d0c1a77"


def test_a_session_file_keeps_its_own_id_and_no_agent_id(rich):
    assert rich.session_id == "7f3c2a10-5b8e-4c1d-9a6f-2e4b8d0c1a77" and rich.agent_id is None


def test_blocks_sharing_a_message_id_are_one_response(rich):
    first = [m for m in rich.messages if m.response_id == "msg_01A"]
    assert [m.kind for m in first] == [Kind.REASONING, Kind.TEXT, Kind.TOOL_CALL]
    assert sum(1 for m in rich.messages if m.text == "Let me run the checkout tests first.") == 1  # line written twice
    assert counts(rich).assistant_turns == 12


def test_consecutive_text_blocks_of_one_message_merge(tmp_path):
    from .build import ClaudeWriter

    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("hi")
    w.say("first part", mid="msg_X")
    w.say("second part", mid="msg_X")
    w.say("another response", mid="msg_Y")
    conv = read_claude(w.close())
    texts = [m.text for m in conv.messages if m.kind is Kind.TEXT]
    assert texts == ["first part\n\nsecond part", "another response"]


def test_injected_context_and_rose_blocks_are_not_user_words(rich):
    injected = rich.of_kind(Kind.INJECTED)
    assert len(injected) == 1 and "<rose-lessons>" in injected[0].text
    assert all("rose-lessons" not in text and "Always run the tests with" not in text for _, text in user_turns(rich))


def test_tool_results_are_tool_output_not_user_words(rich):
    results = rich.of_kind(Kind.TOOL_RESULT)
    assert results and all(m.role is Role.TOOL for m in results)
    assert all("ModuleNotFoundError" not in text for _, text in user_turns(rich))


def test_task_notification_and_harness_notes_are_synthetic(rich):
    synthetic = [m.text for m in rich.of_kind(Kind.SYNTHETIC)]
    assert any(t.startswith("<task-notification>") for t in synthetic)
    assert "[Request interrupted by user for tool use]" in synthetic
    assert any(t.startswith("<local-command-caveat>") for t in synthetic)    # isMeta
    assert any(t.startswith("<local-command-stdout>") for t in synthetic)
    assert all(m.role is Role.USER for m in rich.of_kind(Kind.SYNTHETIC))


def test_user_words_are_the_typed_prompts_and_commands(rich):
    turns = user_turns(rich)
    assert [rich.messages[n].kind for n, _ in turns] == [Kind.PROMPT, Kind.PROMPT, Kind.PROMPT, Kind.COMMAND,
                                                         Kind.PROMPT]
    assert turns[0][1].startswith("The checkout tests are failing")
    assert turns[1][1].endswith("[image]")   # an image block becomes a placeholder, never its base64
    assert turns[3][1] == "/model opus"
    assert counts(rich).user_turns == 4
    assert all("iVBORw0KGgo" not in m.text for m in rich.messages)


def test_failures_are_detected_with_exit_codes(rich):
    failed = [m for m in rich.of_kind(Kind.TOOL_RESULT) if m.failed]
    assert [(m.tool_name, m.exit_code) for m in failed] == [("Bash", 4), ("Bash", 1), ("Bash", None)]
    assert "ModuleNotFoundError" in failed[0].text
    assert "doesn't want to proceed" in failed[2].text    # a rejected tool use is a failed call
    assert counts(rich).failed_tool_calls == 3 and counts(rich).tool_calls == 7


def test_compaction_is_one_marker_holding_its_summary(rich):
    (marker,) = rich.of_kind(Kind.COMPACTION)
    assert marker.role is Role.SYSTEM
    assert "Primary Request and Intent" in marker.text
    assert counts(rich).compactions == 1
    assert all("Primary Request" not in text for _, text in user_turns(rich))


def test_reasoning_is_kept_and_empty_thinking_is_not(rich):
    reasoning = rich.of_kind(Kind.REASONING)
    assert [m.response_id for m in reasoning] == ["msg_01A", "msg_02B"]   # msg_11K's thinking was empty
    assert "run the suite first" in reasoning[0].text


def test_cli_made_assistant_lines_are_dropped(rich):
    assert not any("API Error" in m.text for m in rich.messages)


def test_huge_tool_output_is_clipped_with_a_marker(rich):
    read = next(m for m in rich.of_kind(Kind.TOOL_RESULT) if m.tool_name == "Read")
    assert read.truncated and len(read.text) < 20_100
    assert "chars cut ..." in read.text
    assert read.text.startswith("     1\t") and "line 799 of" in read.text   # head and tail both kept


def test_malformed_and_truncated_lines_are_skipped_and_counted(rich):
    assert rich.skipped == 3
    assert rich.partial_last_line
    assert rich.skip_reasons == ["line 35: not JSON", "line 37: not a JSON object",
                                 "line 51: cut off (the file ends mid-line)"]
    assert not any("never fin" in m.text or "half writ" in m.text for m in rich.messages)


def test_bookkeeping_lines_never_become_messages(rich):
    # queue-operation and api-request-blob lines repeat the prompt; it must appear once
    first_prompt = rich.messages[0].text
    assert sum(1 for m in rich.messages if m.text == first_prompt) == 1
