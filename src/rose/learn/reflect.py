"""Stage 2, reflection scheduling, on Stop: was this turn substantial enough to be worth a thought?

The occasion is structural, never "something failed": tool calls since the last reflection
(`nudge_after_tool_calls`), turns (`nudge_after_turns`) or failed tool calls (`min_surprises`), subject to
`nudge_cooldown_s`, which doubles for every empty reflection past `nudge_backoff_after` in a row.

    background  queue a detached reflection over the transcript digest
    fork        the same, but the judge calls fork the live session (it sees everything, at ~0.1x its tokens)
    block       ask the agent itself to reflect, once (honours stop_hook_active, or the Stop hook loops forever)
    off         nothing until the session ends

The counting reads only the transcript lines written since the last Stop (a byte cursor), so a Stop hook costs
the same in the first turn and the five-hundredth; it uses the transcript readers' own rules (rose.transcripts
count_since), so both agents' failures and prompts are counted as the learner reads them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.config import ReflectionMode, ReflectionSettings

if TYPE_CHECKING:
    from rose.store.sessions import Reflection
    from rose.transcripts.incremental import TurnCounts

MAX_SCAN_BYTES = 8 * 1024 * 1024   # one turn's new lines; beyond this the rest is counted next time

BLOCK_PROMPT = (
    "Before you finish, take one moment for rose, the project's memory (this is a one-time request, then stop):\n"
    "1. If the user corrected you or stated a rule in this session, record it in their words: "
    "`rose add \"<the rule>\" --title \"<short title>\"`.\n"
    "2. Report which of the lessons rose injected (the <rose-lessons> block) actually changed what you did: "
    "`rose used --session {session} --used <ids> --unused <ids>`. On-topic is not used; served and then "
    "contradicted is not used.\n"
    "If neither applies, just stop.")


def count_new(transcript: Path, offset: int, agent: str | None = None) -> tuple[TurnCounts, int]:
    """Tool calls, failed tool calls and typed prompts in the whole lines after `offset`, by the transcript readers'
    own rules (one parser for both agents). Never blocks: a path that is not a regular file is refused without a
    blocking open, and any transcript that cannot be read counts as nothing new."""
    from rose.transcripts import TranscriptError, count_since
    from rose.transcripts.incremental import TurnCounts

    try:
        return count_since(transcript, offset, agent=agent, max_bytes=MAX_SCAN_BYTES)
    except TranscriptError:
        return TurnCounts(), offset


@dataclass
class Decision:
    reflect: bool
    reason: str


def decide(state: Reflection, new: TurnCounts, settings: ReflectionSettings, now: float) -> Decision:
    """Pure policy over the session's counters (updated in place): reflect now or not, and why."""
    state.tool_calls += new.tool_calls
    state.failures += new.failures
    state.turns += new.user_turns
    if settings.mode is ReflectionMode.OFF:
        return Decision(False, "reflection.mode is off")
    occasion = None
    if state.tool_calls >= settings.nudge_after_tool_calls:
        occasion = f"{state.tool_calls} tool calls"
    elif state.failures >= settings.min_surprises:
        occasion = f"{state.failures} failed tool calls"
    elif state.turns >= settings.nudge_after_turns:
        occasion = f"{state.turns} turns"
    if occasion is None:
        return Decision(False, "not enough substance yet")
    cooldown = cooldown_s(settings, state.empty_reflections)
    since = now - state.last_reflection
    if since < cooldown:
        return Decision(False, f"{occasion}, but in cooldown ({since:.0f}s of {cooldown:.0f}s)")
    state.tool_calls = state.failures = state.turns = 0
    state.last_reflection = now
    return Decision(True, occasion)


def cooldown_s(settings: ReflectionSettings, empty_in_a_row: int) -> float:
    over = empty_in_a_row - settings.nudge_backoff_after + 1
    return settings.nudge_cooldown_s * (2 ** over if over > 0 else 1)


def on_stop(layers, event, settings) -> dict[str, Any]:
    """The Stop hook's whole job: count, decide, and hand off. Returns the hook's JSON output.

    The transcript is read with no lock held (a slow disk never holds up another hook), then the counters are
    updated under the session lock, from the offset that was read if nobody moved it meanwhile."""
    from rose.learn.jobs import Job, JobKind, enqueue, request_learning
    from rose.store.sessions import SessionState, read_session, update_session

    owner = layers.owner()
    rs = settings.reflection
    if rs.mode is ReflectionMode.BLOCK and event.stop_hook_active:
        return {}  # the agent is already answering our one request: never loop
    start = read_session(owner, event.session_id).reflection.offset
    if event.transcript_path:
        counts, end = count_new(Path(event.transcript_path), start, event.agent.value)
    else:
        from rose.transcripts.incremental import TurnCounts

        counts, end = TurnCounts(), start
    decision_box: list[Decision] = []

    def step(session: SessionState) -> None:
        state = session.reflection
        state.empty_reflections = session.empty_reflections   # the learner's count: the backoff reads it
        if state.offset != start:   # another Stop counted these lines meanwhile
            decision_box.append(Decision(False, "counted by a concurrent Stop"))
            return
        state.offset = end
        decision_box.append(decide(state, counts, rs, time.time()))
        state.last_decision = decision_box[-1].reason

    update_session(owner, event.session_id, step)
    decision = decision_box[-1]
    if not decision.reflect:
        return {}
    if rs.mode is ReflectionMode.BLOCK:
        return {"decision": "block", "reason": BLOCK_PROMPT.format(session=event.session_id)}
    enqueue(owner, Job(JobKind.REFLECT, event.session_id, event.transcript_path, event.agent.value,
                       event.cwd, fork=rs.mode is ReflectionMode.FORK))
    request_learning(owner)
    return {}
