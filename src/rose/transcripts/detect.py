"""Which agent wrote a transcript, from its first lines (and, for an empty file, its name)."""
from __future__ import annotations

from pathlib import Path

from typing import Any

from rose.transcripts.claude import ClaudeReader, new_claude_conversation, read_claude
from rose.transcripts.codex import CodexReader, new_codex_conversation, read_codex
from rose.transcripts.errors import TranscriptUnreadable
from rose.transcripts.model import Agent, Conversation
from rose.transcripts.reading import MAX_CHARS, MAX_LINE_BYTES, Builder, iter_records

_SNIFF_RECORDS = 50
_CODEX_LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted",
                               "world_state", "token_usage_record"})
_CLAUDE_LINE_TYPES = frozenset({"user", "assistant", "attachment", "system", "summary", "queue-operation",
                                "last-prompt", "api-request", "api-request-blob", "api-request-shape",
                                "file-history-snapshot", "cost-state", "tools-used", "atis-latch", "mode"})


def detect_agent(path: str | Path) -> Agent:
    """CLAUDE or CODEX, from the shape of the first lines. Raises TranscriptUnreadable when it is neither."""
    path = Path(path)
    scratch = Conversation(agent=Agent.CLAUDE, session_id="", path=path)
    records = iter_records(path, scratch)  # a generator: closed below, whatever the loop does
    seen = 0
    try:
        for _, record in records:
            seen += 1
            agent = agent_of_record(record)
            if agent is not None:
                return agent
            if seen >= _SNIFF_RECORDS:
                break
    finally:
        records.close()
    if seen == 0 and scratch.skipped <= 1:
        # empty (or one half-written line): a session that has only just started; the name decides
        return agent_of_name(path)
    raise TranscriptUnreadable(path, "not a Claude Code or Codex transcript (unrecognised line shapes)")


def agent_of_record(record: dict[str, Any]) -> Agent | None:
    """The agent whose line shape this record has, or None when the record does not tell."""
    kind = record.get("type")
    if "payload" in record and kind in _CODEX_LINE_TYPES:
        return Agent.CODEX
    if kind in _CLAUDE_LINE_TYPES or "sessionId" in record:
        return Agent.CLAUDE
    return None


def agent_of_name(path: Path) -> Agent:
    return Agent.CODEX if path.name.startswith("rollout-") else Agent.CLAUDE


def new_conversation(path: Path, agent: Agent) -> Conversation:
    """An empty conversation of the agent's kind, named as its reader names it."""
    return new_codex_conversation(path) if agent is Agent.CODEX else new_claude_conversation(path)


def new_reader(agent: Agent, builder: Builder) -> ClaudeReader | CodexReader:
    """The agent's reader, feeding messages to builder's conversation (records are fed in file order)."""
    return CodexReader(builder) if agent is Agent.CODEX else ClaudeReader(builder)


def read_transcript(path: str | Path, agent: Agent | str | None = None, *, max_chars: int = MAX_CHARS,
                    max_line_bytes: int = MAX_LINE_BYTES) -> Conversation:
    """Read a transcript of either agent; `agent` (claude|codex) skips detection."""
    path = Path(path)
    which = Agent(agent) if agent is not None else detect_agent(path)
    reader = read_codex if which is Agent.CODEX else read_claude
    return reader(path, max_chars=max_chars, max_line_bytes=max_line_bytes)
