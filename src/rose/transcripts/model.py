"""One normalized conversation, whichever agent wrote the transcript.

A transcript becomes a flat, chronological list of `Message`s. Each message has one `Kind`; its index `n` is its
position in that list and never changes when the file grows, so `session://<session>/message/<n>` stays a valid
evidence handle across re-reads of a live session.

Who said what is the point of the whole model:

    role       kind             what it is                                       user's own words?
    user       PROMPT           a prompt the user typed                          yes
    user       COMMAND          a slash command or shell escape the user typed   yes  (e.g. "/compact keep X")
    user       SYNTHETIC        made by the harness in the user's name           no   (<task-notification>,
                                                                                       command output, interrupts)
    assistant  TEXT             what the agent said                              no
    assistant  REASONING        the agent's visible thinking / reasoning summary no
    assistant  TOOL_CALL        a tool call: tool_name, text = its input          no
    tool       TOOL_RESULT      a tool's output: outcome, exit_code              no   (Claude stores these in
                                                                                       `user` lines)
    system     INJECTED         context added by hooks or the harness            no   (additionalContext,
                                                                                       AGENTS.md, <rose-lessons>)
    system     COMPACTION       a compaction boundary; text = its summary        no
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from rose.model import Agent  # re-exported: the agents rose runs inside


class Role(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Kind(str, Enum):
    PROMPT = "prompt"
    COMMAND = "command"
    SYNTHETIC = "synthetic"
    TEXT = "text"
    REASONING = "reasoning"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    INJECTED = "injected"
    COMPACTION = "compaction"


USER_WORDS = frozenset({Kind.PROMPT, Kind.COMMAND})
SYSTEM_MADE = frozenset({Kind.SYNTHETIC, Kind.INJECTED, Kind.COMPACTION})   # nobody in the session said these

ROLE_OF: dict[Kind, Role] = {
    Kind.PROMPT: Role.USER,
    Kind.COMMAND: Role.USER,
    Kind.SYNTHETIC: Role.USER,
    Kind.TEXT: Role.ASSISTANT,
    Kind.REASONING: Role.ASSISTANT,
    Kind.TOOL_CALL: Role.ASSISTANT,
    Kind.TOOL_RESULT: Role.TOOL,
    Kind.INJECTED: Role.SYSTEM,
    Kind.COMPACTION: Role.SYSTEM,
}


class ToolOutcome(str, Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    UNKNOWN = "unknown"   # no verdict in the transcript (still running, no output recorded)


@dataclass
class Message:
    n: int
    kind: Kind
    text: str
    timestamp: str | None = None
    tool_name: str | None = None        # TOOL_CALL and TOOL_RESULT
    call_id: str | None = None          # links a TOOL_RESULT to its TOOL_CALL
    outcome: ToolOutcome | None = None  # TOOL_RESULT only
    exit_code: int | None = None        # TOOL_RESULT, when the transcript records one
    response_id: str | None = None      # the assistant API message this block came from, when known
    truncated: bool = False             # text was clipped to the reader's per-message cap

    @property
    def role(self) -> Role:
        return ROLE_OF[self.kind]

    @property
    def failed(self) -> bool:
        return self.outcome is ToolOutcome.FAILED

    @property
    def is_user_words(self) -> bool:
        return self.kind in USER_WORDS

    @property
    def synthetic(self) -> bool:
        """Made by the harness (synthetic prompts, injected context, compaction summaries), not said by anyone."""
        return self.kind in SYSTEM_MADE


@dataclass
class Conversation:
    agent: Agent
    session_id: str
    path: Path
    cwd: str | None = None
    version: str | None = None              # the CLI version that wrote it
    messages: list[Message] = field(default_factory=list)
    skipped: int = 0                         # lines that could not be read (malformed, undecodable, oversized)
    skip_reasons: list[str] = field(default_factory=list)  # the first few, "line 12: not JSON"
    partial_last_line: bool = False          # the file ended mid-line (a live session being written)
    subagent: bool = False                   # the whole file is a sub-agent's own transcript
    agent_id: str | None = None              # a Claude sub-agent's id (its file agent-<id>.jsonl); session_id is
                                             # then the parent session's
    redacted: bool = False                   # every message's text went through the redactor (`redacted()`)

    def handle(self, n: int) -> str:
        """The evidence handle of message n: session://<session>/message/<n>."""
        return f"session://{self.session_id}/message/{n}"

    def of_kind(self, *kinds: Kind) -> list[Message]:
        return [m for m in self.messages if m.kind in kinds]

    def __len__(self) -> int:
        return len(self.messages)


@dataclass(frozen=True)
class Counts:
    """Structural counts of a conversation: the reflection scheduler's occasion, no judgement involved."""

    user_turns: int          # typed prompts (commands and synthetic prompts excluded)
    assistant_turns: int     # distinct assistant responses
    tool_calls: int
    failed_tool_calls: int
    compactions: int
    tool_results: int = 0    # tool outputs recorded (a call without one is still running or was lost)
    tokens: int = 0          # estimated tokens of what was said and output (system-made text left out),
                             # each message as clipped by the reader
