"""The hook command: `rose hook <agent> <event>`, with a JSON payload on stdin.

This is the one fail-open boundary in rose. Whatever happens below it (a malformed payload, a broken store, a
bug, a model that never answers), the agent's session goes on: the hook exits 0, stdout carries exactly one valid
JSON object, and the error is told to the user in the notice line and logged. A watchdog ends a hook that overruns
its budget (rose.hooks.BUDGET_S, inside the timeout rose installs) with a fail-open notice, so rose answers before the
agent kills it. With ROSE_CHILD=1 (a process rose spawned) every hook exits 0 at once and prints nothing, so a
reflector can never trigger reflectors.
"""
from __future__ import annotations

import _thread   # not threading: with what it imports, 4 M of the ~28 M instructions a helper-answered prompt's own
                 # process spends past a bare interpreter (see _alarm)
import io
import os
import sys
import time

from rose.text import load_json
from rose import envvars
from rose.hooks import BUDGET_S, MAX_PAYLOAD_BYTES, PROMPT_MARGIN_S, PROMPT_TIMEOUT_S

# json and the error tree (enum) are imported where they are used: a prompt the warm helper answers needs neither

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib stay off the per-prompt path; annotations are strings here
    from pathlib import Path
    from typing import Any, BinaryIO, TextIO

    from rose.deadline import Deadline
    from collections.abc import Callable

    from rose.hooks.adapters import HookEvent

CHILD_ENV = envvars.CHILD
WARM_EVENTS = ("UserPromptSubmit",)  # the latency-critical one goes to the warm helper when there is one


class _Output:
    """Exactly one JSON object reaches stdout, whoever writes first: the hook, or the watchdog at its budget."""

    def __init__(self, stdout: TextIO):
        self.stdout = stdout
        self.lock = _thread.allocate_lock()
        self.done = False

    def write(self, text: str) -> bool:
        with self.lock:
            if self.done:
                return False
            self.done = True
            try:
                self.stdout.write(text)
                self.stdout.flush()
            except (OSError, ValueError):  # a closed pipe (or stream) must not turn into a non-zero exit; the agent
                pass                       # is gone and no one is left to read a log of it
            return True


def main(argv: list[str], stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """The command agents run. Hands the latency-critical events to the warm helper, else works in-process."""
    if os.environ.get(CHILD_ENV) == "1":
        return 0
    out = _Output(stdout or sys.stdout)
    event_name = argv[1] if len(argv) > 1 else "?"
    budget = BUDGET_S.get(event_name, 5.0)
    start = time.monotonic()
    # the watchdog: until the work is known to run here, an alarm (see _alarm); the in-process work, a thread
    disarm = _alarm(out, event_name, budget)
    timer = _timer(out, event_name, budget, budget) if disarm is None else None
    try:
        stdin = stdin or sys.stdin.buffer
        try:
            payload = stdin.read(MAX_PAYLOAD_BYTES + 1)
        except (OSError, ValueError):  # an unreadable stdin is an empty payload: run() reports it and logs the skip
            payload = b""
        if len(argv) == 2 and argv[1] in WARM_EVENTS and len(payload) <= MAX_PAYLOAD_BYTES:
            from rose.warm import client

            if client.helpers_allowed():
                answered = client.run_hook(argv, payload, budget)
                if answered is not None:
                    if disarm is not None:   # first: the alarm's handler writes through the same lock
                        disarm()
                        disarm = None
                    out.write(answered)
                    if timer is not None:
                        timer.cancel()
                        timer = None
                    if answered == client.timeout_notice(budget):   # the helper ran out of time: the skip is logged
                        _log_skip(event_name, f"the warm helper ran past the {budget:.1f}s budget", os.getcwd())
                    return 0
        if disarm is not None:   # the work runs here: a thread keeps what is left of the budget
            disarm()
            disarm = None
            timer = _timer(out, event_name, budget, max(0.0, budget - (time.monotonic() - start)))
        buffer = io.StringIO()
        run(argv, io.BytesIO(payload), buffer)
        out.write(buffer.getvalue())
        return 0
    finally:
        if disarm is not None:
            disarm()
        if timer is not None:
            timer.cancel()


def _alarm(out: _Output, event_name: str, budget: float) -> Callable[[], None] | None:
    """A SIGALRM timer at the budget that ends the hook (_overran), and the function that disarms it and puts the
    signal's handler back; None where there is none (no setitimer, or not the main thread). Enough while the main
    thread only waits in system calls, which a signal interrupts (reading stdin, the helper's socket): the path a
    warm helper answers, which then imports no threading. Not for work done in-process: a handler runs between
    bytecodes, so it would wait for a long C call (an SQLite query) to end."""
    try:
        import _signal  # type: ignore[import-not-found]  # the C module under `signal`, whose enums need enum

        previous = _signal.signal(_signal.SIGALRM, lambda _sig, _frame: _overran(out, event_name, budget))
    except (ImportError, AttributeError, ValueError, OSError):
        return None
    _signal.setitimer(_signal.ITIMER_REAL, budget)

    def disarm() -> None:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous if previous is not None else _signal.SIG_DFL)

    return disarm


