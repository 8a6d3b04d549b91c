"""Codex rollouts: the captured real rollout and a hand-written one with every rule's case."""
from __future__ import annotations

import json

import pytest

from rose.transcripts import (Agent, Kind, Role, ToolOutcome, counts, final_summary, quote_in_user_turns, read_codex,
                              read_transcript, user_turns)

from .build import FIXTURES, CodexWriter

REAL = FIXTURES / "codex_rollout.jsonl"
RICH = FIXTURES / "codex_rich.jsonl"


@pytest.fixture(scope="module")
def rich():
    return read_codex(RICH)


def test_real_rollout_parses():
    conv = read_transcript(REAL)
    assert conv.agent is Agent.CODEX
    assert conv.session_id == "01a2297a-6e4e-7e93-b861-034451abedd4"
    assert conv.cwd.endswith("/cli-project") and conv.version == "0.171.0"
    assert conv.skipped == 0
    assert [m.kind for m in conv.messages] == [Kind.PROMPT, Kind.INJECTED, Kind.TOOL_CALL, Kind.TOOL_RESULT,
                                               Kind.COMPACTION, Kind.TEXT]
    prompt, injected, call, result, compaction, text = conv.messages
    assert prompt.text == "please say hi"                     # not the environment_context or skills messages
    assert injected.text == "MARKER-123"                      # developer message with hooks.additional_context
    assert call.tool_name == "exec_command" and json.loads(call.text) == {"cmd": "echo hi-from-tool"}
    assert result.text == "hi-from-tool\n"                    # the exec envelope is parsed off
    assert result.exit_code == 0 and result.outcome is ToolOutcome.SUCCEEDED and result.call_id == call.call_id
    assert compaction.text == "summary of the work so far"    # compaction_output: not the agent speaking
    assert text.text == "done" and final_summary(conv) == "done"
    assert user_turns(conv) == [(0, "please say hi")]


def test_agents_md_and_environment_are_not_user_words(rich):
    assert rich.messages[0].kind is Kind.INJECTED and "AGENTS.md instructions" in rich.messages[0].text
    assert all("<environment_context>" not in m.text for m in rich.messages)
    assert all("make test" not in text and "AGENTS.md" not in text for _, text in user_turns(rich))


def test_hook_context_from_developer_messages_is_injected(rich):
    injected = rich.of_kind(Kind.INJECTED)
    assert any("<rose-lessons>" in m.text for m in injected)
    assert all(m.role is Role.SYSTEM for m in injected)
    assert not any("permissions instructions" in m.text for m in rich.messages)   # harness noise, dropped


def test_user_prompts_by_provenance(rich):
    turns = user_turns(rich)
    assert len(turns) == 3 and counts(rich).user_turns == 3
    assert turns[0][1].startswith("The /orders endpoint returns 500")
    assert turns[1][1].endswith("[image]") and "base64" not in turns[1][1]
    assert turns[2][1].startswith("Don\u2019t tell me to hard-refresh")


def test_failures_from_exit_codes_and_harness_errors(rich):
    results = rich.of_kind(Kind.TOOL_RESULT)
    summary = [(m.tool_name, m.outcome, m.exit_code) for m in results]
    assert summary == [
        ("exec_command", ToolOutcome.FAILED, 2),        # "Process exited with code 2"
        ("shell", ToolOutcome.SUCCEEDED, 0),            # legacy JSON output with metadata.exit_code
        ("apply_patch", ToolOutcome.FAILED, None),      # "apply_patch verification failed: ..."
        ("apply_patch", ToolOutcome.SUCCEEDED, 0),      # "Exit code: 0"
        ("exec_command", ToolOutcome.SUCCEEDED, 0),
        ("exec_command", ToolOutcome.UNKNOWN, None),    # "Process running with session ID 7"
        ("exec_command", ToolOutcome.FAILED, None),     # "failed to parse function arguments"
        ("exec_command", ToolOutcome.SUCCEEDED, 0),
    ]
    assert "KeyError: 'items'" in results[0].text and not results[0].text.startswith("Chunk ID")
    assert results[5].text.startswith("Process running with session ID 7\n")   # kept: a later call may end it
    assert counts(rich).failed_tool_calls == 3 and counts(rich).tool_calls == 8


