"""Harness adapters: each agent's hook payload -> one normalized HookEvent.

Claude Code and Codex send the same core fields (session_id, transcript_path, cwd, hook_event_name); Codex adds
turn_id and model. Anything else a payload carries stays in `raw`. A payload that is not a JSON object, or lacks
what its event needs, raises PayloadError with a reason; the hook boundary turns that into a notice, never a crash.
"""
from __future__ import annotations

from enum import Enum

from rose.text import load_json
from rose.errors import PayloadError
from rose.hooks import MAX_PAYLOAD_BYTES
from rose.model import Agent
from rose.text import repaired
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SYNTHETIC_PREFIXES = ("<task-notification>",)  # background-agent notifications arrive as fake user prompts


class HookName(str, Enum):
    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    PRE_TOOL_USE = "PreToolUse"        # wired only while a generated guardrail is on trial or active (rose.evolve)
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    STOP = "Stop"
    SESSION_END = "SessionEnd"




class HookEvent(Record):
    """One hook call, either agent's payload in one shape."""
    agent: Agent
    name: HookName
    session_id: str
    cwd: str
    transcript_path: str = ""
    prompt: str = ""
    stop_hook_active: bool = False
    trigger: str = ""          # PreCompact: manual | auto
    reason: str = ""           # SessionEnd
    model: str = ""            # Codex
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def synthetic(self) -> bool:
        """A prompt the harness made up (e.g. a background task's notification): never recalled for."""
        return self.prompt.lstrip().startswith(SYNTHETIC_PREFIXES)


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PayloadError(f"field {key!r} should be text, got {type(value).__name__}")
    return value


def parse(agent: Agent, event: str, raw: bytes) -> HookEvent:
    try:
        name = HookName(event)
    except ValueError:
        raise PayloadError(f"unknown hook event {event!r}") from None
    if not raw.strip():
        raise PayloadError(f"empty {event} payload on stdin")
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"{event} payload of {len(raw)} bytes is over the {MAX_PAYLOAD_BYTES} byte limit")
    try:
        # bytes that are not UTF-8 become U+FFFD here, lone surrogates ("\ud800") in rose.text.repaired: a broken
        # character costs that character, never the prompt's recall
        data = repaired(load_json(raw.decode("utf-8", "replace")))
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"{event} payload is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PayloadError(f"{event} payload is not a JSON object")
    declared = data.get("hook_event_name")
    if declared not in (None, "", name.value):
        raise PayloadError(f"payload says {declared!r} but the hook was wired for {event!r}")
    session_id = _text(data, "session_id")
    if not session_id:
        raise PayloadError(f"{event} payload has no session_id")
    ev = HookEvent(agent=agent, name=name, session_id=session_id, cwd=_text(data, "cwd"),
                   transcript_path=_text(data, "transcript_path"), raw=data)
    if name is HookName.USER_PROMPT_SUBMIT:
        if "prompt" not in data:
            raise PayloadError("UserPromptSubmit payload has no prompt")
        ev.prompt = _text(data, "prompt")
    ev.stop_hook_active = bool(data.get("stop_hook_active", False))
    ev.trigger = _text(data, "trigger") if isinstance(data.get("trigger", ""), str) else ""
    ev.reason = _text(data, "reason") if isinstance(data.get("reason", ""), str) else ""
    ev.model = _text(data, "model") if isinstance(data.get("model", ""), str) else ""
    return ev


def additional_context(agent: Agent, name: HookName, context: str, notice: str) -> dict[str, Any]:
    """The JSON both agents accept on stdout: context for the model, a notice line for the user."""
    out: dict[str, Any] = {}
    if context:
        out["hookSpecificOutput"] = {"hookEventName": name.value, "additionalContext": context}
    if notice:
        out["systemMessage"] = notice
    return out
