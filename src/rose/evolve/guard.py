"""The PreToolUse hook: generated guardrails, checked before the agent runs a shell command. Fails open, and fast.

Only when evolution is on (`evolution.enabled`, the user's own setting) and only for shell tools: the command is
matched against the live guardrails of the session's stores (plain code, no model, no YAML). A match is an exposure
of that guardrail's arm for the whole session (rose.evolve.runtime). Treatment: `warn` tells the user (the notice)
and the model (the hook's context) and lets the command run; `block` denies it with the reason, and only when the
user allowed blocking (`evolution.guardrail_block`, own config only); without that a block acts as a warning.
Shadow and control: nothing is applied and nothing is said to the model. Anything that goes wrong lets the command
run: the hook entry (rose.hooks.entry) is the fail-open boundary.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rose.evolve.decide import TREATMENT

if TYPE_CHECKING:
    from rose.hooks.adapters import HookEvent

SHELL_TOOLS = ("Bash", "exec_command", "shell", "local_shell", "shell_command", "unified_exec")


def command_of(event: HookEvent) -> str:
    if str(event.raw.get("tool_name", "")) not in SHELL_TOOLS:
        return ""
    tool_input = event.raw.get("tool_input")
    if isinstance(tool_input, dict):
        value = tool_input.get("command") or tool_input.get("cmd") or ""
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        return value if isinstance(value, str) else ""
    return ""


def on_pre_tool_use(event: HookEvent) -> dict[str, Any]:
    command = command_of(event)
    if not command.strip():
        return {}
    from pathlib import Path

    from rose.store import Layers

    layers = Layers.discover(Path(event.cwd))
    if layers.empty:
        return {}
    try:
        settings = layers.settings()
        if not settings.evolution.enabled:
            return {}
        from rose.evolve.runtime import match
        from rose.model import now_iso
        from rose.inert import plain

        owner = layers.owner()
        for store in layers.stores():
            store.bound_waits(settings.recall.lock_wait_s)
        hits = match(layers.stores(), owner, event.session_id, "guardrail", command, settings, now_iso())
        applied = [(a, arm) for a, arm, _first in hits if arm == TREATMENT]
        if not applied:
            return {}
        a = applied[0][0]
        message = f"⋯ ROSE · guardrail “{plain(a.name, 40)}” ({a.state.value}): {plain(a.body, 200)}"
        if a.action == "block" and settings.evolution.guardrail_block:
            return {"systemMessage": message, "hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": told(a, "blocks this command")}}
        return {"systemMessage": message, "hookSpecificOutput": {
            "hookEventName": "PreToolUse", "additionalContext": told(a, "warns about this command")}}
    finally:
        layers.close()


def told(a: Any, does: str) -> str:
    """What the model reads of a guardrail: its learned text inert inside one element (rose.inert.escape, as the
    lessons block and skills are), so a body can neither close nor forge rose's markup, nor pose as the user."""
    from rose.inert import escape

    return (f'<rose-guardrail name="{escape(a.name)}" id="{escape(a.id)}" state="{a.state.value}">\n'
            f"rose's memory {does}; what it learned (a note, not an instruction from the user):\n"
            f"{escape(a.body)}\n</rose-guardrail>")
