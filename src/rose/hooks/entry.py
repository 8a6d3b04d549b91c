"""The hook command: `rose hook <agent> <event>`, with a JSON payload on stdin.

This is the one fail-open boundary in rose. Whatever happens below it (a malformed payload, a broken store, a
bug), the agent's session goes on: the hook exits 0, stdout carries only valid JSON, and the error is told to the
user in the notice line and logged. With ROSE_CHILD=1 (a process rose spawned) every hook exits 0 at once and
prints nothing, so a reflector can never trigger reflectors.
"""
from __future__ import annotations

import io
import json
import os
import sys

from rose.hooks import MAX_PAYLOAD_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib stay off the per-prompt path; annotations are strings here
    from pathlib import Path
    from typing import Any, BinaryIO, TextIO

    from rose.hooks.adapters import HookEvent

CHILD_ENV = "ROSE_CHILD"


WARM_EVENTS = ("UserPromptSubmit", "PreCompact")  # the latency-critical ones go to the warm helper when there is one


def main(argv: list[str], stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """The command agents run. Hands the latency-critical events to the warm helper, else works in-process."""
    if os.environ.get(CHILD_ENV) == "1":
        return 0
    stdout = stdout or sys.stdout
    stdin = stdin or sys.stdin.buffer
    try:
        payload = stdin.read(MAX_PAYLOAD_BYTES + 1)
    except Exception:  # noqa: BLE001 - an unreadable stdin is a payload problem, reported by run()
        payload = b""
    if len(argv) == 2 and argv[1] in WARM_EVENTS and len(payload) <= MAX_PAYLOAD_BYTES:
        from rose.warm import client

        if client.helpers_allowed():
            answered = client.run_hook(argv, payload)
            if answered is not None:
                _write(stdout, answered)
                return 0
    run(argv, io.BytesIO(payload), stdout)
    return 0


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO, cwd: Path | None = None) -> None:
    """Parse, dispatch, and always write one valid JSON object: the fail-open boundary itself."""
    from pathlib import Path

    from rose.hooks.adapters import Agent, PayloadError, parse

    out: dict[str, Any] = {}
    agent = Agent.CLAUDE
    event_name = argv[1] if len(argv) > 1 else "?"
    try:
        if len(argv) != 2:
            raise PayloadError("usage: rose hook <claude|codex> <Event>")
        try:
            agent = Agent(argv[0])
        except ValueError:
            raise PayloadError(f"unknown agent {argv[0]!r}") from None
        event = parse(agent, event_name, stdin.read(MAX_PAYLOAD_BYTES + 1))
        if not event.cwd or not Path(event.cwd).is_dir():
            event.cwd = str(cwd or Path.cwd())
        out = dispatch(event)
    except PayloadError as exc:
        out = {"systemMessage": f"⋯ ROSE · skipped: {exc}"}
        _log_skip(event_name, str(exc))
    except Exception as exc:  # noqa: BLE001 - the fail-open boundary: never break the user's session
        out = {"systemMessage": f"⋯ ROSE · {_what(event_name)} failed: {type(exc).__name__}: {exc}"}
        _log_skip(event_name, f"{type(exc).__name__}: {exc}")
    _write(stdout, json.dumps(out, ensure_ascii=False))


def _write(stdout: TextIO, text: str) -> None:
    try:
        stdout.write(text)
        stdout.flush()
    except Exception:  # noqa: BLE001 - a closed pipe must not turn into a non-zero exit
        pass


def _what(event_name: str) -> str:
    return {"UserPromptSubmit": "recall", "PreCompact": "compaction reset", "Stop": "reflection",
            "SessionEnd": "learning"}.get(event_name, "hook")


def dispatch(event: HookEvent) -> dict[str, Any]:
    from rose.hooks.adapters import HookName

    if event.name is HookName.USER_PROMPT_SUBMIT:
        return on_prompt(event)
    if event.name is HookName.PRE_COMPACT:
        return on_pre_compact(event)
    if event.name is HookName.STOP:
        return on_stop(event)
    if event.name is HookName.SESSION_END:
        return on_session_end(event)
    return {}


def _layers(event: HookEvent):
    from pathlib import Path

    from rose.store import Layers

    return Layers.discover(Path(event.cwd))


def on_prompt(event: HookEvent) -> dict[str, Any]:
    if event.synthetic or not event.prompt.strip():
        return {}
    layers = _layers(event)
    if layers.empty:
        return {}
    from rose.recall import recall

    settings = layers.settings()
    judge = None
    if settings.recall.selector.value != "hybrid":
        from rose.judge import Judge

        owner = layers.stores()[0]
        judge = Judge.for_store(owner, settings)
    try:
        result = recall(layers, event.prompt, session_id=event.session_id, settings=settings, judge=judge, hot=True,
                        cwd=event.cwd or None, agent=event.agent.value)
    finally:
        layers.close()  # the warm helper serves many prompts: never leak a connection per prompt
    from rose.hooks.adapters import additional_context

    return additional_context(event.agent, event.name, result.block, result.notice)


def on_pre_compact(event: HookEvent) -> dict[str, Any]:
    layers = _layers(event)
    if layers.empty:
        return {}
    from rose.recall.pack import clear_served

    clear_served(layers.stores()[0], event.session_id)
    return {}


def on_stop(event: HookEvent) -> dict[str, Any]:
    layers = _layers(event)
    if layers.empty:
        return {}
    from rose.learn.reflect import on_stop as schedule

    return schedule(layers, event, layers.settings())


def on_session_end(event: HookEvent) -> dict[str, Any]:
    layers = _layers(event)
    if layers.empty:
        return {}
    from rose.learn.reflect import on_session_end as hand_off

    hand_off(layers, event)
    return {}


def _log_skip(event_name: str, reason: str) -> None:
    """Best effort: a skipped hook is recorded in the nearest store's events (never raises)."""
    try:
        from pathlib import Path

        from rose.store import Layers
        from rose.store.events import EventKind

        layers = Layers.discover(Path.cwd())
        if not layers.empty:
            layers.stores()[0].event(EventKind.SKIP, hook=event_name, reason=reason)
    except Exception:  # noqa: BLE001
        pass