def test_exit_code_from_an_event_when_the_output_has_none(tmp_path):
    path = tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-00000000abcd.jsonl"
    lines = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                                              "arguments": "{\"command\": [\"false\"]}"}},
        {"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c1", "exit_code": 1}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": ""}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c2",
                                              "arguments": "{\"command\": [\"false\"]}"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2", "output": "boom"}},
        {"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c2", "exit_code": 3}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    conv = read_codex(path)
    assert [(m.outcome, m.exit_code) for m in conv.of_kind(Kind.TOOL_RESULT)] == [
        (ToolOutcome.FAILED, 1), (ToolOutcome.FAILED, 3)]   # event before and after the output


def test_reasoning_summaries_are_kept(rich):
    reasoning = rich.of_kind(Kind.REASONING)
    assert len(reasoning) == 3 and "Reproducing the 500" in reasoning[0].text


def test_compaction_marker_not_assistant_text(rich):
    (marker,) = rich.of_kind(Kind.COMPACTION)
    assert marker.text.startswith("Summary: fixed the empty-cart 500")
    assert all(not m.text.startswith("Summary:") for m in rich.of_kind(Kind.TEXT))
    assert final_summary(rich).startswith("Set `Cache-Control: no-store`")


def test_turn_aborted_is_synthetic(rich):
    (note,) = rich.of_kind(Kind.SYNTHETIC)
    assert note.text.startswith("<turn_aborted>") and note.role is Role.USER


def test_huge_output_is_clipped(rich):
    big = next(m for m in rich.of_kind(Kind.TOOL_RESULT) if "test_case_0000" in m.text)
    assert big.truncated and len(big.text) < 20_100 and big.text.rstrip().endswith("700 passed in 4.98s")


def test_malformed_and_truncated_lines_are_skipped_and_counted(rich):
    assert rich.skipped == 3 and rich.partial_last_line
    assert rich.skip_reasons[-1].endswith("cut off (the file ends mid-line)")


