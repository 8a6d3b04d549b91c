"""Stage 2, reflection scheduling, on Stop: was this turn substantial enough to be worth a thought?

The occasion is structural, never "something failed": tool calls since the last reflection
(`nudge_after_tool_calls`), turns (`nudge_after_turns`) or failed tool calls (`min_surprises`), subject to
`nudge_cooldown_s`, which doubles for every empty reflection past `nudge_backoff_after` in a row.

    background  queue a detached reflection over the transcript digest
    fork        the same, but the judge calls fork the live session (it sees everything, at ~0.1x its tokens)
    block       ask the agent itself to reflect, once (honours stop_hook_active, or the Stop hook loops forever)
    off         nothing until the session ends

The counting reads only the transcript lines written since the last Stop (a byte cursor), so a Stop hook costs
the same in the first turn and the five-hundredth.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose.config import ReflectionMode, ReflectionSettings

MAX_SCAN_BYTES = 8 * 1024 * 1024   # one turn's new lines; beyond this the rest is counted next time

BLOCK_PROMPT = (
    "Before you finish, take one moment for rose, the project's memory (this is a one-time request, then stop):\n"
    "1. If the user corrected you or stated a rule in this session, record it in their words: "
    "`rose add \"<the rule>\" --title \"<short title>\"`.\n"
    "2. Report which of the lessons rose injected (the <rose-lessons> block) actually changed what you did: "
    "`rose used --session {session} --used <ids> --unused <ids>`. On-topic is not used; served and then "
    "contradicted is not used.\n"
    "If neither applies, just stop.")


@dataclass
class TurnCounts:
    tool_calls: int = 0
    failures: int = 0
    turns: int = 0


def count_new(transcript: Path, offset: int) -> tuple[TurnCounts, int]:
    """Count tool calls, failed tool results and genuine user turns in the lines after `offset`.

    Never blocks: a path that is not a regular file (a FIFO, a directory, a device) is not opened at all, and
    the file is opened non-blocking and checked again through its descriptor."""
    import os
    import stat

    counts = TurnCounts()
    try:
        if not stat.S_ISREG(os.stat(transcript).st_mode):
            return counts, offset
        fd = os.open(transcript, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return counts, offset
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):   # swapped between the check and the open
            return counts, offset
        if st.st_size < offset:  # rewritten or rotated: start over
            offset = 0
        handle.seek(offset)
        chunk = handle.read(MAX_SCAN_BYTES)
    end = chunk.rfind(b"\n") + 1   # never count a half-written last line
    for raw in chunk[:end].splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict):
            _count_line(line, counts)
    return counts, offset + end


def _count_line(line: dict[str, Any], c: TurnCounts) -> None:
    kind = line.get("type")
    if kind in ("user", "assistant"):  # Claude Code
        if line.get("isSidechain") or line.get("isMeta") or line.get("isCompactSummary"):
            return
        content = (line.get("message") or {}).get("content")
        if kind == "user" and isinstance(content, str):
            if not content.lstrip().startswith("<task-notification>"):
                c.turns += 1
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    c.tool_calls += 1
                elif block.get("type") == "tool_result" and block.get("is_error"):
                    c.failures += 1
        return
    if kind == "response_item":  # Codex rollout
        payload = line.get("payload") or {}
        ptype = payload.get("type")
        if ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            c.tool_calls += 1
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            if _codex_failed(payload.get("output")):
                c.failures += 1
    elif kind == "event_msg":
        payload = line.get("payload") or {}
        if payload.get("type") == "user_message":
            c.turns += 1


def _codex_failed(output: Any) -> bool:
    text = output if isinstance(output, str) else json.dumps(output)
    try:
        data = json.loads(text)
    except ValueError:
        return "exit code: " in text and "exit code: 0" not in text
    meta = data.get("metadata", {}) if isinstance(data, dict) else {}
    return bool(isinstance(meta, dict) and meta.get("exit_code") not in (None, 0))


@dataclass
class Decision:
    reflect: bool
    reason: str


def decide(state: dict[str, Any], new: TurnCounts, settings: ReflectionSettings, now: float) -> Decision:
    """Pure policy over the session's counters (updated in place): reflect now or not, and why."""
    for key, value in (("tool_calls", new.tool_calls), ("failures", new.failures), ("turns", new.turns)):
        state[key] = int(state.get(key, 0)) + value
    if settings.mode is ReflectionMode.OFF:
        return Decision(False, "reflection.mode is off")
    occasion = None
    if state["tool_calls"] >= settings.nudge_after_tool_calls:
        occasion = f"{state['tool_calls']} tool calls"
    elif state["failures"] >= settings.min_surprises:
        occasion = f"{state['failures']} failed tool calls"
    elif state["turns"] >= settings.nudge_after_turns:
        occasion = f"{state['turns']} turns"
    if occasion is None:
        return Decision(False, "not enough substance yet")
    empty = int(state.get("empty_reflections", 0))
    cooldown = cooldown_s(settings, empty)
    since = now - float(state.get("last_reflection", 0.0))
    if since < cooldown:
        return Decision(False, f"{occasion}, but in cooldown ({since:.0f}s of {cooldown:.0f}s)")
    state.update(tool_calls=0, failures=0, turns=0, last_reflection=now)
    return Decision(True, occasion)


def cooldown_s(settings: ReflectionSettings, empty_in_a_row: int) -> float:
    over = empty_in_a_row - settings.nudge_backoff_after + 1
    return settings.nudge_cooldown_s * (2 ** over if over > 0 else 1)


def on_stop(layers, event, settings) -> dict[str, Any]:
    """The Stop hook's whole job: count, decide, and hand off. Returns the hook's JSON output.

    The transcript is read with no lock held (a slow disk never holds up another hook), then the counters are
    updated under the session lock, from the offset that was read if nobody moved it meanwhile."""
    from rose.learn.jobs import Job, JobKind, enqueue, request_learning
    from rose.recall.pack import session_path, update_session

    owner = layers.stores()[0]
    rs = settings.reflection
    if rs.mode is ReflectionMode.BLOCK and event.stop_hook_active:
        return {}  # the agent is already answering our one request: never loop
    state_now = owner.read_json(session_path(owner, event.session_id), {})
    start = int((state_now.get("reflection") or {}).get("offset", 0)) if isinstance(state_now, dict) else 0
    counts, end = count_new(Path(event.transcript_path), start) if event.transcript_path else (TurnCounts(), start)
    decision_box: list[Decision] = []

    def step(data: dict[str, Any]) -> None:
        state = data.setdefault("reflection", {})
        state["empty_reflections"] = int(data.get("empty_reflections", 0))
        if int(state.get("offset", 0)) != start:   # another Stop counted these lines meanwhile
            decision_box.append(Decision(False, "counted by a concurrent Stop"))
            return
        state["offset"] = end
        decision_box.append(decide(state, counts, rs, time.time()))
        state["last_decision"] = decision_box[-1].reason

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


def on_session_end(layers, event) -> None:
    from rose.learn.jobs import Job, JobKind, enqueue, request_learning

    owner = layers.stores()[0]
    enqueue(owner, Job(JobKind.SESSION_END, event.session_id, event.transcript_path, event.agent.value, event.cwd))
    request_learning(owner)
