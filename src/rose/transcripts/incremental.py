"""Counting what a live session did since the last look, for the Stop hook: bounded, incremental, never blocking.

    counts, offset = count_since(transcript_path, offset)    # offset: 0 the first time, then what it returned

`count_since` reads only the bytes after `offset` (at most `max_bytes` of them), through the same readers as
`read_transcript`, so a typed prompt, a tool call and a failed tool call mean here exactly what they mean in
`counts(read_transcript(path))`: summed over successive calls, the counts equal the full reader's.

* Only whole lines are counted: a last line still being written is left for the next call (the offset returned
  stops before it).
* A file smaller than `offset` was rewritten or rotated: counting restarts at 0.
* Up to `LOOKBACK_BYTES` before `offset` are re-read without being counted, so that what pairs across a cursor
  (a Codex prompt's response item and its `user_message` event, an exit-code event and its output, a Claude line
  written twice) is still paired; the file's first lines are read for the agent and whether it is a sub-agent's.
* A line longer than `max_bytes` is skipped (counted in `skipped`) across as many calls as it takes.
* Only a regular file is opened, without a blocking open (see `reading.open_transcript`); anything else is a typed
  TranscriptError, as is a missing, unreadable or binary file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from rose.transcripts.detect import agent_of_name, agent_of_record, new_conversation, new_reader
from rose.transcripts.model import Agent, Conversation, Kind
from rose.transcripts.reading import Builder, decode_record, feed_all, open_transcript

MAX_SCAN_BYTES = 8 * 1024 * 1024   # new bytes read by one call; the rest is counted by the next
LOOKBACK_BYTES = 256 * 1024        # re-read before the cursor to pair what straddles it
HEAD_BYTES = 256 * 1024            # read at the start of the file to learn its agent (and Claude: sub-agent or not)
_COUNT_CHARS = 2000                # message text kept while counting (classification reads the full text first)


@dataclass(frozen=True)
class TurnCounts:
    """What the new lines hold: typed prompts, tool calls, failed tool calls, and lines that could not be read."""

    tool_calls: int = 0
    failures: int = 0
    user_turns: int = 0
    skipped: int = 0

    def __add__(self, other: TurnCounts) -> TurnCounts:
        return TurnCounts(self.tool_calls + other.tool_calls, self.failures + other.failures,
                          self.user_turns + other.user_turns, self.skipped + other.skipped)


def count_since(path: str | Path, offset: int = 0, *, agent: Agent | str | None = None,
                max_bytes: int = MAX_SCAN_BYTES) -> tuple[TurnCounts, int]:
    """(counts of the whole lines after `offset`, the offset to pass next time). See the module docstring.

    Raises TranscriptNotFound, TranscriptNotAFile (a FIFO, directory, device or socket) or TranscriptUnreadable."""
    path = Path(path)
    max_bytes = max(1, int(max_bytes))
    with open_transcript(path) as f:
        size = os.fstat(f.fileno()).st_size
        offset = int(offset)
        if offset < 0 or offset > size:
            offset = 0   # rewritten or rotated: start over
        if offset == size:
            return TurnCounts(), offset
        start = max(0, offset - max(1, LOOKBACK_BYTES))   # at least the byte that says "line start"
        f.seek(start)
        before = f.read(offset - start)
        new = f.read(max_bytes)
        head_agent, head_sidechain = _head(f, path, agent) if start > 0 else (None, None)
    consumed = 0
    if offset > 0 and not before.endswith(b"\n"):
        # the cursor is inside a line (the rest of one longer than max_bytes): that line is not counted
        cut = new.find(b"\n")
        if cut < 0:
            return TurnCounts(), offset + (len(new) if len(new) == max_bytes else 0)
        consumed = cut + 1   # (that line was counted as skipped when it was first found too long)
    end = new.rfind(b"\n") + 1
    if end <= consumed:
        if len(new) == max_bytes and consumed == 0:
            return TurnCounts(skipped=1), offset + len(new)   # one line longer than the window: skip it
        return TurnCounts(), offset + consumed
    warm_lines = _lines(before, drop_first=start > 0)
    new_lines = _lines(new[consumed:end], drop_first=False)
    which = Agent(agent) if agent is not None else head_agent
    return _count(path, which, head_sidechain, warm_lines, new_lines, 1 if offset == 0 else 0), offset + end


def _lines(data: bytes, drop_first: bool) -> list[bytes]:
    """The whole lines of data (each with its newline); the first is dropped when data starts mid-line."""
    if drop_first:
        cut = data.find(b"\n")
        data = data[cut + 1:] if cut >= 0 else b""
    last = data.rfind(b"\n")
    data = data[:last + 1]   # bytes after the last newline belong to the line the cursor is in
    return data.splitlines(keepends=True)


def _records(lines: list[bytes], conv: Conversation, first_line_no: int) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for i, raw in enumerate(lines):
        line_no = first_line_no + i if first_line_no else 0
        obj = decode_record(raw, line_no, conv)
        if obj is not None:
            out.append((line_no or i + 1, obj))
    return out


def _count(path: Path, agent: Agent | None, head_sidechain: bool | None, warm_lines: list[bytes],
           new_lines: list[bytes], first_line_no: int) -> TurnCounts:
    scratch = new_conversation(path, agent or Agent.CLAUDE)
    warm = _records(warm_lines, scratch, 0)
    fresh_conv = new_conversation(path, agent or Agent.CLAUDE)
    fresh = _records(new_lines, fresh_conv, first_line_no)
    if agent is None:
        agent = next((a for _, r in warm + fresh if (a := agent_of_record(r)) is not None), agent_of_name(path))
    conv = new_conversation(path, agent)
    reader = new_reader(agent, Builder(conv, _COUNT_CHARS, _COUNT_CHARS))
    if head_sidechain is not None and hasattr(reader, "subagent_file") and reader.subagent_file is None:
        reader.subagent_file = head_sidechain
    _feed(reader, warm, conv)
    mark = len(conv.messages)
    ok_before = {m.n for m in conv.messages if m.kind is Kind.TOOL_RESULT and not m.failed}
    conv.skipped = 0
    _feed(reader, fresh, conv)
    new_messages = conv.messages[mark:]
    flipped = sum(1 for n in ok_before if conv.messages[n].failed)   # an exit event after its output
    return TurnCounts(
        tool_calls=sum(1 for m in new_messages if m.kind is Kind.TOOL_CALL),
        failures=sum(1 for m in new_messages if m.kind is Kind.TOOL_RESULT and m.failed) + flipped,
        user_turns=sum(1 for m in new_messages if m.kind is Kind.PROMPT),
        skipped=conv.skipped + fresh_conv.skipped)


def _feed(reader: Any, records: list[tuple[int, dict[str, Any]]], conv: Conversation) -> None:
    feed_all(iter(records), reader.feed, conv)


def _head(f: BinaryIO, path: Path, agent: Agent | str | None) -> tuple[Agent | None, bool | None]:
    """The agent (unless given) and, for Claude, whether the first conversation line is a sidechain line, from
    the first HEAD_BYTES of the file."""
    want_agent = agent is None
    which = None if want_agent else Agent(agent)
    sidechain: bool | None = None
    scratch = new_conversation(path, Agent.CLAUDE)
    f.seek(0)
    left = HEAD_BYTES
    line_no = 0
    while left > 0:
        raw = f.readline(left)
        if not raw or not raw.endswith(b"\n"):
            break
        left -= len(raw)
        line_no += 1
        rec = decode_record(raw, line_no, scratch)
        if rec is None:
            continue
        if which is None:
            which = agent_of_record(rec)
        if which is Agent.CODEX:
            return which, None
        if rec.get("type") in ("user", "assistant", "attachment", "system"):
            sidechain = rec.get("isSidechain") is True
        if which is not None and sidechain is not None:
            break
    return which, sidechain
