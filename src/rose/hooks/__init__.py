"""The hook side of rose: each agent's payloads in, one fail-open command (`rose hook <agent> <event>`) out.

The timeouts rose installs (the agent's hard kill) and the budgets rose keeps inside them live here, in one place:
`rose install` writes the first, the hook entry enforces the second, so rose always answers (or fails open)
before the agent kills it.
"""

MAX_PAYLOAD_BYTES = 8 * 1024 * 1024   # a prompt with a pasted log is big; a runaway stream is not read whole

# event -> (timeout rose installs, budget rose keeps inside it), in seconds
PROMPT_TIMEOUT_S = 12        # UserPromptSubmit: recall.deadline_s (8 s) + interpreter start + margin
PROMPT_MARGIN_S = 3.0        # recall.deadline_s is capped at PROMPT_TIMEOUT_S minus this
PRE_COMPACT_TIMEOUT_S = 10   # clears one small file
STOP_TIMEOUT_S = 10          # counts new transcript lines and queues reflection; Stop blocks the user meanwhile
CLAUDE_SESSION_END_TIMEOUT_S = 5  # queues the learner and returns. Claude kills SessionEnd hooks with no timeout of
# their own after ~1.5 s; with one it waits up to that long at exit, so keep it short
CODEX_SESSION_END_TIMEOUT_S = 3   # Codex clamps a SessionEnd timeout to 3 s (and hashes the clamped value)
BUDGET_S = {                  # the in-process watchdog ends a hook that overruns these (it prints a fail-open notice)
    "UserPromptSubmit": PROMPT_TIMEOUT_S - 1.5,
    "PreCompact": 5.0,
    "Stop": 6.0,
    "SessionEnd": 1.2,        # under Claude Code's ~1.5 s kill
    "PreToolUse": 2.0,        # generated guardrails (rose.evolve.wiring installs a 5 s timeout): every tool call waits
}
