"""Transcripts of Claude Code and Codex sessions, read into one normalized conversation, and the digest of a
session that the reflection and attribution judges read.

    conv = read_transcript(path)                 # or read_claude(path) / read_codex(path)
    conv.messages[4].kind, conv.handle(4)        # Kind.PROMPT, "session://<id>/message/4"
    conv = redacted(conv)                        # every text redacted once (what the learner works from)
    d = digest(conv, budget_tokens=3000)         # d.text: redacted, ~3k tokens, entries "[n] label: text"
    user_turns(conv)                             # [(n, text)] of the user's own words
    quote_in_user_turns(conv, "always use uv")   # n of the user turn holding that quote (full text), or None
    counts(conv)                                 # Counts(user_turns, assistant_turns, tool_calls, ...)
    final_summary(conv)                          # the agent's last text, redacted, or None
    task_prompt(conv)                            # the first typed prompt, redacted, or None
    execution_outcome(conv)                      # ExecutionOutcome(outcome verified|failed|unknown, evidence,
                                                 #   handles, check, reason), from the checks that ran
    counts, offset = count_since(path, offset)   # TurnCounts of the lines after offset, for the Stop hook
"""
from __future__ import annotations

from rose.transcripts.claude import read_claude
from rose.transcripts.codex import read_codex
from rose.transcripts.detect import detect_agent, read_transcript
from rose.transcripts.digest import Digest, digest
from rose.transcripts.errors import (TranscriptError, TranscriptNotAFile, TranscriptNotFound,
                                     TranscriptUnreadable)
from rose.transcripts.incremental import TurnCounts, count_since
from rose.transcripts.model import Agent, Conversation, Counts, Kind, Message, Role, ToolOutcome
from rose.transcripts.outcome import ExecutionOutcome, execution_outcome
from rose.transcripts.queries import (counts, final_summary, normalize_quote, quote_in_user_turns, task_prompt,
                                     user_turns)
from rose.transcripts.scrub import redacted

__all__ = [
    "Agent", "Conversation", "Counts", "Digest", "ExecutionOutcome", "Kind", "Message", "Role", "ToolOutcome",
    "TranscriptError", "TranscriptNotAFile", "TranscriptNotFound", "TranscriptUnreadable", "TurnCounts",
    "count_since", "counts", "detect_agent", "digest", "execution_outcome", "final_summary", "normalize_quote",
    "quote_in_user_turns", "read_claude", "read_codex", "read_transcript", "redacted", "task_prompt", "user_turns",
]
