"""Reading files: typed errors instead of tracebacks, format detection, and bounded memory on huge files."""
from __future__ import annotations

import json
import os
import socket
import threading
import tracemalloc
from pathlib import Path

import pytest

from rose.errors import RoseError
from rose.model import Outcome
from rose.transcripts import (Agent, Kind, TranscriptNotAFile, TranscriptNotFound, TranscriptUnreadable, count_since,
                              counts, detect_agent, digest, execution_outcome, read_claude, read_codex,
                              read_transcript)

from .build import FIXTURES, ClaudeWriter


def test_missing_file_is_a_typed_error(tmp_path):
    with pytest.raises(TranscriptNotFound) as err:
        read_transcript(tmp_path / "nope.jsonl")
    assert isinstance(err.value, RoseError) and "no such transcript file" in str(err.value)
    with pytest.raises(TranscriptNotFound):
        read_claude(tmp_path / "nope.jsonl")


def test_directory_is_unreadable(tmp_path):
    with pytest.raises(TranscriptUnreadable, match="is a directory"):
        read_transcript(tmp_path)
    with pytest.raises(TranscriptNotAFile):
        read_claude(tmp_path)


def _within(fn, seconds: float = 5.0):
    """What fn returned or raised, failing the test (instead of hanging it) if fn blocks."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the call blocked"
    return box


READERS = [read_transcript, read_claude, read_codex, detect_agent, lambda p: count_since(p, 0)]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("reader", READERS)
def test_a_fifo_is_refused_without_blocking(tmp_path, reader):
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)   # nobody ever writes to it: a blocking open would hang forever
    box = _within(lambda: reader(fifo))
    assert isinstance(box.get("error"), TranscriptNotAFile), box
    assert "FIFO" in str(box["error"]) and box["error"].what.startswith("FIFO")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_swapped_in_after_the_stat_is_refused_without_blocking(tmp_path, monkeypatch):
    regular = tmp_path / "s.jsonl"
    regular.write_text((FIXTURES / "claude_session.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    fifo = tmp_path / "swapped"
    os.mkfifo(fifo)
    real_open = os.open
    # the stat saw a regular file; by the time of the open the path names a FIFO
    monkeypatch.setattr("rose.transcripts.reading._sys_open", lambda path, flags: real_open(fifo, flags))
    box = _within(lambda: read_transcript(regular, agent="claude"))
    assert isinstance(box.get("error"), TranscriptNotAFile) and "FIFO" in str(box["error"])


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets here")
def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        for reader in READERS:
            box = _within(lambda read=reader: read(path))
            assert isinstance(box.get("error"), TranscriptNotAFile) and "socket" in str(box["error"])
    finally:
        server.close()


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_a_device_is_refused():
    for reader in READERS:
        box = _within(lambda read=reader: read(Path("/dev/zero") if Path("/dev/zero").exists() else Path("/dev/null")))
        assert isinstance(box.get("error"), TranscriptNotAFile) and "character device" in str(box["error"])


def test_a_symlink_to_a_transcript_is_read(tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to(FIXTURES / "claude_session.jsonl")
    assert read_transcript(link).session_id == "2e192d99-9243-4a0a-a230-0503296cc3d4"


def test_permission_denied_is_unreadable(tmp_path, monkeypatch):
    path = tmp_path / "locked.jsonl"
    path.write_text("{}\n")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("rose.transcripts.reading._sys_open", denied)   # root ignores chmod 0
    with pytest.raises(TranscriptUnreadable, match="permission denied"):
        read_claude(path)


def test_binary_file_is_unreadable(tmp_path):
    path = tmp_path / "image.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 10)
    with pytest.raises(TranscriptUnreadable, match="binary"):
        read_transcript(path)
    with pytest.raises(TranscriptUnreadable, match="binary"):
        read_codex(path)


def test_text_that_is_not_jsonl_is_unreadable(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text("just some notes\nnothing in json here\n")
    with pytest.raises(TranscriptUnreadable, match="no JSON object lines"):
        read_claude(path)
    with pytest.raises(TranscriptUnreadable):
        read_transcript(path)


def test_json_of_another_shape_is_not_detected(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"event": "click", "x": 1}) + "\n")
    with pytest.raises(TranscriptUnreadable, match="not a Claude Code or Codex transcript"):
        read_transcript(path)


def test_empty_file_is_an_empty_conversation(tmp_path):
    claude = tmp_path / "5e55e55e-0000-4000-8000-000000000009.jsonl"
    claude.write_text("")
    conv = read_transcript(claude)
    assert conv.agent is Agent.CLAUDE and conv.messages == [] and conv.skipped == 0
    assert conv.session_id == "5e55e55e-0000-4000-8000-000000000009"
    codex = tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-000000000009.jsonl"
    codex.write_text("\n")
    assert read_transcript(codex).agent is Agent.CODEX


def test_a_lone_half_written_line_is_not_an_error(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"user","message":{"role":"us')
    conv = read_claude(path)
    assert conv.messages == [] and conv.skipped == 1 and conv.partial_last_line


def test_detection_and_explicit_agent():
    assert detect_agent(FIXTURES / "claude_session.jsonl") is Agent.CLAUDE
    assert detect_agent(FIXTURES / "codex_rollout.jsonl") is Agent.CODEX
    assert detect_agent(FIXTURES / "claude_rich.jsonl") is Agent.CLAUDE
    assert detect_agent(FIXTURES / "codex_rich.jsonl") is Agent.CODEX
    assert read_transcript(FIXTURES / "codex_rich.jsonl", agent="codex").agent is Agent.CODEX
    with pytest.raises(ValueError):
        read_transcript(FIXTURES / "codex_rich.jsonl", agent="gemini")


def test_invalid_utf8_line_is_skipped(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("before")
    w.close()
    with open(tmp_path / "s.jsonl", "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"\xff\xfe"}}\n')
    with open(tmp_path / "s.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"type": "user", "uuid": "z", "message": {"role": "user", "content": "after"}}) + "\n")
    conv = read_claude(tmp_path / "s.jsonl")
    assert [m.text for m in conv.messages] == ["before", "after"]
    assert conv.skipped == 1 and conv.skip_reasons == ["line 2: not UTF-8"]


def test_oversized_line_is_skipped_without_holding_it(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("before")
    w.tool("Read", {"file_path": "/big"}, "x" * 300_000)
    w.prompt("after")
    conv = read_claude(w.close(), max_line_bytes=100_000)
    assert [m.kind for m in conv.messages] == [Kind.PROMPT, Kind.TOOL_CALL, Kind.PROMPT]
    assert conv.skipped == 1 and "longer than 100000 bytes" in conv.skip_reasons[0]


def test_per_message_cap_is_configurable(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.tool("Bash", {"command": "yes"}, "y\n" * 5000)
    conv = read_claude(w.close(), max_chars=1000)
    result = conv.of_kind(Kind.TOOL_RESULT)[0]
    assert result.truncated and len(result.text) < 1100


def test_a_20_mb_transcript_is_read_in_bounded_memory(tmp_path):
    w = ClaudeWriter(tmp_path / "big.jsonl")
    chunk = "".join(f"{i:08d} build log line with some words in it\n" for i in range(4000))  # ~200 KB
    for i in range(110):
        w.prompt(f"step {i}: run the build again")
        w.tool("Bash", {"command": f"make build-{i}"}, chunk, error=i % 10 == 0)
        w.say(f"Step {i} done.")
    path = w.close()
    size = path.stat().st_size
    assert size > 20_000_000
    tracemalloc.start()
    try:
        conv = read_claude(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(conv.messages) == 440 and conv.skipped == 0
    assert all(len(m.text) < 20_100 for m in conv.messages)
    assert peak < size / 4, f"peak {peak} bytes for a {size} byte file"


def _mutate(value, rng):
    """value with some of its nested fields replaced by values of the wrong type."""
    junk = [None, 7, "text", [], {}, [1, "a"], {"type": 3}, True, 2.5]
    if isinstance(value, dict):
        return {k: (rng.choice(junk) if rng.random() < 0.2 else _mutate(v, rng)) for k, v in value.items()}
    if isinstance(value, list):
        return [rng.choice(junk) if rng.random() < 0.2 else _mutate(v, rng) for v in value]
    return value


@pytest.mark.parametrize("name", ["claude_rich.jsonl", "codex_rich.jsonl", "claude_session.jsonl",
                                  "codex_rollout.jsonl", "claude_outcome.jsonl", "codex_outcome.jsonl",
                                  "codex_outcome_old.jsonl"])
def test_lines_of_unexpected_shape_never_crash_a_read(tmp_path, name):
    import random

    rng = random.Random(name)
    records = []
    for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    reader = read_codex if name.startswith("codex") else read_claude
    for round_ in range(20):
        path = tmp_path / f"{round_}.jsonl"
        path.write_text("".join(json.dumps(_mutate(r, rng)) + "\n" for r in records), encoding="utf-8")
        conv = reader(path)
        assert all(isinstance(m.text, str) for m in conv.messages)
        assert all(reason.startswith("line ") for reason in conv.skip_reasons)
        # and nothing built on a conversation crashes on one either
        assert digest(conv, budget_tokens=500).tokens <= 600
        assert execution_outcome(conv).outcome in set(Outcome)
        got, offset = count_since(path, 0, agent=conv.agent)
        assert offset == path.stat().st_size and got.user_turns == counts(conv).user_turns


def test_a_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "claude_session.jsonl").read_bytes())
    conv = read_transcript(path)
    assert conv.skipped == 0 and conv.messages[0].text == "please say hi"


def test_a_lone_surrogate_escape_anywhere_in_a_line_becomes_a_replacement_character(tmp_path: Path) -> None:
    """Valid JSON, invalid text: "\\ud800" in a prompt, in a tool's output, or inside a tool call's own JSON
    arguments (JSON in JSON) would fail the first write of a lesson or an episode made from it."""
    from rose.transcripts import read_transcript

    claude = tmp_path / "c.jsonl"
    claude.write_text("\n".join([
        '{"type":"user","sessionId":"s1","uuid":"u1","timestamp":"2026-12-03T10:00:00Z","cwd":"/w\\udfff",'
        '"message":{"role":"user","content":"always pin the redis ttl \\ud800 in settings"}}',
        '{"type":"assistant","sessionId":"s1","uuid":"u2","timestamp":"2026-12-03T10:00:01Z","message":{"role":'
        '"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo \\udc00"}}]}}',
        '{"type":"user","sessionId":"s1","uuid":"u3","timestamp":"2026-12-03T10:00:02Z","message":{"role":"user",'
        '"content":[{"type":"tool_result","tool_use_id":"t1","content":"out \\ud83d\\ude00 and \\udbff"}]}}']) + "\n",
        encoding="utf-8")
    codex = tmp_path / "rollout-2026-12-03T10-00-00-0199c0de-0000-7000-8000-000000000009.jsonl"
    codex.write_text("\n".join([
        '{"timestamp":"2026-12-03T10:00:00Z","type":"session_meta","payload":{"id":"0199c0de-0000-7000-8000-'
        '000000000009","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.50.0"}}',
        '{"timestamp":"2026-12-03T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":'
        '"shell","arguments":"{\\"command\\":[\\"echo\\",\\"\\\\ud800\\"]}","call_id":"c1"}}',
        '{"timestamp":"2026-12-03T10:00:02Z","type":"response_item","payload":{"type":"function_call_output",'
        '"call_id":"c1","output":"{\\"output\\":\\"x \\\\udc01\\",\\"metadata\\":{\\"exit_code\\":0}}"}}']) + "\n",
        encoding="utf-8")
    for path in (claude, codex):
        conv = read_transcript(path)
        texts = [m.text for m in conv.messages]
        assert len(texts) >= 2 and conv.skipped == 0, (path.name, texts, conv.skip_reasons)
        for text in texts:
            text.encode("utf-8")   # raises on a surrogate
        assert any("\ufffd" in t for t in texts), texts
    assert "😀" in "".join(m.text for m in read_transcript(claude).messages)   # a pair is one character