def _timer(out: _Output, event_name: str, budget: float, left: float) -> Any:
    """The watchdog as a thread (threading.Timer) that fires in `left` seconds, whatever the main thread is doing."""
    import threading

    timer = threading.Timer(left, _overran, (out, event_name, budget))
    timer.daemon = True
    timer.start()
    return timer


def _overran(out: _Output, event_name: str, budget: float) -> None:
    """The watchdog: the hook ran past its budget. Say so, and end the process before the agent kills it."""
    import json

    text = json.dumps({"systemMessage": f"⋯ ROSE · {_what(event_name)} ran out of time ({budget:.0f}s): skipped "
                                        "this time"}, ensure_ascii=False)
    if out.write(text):
        try:   # the answer is written: what is left is one structural line, waited for briefly, then the end
            _log_skip(event_name, f"ran past its {budget:.1f}s budget", _cwd_or_none(), quick=True)
        finally:
            os._exit(0)


def _cwd_or_none() -> str | None:
    try:
        return os.getcwd()
    except OSError:   # the folder the hook ran in was removed under it
        return None


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO, cwd: Path | None = None) -> None:
    """Parse, dispatch, and always write one valid JSON object: the fail-open boundary itself."""
    import json
    from pathlib import Path

    from rose.hooks.adapters import Agent, PayloadError, parse
    from rose.terminal import visible_strings

    out: dict[str, Any] = {}
    event_name = argv[1] if len(argv) > 1 else "?"
    where = str(cwd) if cwd is not None else os.getcwd()
    try:
        if len(argv) != 2:
            raise PayloadError("usage: rose hook <claude|codex> <Event>")
        try:
            agent = Agent(argv[0])
        except ValueError:
            raise PayloadError(f"unknown agent {argv[0]!r}") from None
        event = parse(agent, event_name, stdin.read(MAX_PAYLOAD_BYTES + 1))
        if not event.cwd or not Path(event.cwd).is_dir():
            event.cwd = where
        where = event.cwd
        out = dispatch(event)
    except PayloadError as exc:
        out = {"systemMessage": f"⋯ ROSE · skipped: {exc}"}
        _log_skip(event_name, str(exc), where)
    except Exception as exc:  # noqa: BLE001 - the fail-open boundary: never break the user's session
        out = {"systemMessage": f"⋯ ROSE · {_what(event_name)} failed: {type(exc).__name__}: {exc}"}
        _log_skip(event_name, f"{type(exc).__name__}: {exc}", where)
    try:
        # nothing to say is said with nothing: an empty stdout is "no output" to both agents, where `{}` is shown
        # verbatim by some (Claude Code echoes a manual /compact's PreCompact output)
        # the agent shows the notice to its user as it is: a lesson's words cannot drive their terminal
        text = json.dumps(visible_strings(out), ensure_ascii=False) if out else ""
    except (TypeError, ValueError) as exc:  # never half an object: a fail-open notice instead
        text = json.dumps({"systemMessage": f"⋯ ROSE · {_what(event_name)} failed: {exc}"})
    stdout.write(text)


def _what(event_name: str) -> str:
    return {"UserPromptSubmit": "recall", "PreCompact": "compaction reset", "Stop": "reflection",
            "SessionEnd": "learning", "PreToolUse": "guardrail check"}.get(event_name, "hook")


def dispatch(event: HookEvent) -> dict[str, Any]:
    from pathlib import Path

    from rose.hooks.adapters import HookName
    from rose.store.layers import repository_root, switched_off

    if switched_off(repository_root(Path(event.cwd))):
        return {}   # the user switched rose off here: nothing recalled, nothing learned, nothing said

    if event.name is HookName.USER_PROMPT_SUBMIT:
        return on_prompt(event)
    if event.name is HookName.PRE_COMPACT:
        return on_pre_compact(event)
    if event.name is HookName.STOP:
        return on_stop(event)
    if event.name is HookName.SESSION_END:
        return on_session_end(event)
    if event.name is HookName.PRE_TOOL_USE:
        from rose.evolve.guard import on_pre_tool_use   # generated guardrails: their own handler, fail open

        return on_pre_tool_use(event)
    return {}


def _layers(event: HookEvent):
    from pathlib import Path

    from rose.store import Layers

    return Layers.discover(Path(event.cwd))


def prompt_deadline(deadline_s: float) -> Deadline:
    """recall.deadline_s, capped well inside the timeout rose installs for the prompt hook."""
    from rose.deadline import Deadline

    return Deadline(max(0.5, min(deadline_s, PROMPT_TIMEOUT_S - PROMPT_MARGIN_S)))


