"""count_since: the Stop hook's counter, through the same readers, bounded and incremental."""
from __future__ import annotations

import json

import pytest

from rose.transcripts import (Agent, TranscriptNotFound, TurnCounts, count_since, counts, read_codex,
                              read_transcript)
from rose.transcripts.incremental import LOOKBACK_BYTES

from .build import FIXTURES, ClaudeWriter, CodexWriter

NAMES = ["claude_rich.jsonl", "codex_rich.jsonl", "claude_session.jsonl", "codex_rollout.jsonl"]


def full(path) -> TurnCounts:
    c = counts(read_transcript(path))
    return TurnCounts(tool_calls=c.tool_calls, failures=c.failed_tool_calls, user_turns=c.user_turns)


def drain(path, offset=0, max_bytes=8 * 1024 * 1024, agent=None) -> tuple[TurnCounts, int, int]:
    """Sum of count_since over calls until the cursor stops moving: (counts, final offset, calls)."""
    total = TurnCounts()
    calls = 0
    while True:
        got, new = count_since(path, offset, max_bytes=max_bytes, agent=agent)
        calls += 1
        assert new - offset <= max_bytes                       # never more than max_bytes of new lines a call
        total = total + got
        if new == offset:
            return total, offset, calls
        offset = new


def same(a: TurnCounts, b: TurnCounts) -> bool:
    return (a.tool_calls, a.failures, a.user_turns) == (b.tool_calls, b.failures, b.user_turns)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("max_bytes", [70_000, 150_000, 8 * 1024 * 1024])
def test_the_sum_of_calls_agrees_with_the_full_reader(name, max_bytes):
    path = FIXTURES / name
    total, _, calls = drain(path, max_bytes=max_bytes)
    assert same(total, full(path)), (total, full(path))
    assert calls >= 2


def test_the_fixtures_counts_are_what_the_readers_say():
    # the old Stop-hook parser counted codex_rich as 0 failures and 1 turn, claude_session as 3 turns
    assert same(drain(FIXTURES / "codex_rich.jsonl")[0], TurnCounts(tool_calls=8, failures=3, user_turns=3))
    assert same(drain(FIXTURES / "claude_session.jsonl")[0], TurnCounts(tool_calls=1, failures=0, user_turns=1))
    assert same(drain(FIXTURES / "claude_rich.jsonl")[0], TurnCounts(tool_calls=7, failures=3, user_turns=4))


@pytest.mark.parametrize("name", NAMES)
def test_a_cursor_at_every_line_boundary_still_agrees(tmp_path, name):
    raw = (FIXTURES / name).read_bytes()
    ends = [i + 1 for i, b in enumerate(raw) if b == 0x0A]
    want = full(FIXTURES / name)
    for cut in ends[:-1]:
        first, offset = count_since(FIXTURES / name, 0, max_bytes=cut)
        assert offset == cut                                    # stops at the last whole line in the window
        rest, _, _ = drain(FIXTURES / name, offset)
        assert same(first + rest, want), (cut, first, rest)


def test_a_growing_file_is_counted_once_and_half_lines_wait(tmp_path):
    lines = (FIXTURES / "codex_rich.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "rollout-2026-11-30T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    path.write_bytes(b"")
    total, offset = TurnCounts(), 0
    for line in lines:
        half = len(line) // 2
        with open(path, "ab") as f:
            f.write(line[:half])                                # the CLI is mid-write
        got, offset = count_since(path, offset)
        assert offset <= path.stat().st_size - half             # the half-written line is never consumed
        total = total + got
        with open(path, "ab") as f:
            f.write(line[half:])
        got, offset = count_since(path, offset)
        total = total + got
    assert same(total, full(FIXTURES / "codex_rich.jsonl"))


def test_a_prompt_and_its_event_across_the_cursor_count_once(tmp_path):
    raw = (FIXTURES / "codex_rich.jsonl").read_bytes()
    lines = raw.splitlines(keepends=True)
    cut = sum(len(line) for line in lines[:6])                 # after the response item, before its event
    assert b'"user_message"' in lines[6]
    first, offset = count_since(FIXTURES / "codex_rich.jsonl", 0, max_bytes=cut)
    rest, _, _ = drain(FIXTURES / "codex_rich.jsonl", offset)
    assert first.user_turns == 1 and first.user_turns + rest.user_turns == 3


def test_an_exit_event_after_its_output_across_the_cursor_counts_the_failure(tmp_path):
    path = tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-00000000abcd.jsonl"
    lines = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c2",
                                              "arguments": "{\"command\": [\"false\"]}"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2", "output": "boom"}},
        {"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c2", "exit_code": 3}},
    ]
    data = [json.dumps(x) + "\n" for x in lines]
    path.write_text("".join(data), encoding="utf-8")
    first, offset = count_since(path, 0, max_bytes=len("".join(data[:3])))
    second, _ = count_since(path, offset)
    assert (first.failures, second.failures) == (0, 1)
    assert first.failures + second.failures == counts(read_codex(path)).failed_tool_calls == 1