def test_session_id_falls_back_to_the_file_name(tmp_path):
    path = tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-00000000abcd.jsonl"
    path.write_text(json.dumps({"type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}}) + "\n")
    conv = read_transcript(path)
    assert conv.agent is Agent.CODEX and conv.session_id == "0199c0de-0000-7000-8000-00000000abcd"
    assert user_turns(conv) == [(0, "hello")]


def test_subagent_rollout_is_flagged(tmp_path):
    w = CodexWriter(tmp_path / "r.jsonl")
    w.close()
    text = (tmp_path / "r.jsonl").read_text().replace('"source":"exec"', '"source":{"subagent":"review"}')
    (tmp_path / "r.jsonl").write_text(text)
    assert read_codex(tmp_path / "r.jsonl").subagent


def test_user_text_without_metadata_is_classified_by_markup(tmp_path):
    path = tmp_path / "old.jsonl"
    items = [{"type": "input_text", "text": "<user_instructions>\n\nuse tabs\n\n</user_instructions>"},
             {"type": "input_text", "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"},
             {"type": "input_text", "text": "rename the module, keep the public API"}]
    lines = [{"type": "session_meta", "payload": {"id": "s2", "cwd": "/w"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user", "content": items}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    conv = read_codex(path)
    assert [m.kind for m in conv.messages] == [Kind.INJECTED, Kind.PROMPT]
    assert user_turns(conv) == [(1, "rename the module, keep the public API")]


def test_harness_items_in_a_user_message_never_become_prompts(tmp_path):
    path = tmp_path / "mixed.jsonl"
    passthrough = {"content_item_kinds": ["environments.environment_context", "user.text"],
                   "content_item_metadata": [{"provenance": {"type": "harness", "hook": False}},
                                             {"provenance": {"type": "user"}}]}
    lines = [{"type": "session_meta", "payload": {"id": "s3", "cwd": "/w"}},
             {"type": "response_item", "payload": {
                 "type": "message", "role": "user", "internal_chat_message_metadata_passthrough": passthrough,
                 "content": [{"type": "input_text", "text": "the harness says: use make"},
                             {"type": "input_text", "text": "fix the flaky test"}]}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert user_turns(read_codex(path)) == [(0, "fix the flaky test")]


def _rollout(tmp_path, records, name="rollout-2026-10-01T09-00-00-0199c0de-0000-7000-8000-0000000000e1.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return read_codex(path)


def _meta(version="0.46.0"):
    return {"timestamp": "2026-10-01T09:00:00.000Z", "type": "session_meta",
            "payload": {"id": "0199c0de-0000-7000-8000-0000000000e1", "cwd": "/w", "cli_version": version}}


def _item(text):
    return {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                 "content": [{"type": "input_text", "text": text}]}}


def _event(text, **extra):
    return {"type": "event_msg", "payload": {"type": "user_message", "message": text, "images": [], **extra}}


def test_a_prompt_recorded_only_as_an_event_is_a_user_turn(tmp_path):
    conv = _rollout(tmp_path, [_meta(), _event("rename the module, keep the API", kind="plain"),
                               {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                                     "content": [{"type": "output_text",
                                                                                  "text": "renamed"}]}}])
    assert user_turns(conv) == [(0, "rename the module, keep the API")]
    assert counts(conv).user_turns == 1 and quote_in_user_turns(conv, "keep the API") == 0


@pytest.mark.parametrize("event_first", [False, True])
def test_a_prompt_in_both_a_response_item_and_an_event_is_one_turn(tmp_path, event_first):
    pair = [_event("fix the flaky test"), _item("fix the flaky test")]
    conv = _rollout(tmp_path, [_meta()] + (pair if event_first else pair[::-1]))
    assert user_turns(conv) == [(0, "fix the flaky test")]


def test_the_same_prompt_typed_twice_is_two_turns(tmp_path):
    conv = _rollout(tmp_path, [_meta(), _item("continue"), _event("continue"), _item("continue"), _event("continue"),
                               _event("continue")])    # the last one only as an event
    assert [text for _, text in user_turns(conv)] == ["continue"] * 3


def test_the_real_rich_rollout_still_counts_each_prompt_once(rich):
    # codex_rich has a response item and its user_message event for its first prompt
    assert counts(rich).user_turns == 3


def test_harness_text_sent_as_an_event_is_not_a_prompt(tmp_path):
    conv = _rollout(tmp_path, [
        _meta("0.42.0"),
        _event("<user_instructions>\nuse tabs\n</user_instructions>", kind="user_instructions"),
        _event("<environment_context>\n<cwd>/w</cwd>\n</environment_context>", kind="environment_context"),
        _event("<environment_context>\n<cwd>/w</cwd>\n</environment_context>"),
        _event("tidy the imports", kind="plain")])
    assert user_turns(conv) == [(0, "tidy the imports")]


def test_an_event_with_images_gets_image_placeholders(tmp_path):
    conv = _rollout(tmp_path, [_meta(), _event("what is on this screen?", images=["data:image/png;base64,AAAA"])])
    assert user_turns(conv) == [(0, "what is on this screen?\n\n[image]")]
    assert all("base64" not in m.text for m in conv.messages)


def test_an_event_of_unexpected_shape_is_no_prompt_and_no_crash(tmp_path):
    conv = _rollout(tmp_path, [_meta(), {"type": "event_msg", "payload": {"type": "user_message", "message": {"a": 1},
                                                                            "images": "nope"}},
                               _event("ok then", images={"not": "a list"}), _item("ok then")])
    assert user_turns(conv) == [(0, "ok then")] and conv.skipped == 0
