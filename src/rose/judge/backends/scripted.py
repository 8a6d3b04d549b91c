"""A backend that answers from a script: for tests, the demo and structural tests that stub the judgments.

    backend = Scripted()
    backend.enqueue({"scope": "global", "reason": "about a vendor API"})       # answers, in order
    backend.enqueue(JudgeFailure(FailureKind.TIMEOUT, "simulated"))            # or failures, raised in turn
    backend.handler = lambda call, request: {...}                               # or computed from the request
    Judge(backend).ask(calls.SCOPE, ScopeRequest(...), stage="consolidation")
    backend.history                                                             # every BackendRequest, in order

A queued answer wins over the handler; with neither, the call fails as `script` (never a default answer). The
handler gets the call's name and the typed request object (`BackendRequest.payload`), or the prompt text when the
request did not come through Judge. Answers are validated by Judge like any backend's, so a script can also test
the fail-closed path by queuing a malformed answer.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from rose.config import AgentSettings
from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.errors import FailureKind, JudgeFailure

Handler = Callable[[str, Any], Any]


class Scripted(Backend):
    name = "scripted"

    def __init__(self, *answers: Any, handler: Handler | None = None, model: str = "script"):
        self.model = model
        self.handler = handler
        self.history: list[BackendRequest] = []
        self._queue: deque[Any] = deque(answers)
        self._lock = threading.Lock()

    def enqueue(self, *answers: Any) -> Scripted:
        """Queue answers (dicts or any JSON value), BackendReply objects, or exceptions to raise."""
        with self._lock:
            self._queue.extend(answers)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    def complete(self, request: BackendRequest) -> BackendReply:
        with self._lock:
            self.history.append(request)
            item = self._queue.popleft() if self._queue else _EMPTY
        if item is _EMPTY:
            if self.handler is None:
                raise JudgeFailure(FailureKind.SCRIPT, f"nothing queued for {request.call!r} and no handler")
            item = self.handler(request.call, request.payload if request.payload is not None else request.prompt)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, BackendReply):
            return item
        return BackendReply(data=item, raw=json.dumps(item, ensure_ascii=False, default=str))


_EMPTY = object()


def from_settings(agent: AgentSettings) -> Scripted:
    """`agent.backend: scripted` from config: an empty script (every call fails as `script`) for code to fill."""
    return Scripted(model=agent.model or "script")