def test_a_file_that_shrank_restarts_at_zero(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes((FIXTURES / "claude_rich.jsonl").read_bytes())
    _, offset = count_since(path, 0)
    path.write_bytes((FIXTURES / "claude_session.jsonl").read_bytes()[:5000])
    got, new = count_since(path, offset)
    assert new <= 5000 and same(got + drain(path, new)[0], full(path))


def test_nothing_new_is_nothing_counted(tmp_path):
    path = FIXTURES / "claude_session.jsonl"
    size = path.stat().st_size
    assert count_since(path, size) == (TurnCounts(), size)
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert count_since(empty, 0) == (TurnCounts(), 0)


def test_a_line_longer_than_the_window_is_skipped_and_the_cursor_moves_on(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("before")
    w.tool("Read", {"file_path": "/big"}, "x" * 300_000, error=True)   # one 300 KB line
    w.prompt("after")
    w.tool("Bash", {"command": "make"}, "boom", error=True)
    path = w.close()
    total, offset, calls = drain(path, max_bytes=100_000)
    assert offset == path.stat().st_size and calls < 10
    # the long line (the failed Read's result) is skipped; everything else is counted
    assert (total.user_turns, total.tool_calls, total.failures, total.skipped) == (2, 2, 1, 1)


def test_an_offset_inside_a_line_skips_to_the_next_one(tmp_path):
    path = FIXTURES / "claude_rich.jsonl"
    raw = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(raw) if b == 0x0A]
    got, offset = count_since(path, ends[10] + 7)
    assert offset == ends[-1] and got.user_turns <= full(path).user_turns


def test_sidechain_lines_far_into_a_session_file_are_not_counted(tmp_path):
    w = ClaudeWriter(tmp_path / "5e55e55e-0000-4000-8000-000000000001.jsonl")
    w.prompt("find the callers")
    w.say("x" * (LOOKBACK_BYTES + 10_000))                      # push the start out of the lookback window
    path = w.close()
    _, offset = count_since(path, 0)
    side = [line for line in (FIXTURES / "claude_rich.jsonl").read_text(encoding="utf-8").splitlines()
            if '"isSidechain":true' in line]
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(side) + "\n")
    got, _ = count_since(path, offset)
    assert same(got, TurnCounts()) and same(full(path), TurnCounts(user_turns=1))


def test_a_subagent_file_far_from_its_start_is_counted_as_one(tmp_path):
    side = [line for line in (FIXTURES / "claude_rich.jsonl").read_text(encoding="utf-8").splitlines()
            if '"isSidechain":true' in line]
    path = tmp_path / "sub.jsonl"                               # not named agent-*: its first line tells
    filler = json.loads(side[-1])
    filler["message"]["content"][0]["text"] = "y" * (LOOKBACK_BYTES + 10_000)
    filler["uuid"] = "filler"
    path.write_text(side[0] + "\n" + json.dumps(filler) + "\n", encoding="utf-8")
    _, offset = count_since(path, 0)
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(side[1:]) + "\n")
    got, _ = count_since(path, offset)
    assert got.tool_calls == 1 and got.user_turns == 0


@pytest.mark.parametrize("writer", ["claude", "codex"])
def test_a_long_generated_session_agrees_in_small_windows(tmp_path, writer):
    if writer == "claude":
        w = ClaudeWriter(tmp_path / "s.jsonl")
        for i in range(60):
            w.prompt(f"step {i}")
            w.thinking(f"thinking {i}")
            w.tool("Bash", {"command": f"make {i}"}, "out " * (i * 10), error=i % 7 == 0)
            w.say(f"done {i}")
    else:
        w = CodexWriter(tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-000000000001.jsonl")
        for i in range(60):
            w.prompt(f"step {i}")
            w.thinking(f"thinking {i}")
            w.tool(f"make {i}", "out " * (i * 10), exit_code=1 if i % 7 == 0 else 0)
            w.say(f"done {i}")
    path = w.close()
    want = full(path)
    assert want.failures == 9 and want.user_turns == 60
    for max_bytes in (4_000, 9_000, 50_000):
        assert same(drain(path, max_bytes=max_bytes)[0], want)
    assert same(drain(path, agent=Agent(writer))[0], want)


def test_missing_and_bad_files_are_typed_errors(tmp_path):
    with pytest.raises(TranscriptNotFound):
        count_since(tmp_path / "nope.jsonl", 0)
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n{\"also\": \"not a transcript\"}\n[1, 2]\n")
    got, offset = count_since(junk, 0)
    assert same(got, TurnCounts()) and got.skipped == 2 and offset == junk.stat().st_size


def test_a_huge_file_is_counted_in_bounded_memory(tmp_path):
    import tracemalloc

    w = ClaudeWriter(tmp_path / "big.jsonl")
    chunk = "".join(f"{i:08d} build log line with some words in it\n" for i in range(4000))  # ~200 KB
    for i in range(110):
        w.prompt(f"step {i}")
        w.tool("Bash", {"command": f"make build-{i}"}, chunk, error=i % 10 == 0)
    path = w.close()
    size = path.stat().st_size
    assert size > 20_000_000
    tracemalloc.start()
    try:
        total, offset, calls = drain(path, max_bytes=1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert offset == size and same(total, TurnCounts(tool_calls=110, failures=11, user_turns=110))
    assert calls > 20 and peak < 8 * 1024 * 1024, f"peak {peak} bytes"
