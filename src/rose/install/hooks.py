"""Which hooks rose wires, with which timeout, and why (the table docs/integration.md repeats).

A hook's timeout is the agent's hard kill. rose's own deadlines sit inside it, so a slow recall ends in rose's
fail-open notice rather than in the agent killing the process and showing a hook error.
"""
from __future__ import annotations

from rose.install.model import Agent, HookName, HookSpec

RECALL_TIMEOUT_S = 30      # recall.selector_timeout_s (20 s) + interpreter start + margin; normally ~0.1-0.5 s
PRE_COMPACT_TIMEOUT_S = 10  # clears one small file
STOP_TIMEOUT_S = 10         # schedules reflection in a detached process and returns; Stop blocks the user meanwhile
CLAUDE_SESSION_END_TIMEOUT_S = 5  # spawns the detached learner and returns. Claude kills SessionEnd hooks with no
# timeout of their own after ~1.5 s; with one it waits up to that long at exit, so keep it short
CODEX_SESSION_END_TIMEOUT_S = 3   # Codex clamps a SessionEnd timeout to 3 s (and hashes the clamped value)


def _specs(session_end_s: int) -> tuple[HookSpec, ...]:
    return (
        HookSpec(HookName.USER_PROMPT_SUBMIT, RECALL_TIMEOUT_S,
                 "recall; rose's own selector deadline is 20 s, so rose answers (or fails open) before the kill"),
        HookSpec(HookName.PRE_COMPACT, PRE_COMPACT_TIMEOUT_S, "clears the served record: one small file"),
        HookSpec(HookName.STOP, STOP_TIMEOUT_S,
                 "schedules reflection in a detached process and returns at once; Stop blocks the user meanwhile"),
        HookSpec(HookName.SESSION_END, session_end_s,
                 "starts the detached learner and returns; the learner outlives the hook"),
    )


HOOKS: dict[Agent, tuple[HookSpec, ...]] = {
    Agent.CLAUDE: _specs(CLAUDE_SESSION_END_TIMEOUT_S),
    Agent.CODEX: _specs(CODEX_SESSION_END_TIMEOUT_S),
}

EVENTS = tuple(spec.event.value for spec in HOOKS[Agent.CLAUDE])