def on_prompt(event: HookEvent) -> dict[str, Any]:
    if event.synthetic or not event.prompt.strip():
        return {}
    from rose.errors import UnsafeStore

    try:
        layers, refused = _layers(event), ""
    except UnsafeStore as exc:   # the repository's store is refused; the user's own lessons are still served
        from pathlib import Path

        from rose.store import Layers

        layers, refused = Layers.users_own(Path(event.cwd)), f"skipped this repository's store: {exc}"
    if layers.empty:   # nothing to serve; a store refused (the repository's, or the user's own) is said
        why = refused or layers.refused
        return {"systemMessage": f"⋯ ROSE · {why}"} if why else {}
    from rose.recall import recall

    settings = layers.settings()
    deadline = prompt_deadline(settings.recall.deadline_s)
    owner = layers.owner()   # the session's records go to the repository's store (the user's own, if it has none)
    for store in layers.stores():
        store.bound_waits(settings.recall.lock_wait_s)  # a held lock or a busy index is waited on briefly, no more

    def judge_factory():
        from rose.judge import Judge

        return Judge.for_store(owner, settings)

    def serve():
        return recall(layers, event.prompt, session_id=event.session_id, settings=settings,
                      judge_factory=judge_factory, hot=True, cwd=event.cwd or None, agent=event.agent.value,
                      deadline=deadline)

    import sqlite3

    try:
        try:
            result = serve()
        except sqlite3.DatabaseError as exc:
            if not layers.heal(exc):   # a damaged index is discarded: this prompt is served from what is rebuilt
                raise
            result = serve()
        notice = _with_config_note(owner, settings, result.notice)
        if refused:
            notice = f"{notice} · {refused}" if notice else f"⋯ ROSE · {refused}"
    finally:
        layers.close()  # the warm helper serves many prompts: never leak a connection per prompt
    from rose.hooks.adapters import additional_context

    return additional_context(event.agent, event.name, result.block, notice)


def _with_config_note(owner: Any, settings: Any, notice: str) -> str:
    """Settings that were not applied are named on the notice once (per distinct set), and always by doctor."""
    if not settings.problems:
        return notice
    import hashlib

    from rose.errors import RoseError

    digest = hashlib.sha256("\n".join(p.line() for p in settings.problems).encode("utf-8", "replace")).hexdigest()
    marker = owner.cache_dir / "config-notice.json"
    try:
        from rose.store import reader

        if load_json(reader.read_text(marker, reader.RECORD)).get("announced") == digest:   # no FIFO waited on
            return notice
    except (OSError, ValueError, AttributeError, RecursionError):
        pass
    try:
        owner.write_json(marker, {"announced": digest}, structural=True)
    except (OSError, RoseError):  # a note that cannot be remembered is shown again next time, that is all
        pass
    ignored = sum(1 for p in settings.problems if p.kind.value == "not-trusted")
    other = len(settings.problems) - ignored
    parts = ([f"{ignored} setting(s) from this repository ignored (untrusted)"] if ignored else []) + \
        ([f"{other} setting(s) not understood"] if other else [])
    note = "config: " + ", ".join(parts) + " — rose doctor"
    return f"{notice} · {note}" if notice else f"⋯ ROSE · {note}"


def on_pre_compact(event: HookEvent) -> dict[str, Any]:
    """Compaction is about to discard turns: forget what was served (it may be gone from context), and hand the
    transcript to the learner first, so a long session learns from work that no longer fits (seed 003)."""
    layers = _layers(event)
    from rose.store.sessions import clear_served

    owner = layers.owner()   # a repository rose has never seen learns too: its store is made now
    clear_served(owner, event.session_id)
    if event.transcript_path and layers.settings().reflection.mode.value != "off":
        from rose.learn.jobs import Job, JobKind, enqueue, request_learning

        enqueue(owner, Job(JobKind.REFLECT, event.session_id, event.transcript_path, event.agent.value, event.cwd))
        request_learning(owner)
    return {}


def on_stop(event: HookEvent) -> dict[str, Any]:
    layers = _layers(event)
    from rose.learn.reflect import on_stop as schedule

    return schedule(layers, event, layers.settings())


def on_session_end(event: HookEvent) -> dict[str, Any]:
    """Queue the session for the learner and start it: no transcript is read here (SessionEnd has about a second)."""
    layers = _layers(event)
    from rose.learn.jobs import Job, JobKind, enqueue, request_learning

    owner = layers.owner()   # a repository rose has never seen learns too: its store is made now
    enqueue(owner, Job(JobKind.SESSION_END, event.session_id, event.transcript_path, event.agent.value, event.cwd))
    request_learning(owner)
    return {}


def _log_skip(event_name: str, reason: str, cwd: str | None, *, quick: bool = False) -> None:
    """Best effort: a skipped hook is recorded in the events of the store of the hook's own folder (never raises).
    `quick`: the watchdog's own line, after the hook's time is up: a reason of rose's own words (not redacted, so
    the redactor is not imported now) and a short wait for the events lock."""
    if cwd is None:
        return
    try:
        from pathlib import Path

        from rose.store import Layers
        from rose.store.events import EventKind

        layers = Layers.discover(Path(cwd))
        if not layers.empty:
            store = layers.stores()[0]
            store.bound_waits(0.1 if quick else 1.0)
            store.event(EventKind.SKIP, structural=quick, hook=event_name, reason=reason)
    except Exception:  # noqa: BLE001 - the log of a skip itself failed: there is nowhere left to log it, and the
        pass           # hook's answer (its systemMessage) already names the skip
