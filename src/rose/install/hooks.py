"""Which hooks rose wires, with which timeout, and why (the table docs/integration.md repeats).

A hook's timeout is the agent's hard kill. rose's own deadlines sit inside it, so a slow recall ends in rose's
fail-open notice rather than in the agent killing the process and showing a hook error.
"""
from __future__ import annotations

from rose.hooks import (CLAUDE_SESSION_END_TIMEOUT_S, CODEX_SESSION_END_TIMEOUT_S, PRE_COMPACT_TIMEOUT_S,
                        PROMPT_TIMEOUT_S, STOP_TIMEOUT_S)
from rose.install.model import Agent, HookName, HookSpec


# No trailing ellipsis: Claude Code adds its own "…" to a status message (seen with 2.1.332).
RECALL_STATUS = "⋯ ROSE · recalling lessons"


def _specs(session_end_s: int) -> tuple[HookSpec, ...]:
    return (
        HookSpec(HookName.USER_PROMPT_SUBMIT, PROMPT_TIMEOUT_S,
                 "recall; one deadline (recall.deadline_s, 8 s) covers search, selectors and fallbacks, so rose "
                 "answers (or fails open) before the kill; normally ~0.1-0.5 s", RECALL_STATUS),
        HookSpec(HookName.PRE_COMPACT, PRE_COMPACT_TIMEOUT_S,
                 "clears the served record and queues the learner for the turns compaction will discard",
                 "⋯ ROSE · keeping what this session taught"),
        HookSpec(HookName.STOP, STOP_TIMEOUT_S,
                 "schedules reflection in a detached process and returns at once; Stop blocks the user meanwhile",
                 "⋯ ROSE · noting this turn"),
        HookSpec(HookName.SESSION_END, session_end_s,
                 "starts the detached learner and returns; the learner outlives the hook",
                 "⋯ ROSE · handing the session to the learner"),
    )


HOOKS: dict[Agent, tuple[HookSpec, ...]] = {
    Agent.CLAUDE: _specs(CLAUDE_SESSION_END_TIMEOUT_S),
    Agent.CODEX: _specs(CODEX_SESSION_END_TIMEOUT_S),
}

EVENTS = tuple(spec.event.value for spec in HOOKS[Agent.CLAUDE])
