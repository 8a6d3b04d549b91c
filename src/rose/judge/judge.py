"""The one door every question about meaning goes through.

    judge = Judge.for_store(store, settings)                # or Judge(backend, cache=..., events_path=...)
    if not judge.available: ...                             # model-free mode: skip or queue the learning work
    try:
        answer = judge.ask(calls.ASSESS, AssessRequest(...), stage=Stage.ATTRIBUTION)
    except JudgeFailure as failure:                         # fail closed: no judgment, never a default one
        ...failure.kind...

`ask` returns the call's typed answer or raises JudgeFailure; there is no third outcome and no default answer. It:
1. looks the request up in the cache (key: call, version, backend, model, fork session, request hash); a hit is
   re-validated against the schema and the call's extra checks, and an invalid one is a miss, not a crash;
2. otherwise asks the backend, validates the reply, and on a schema violation or unparseable reply asks once more
   with the problems quoted (at most one retry); any other failure is raised at once;
3. writes a valid answer to the cache (failures never) and appends one `judge` event per backend attempt or cache
   hit: call, version, stage, backend, model, ms, cached, ok, failure, attempt, input_tokens, output_tokens, cost_usd.
"""
from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.cache import JudgeCache, cache_key
from rose.judge.calls.base import Call, canonical
from rose.errors import LockTimeout
from rose.judge.errors import RETRYABLE, AnswerInvalid, FailureKind, JudgeFailure

if TYPE_CHECKING:
    from rose.config import AgentSettings, Settings
    from rose.deadline import Deadline
    from rose.store import Store

Req = TypeVar("Req")
Ans = TypeVar("Ans")

DEFAULT_TIMEOUT_S = 60.0
MAX_ATTEMPTS = 2  # the first ask and at most one retry after a schema violation / unparseable reply


class Stage(str, Enum):
    """Who is asking: `rose status` sums calls and cost per stage (events' `stage` field)."""

    RECALL = "recall"
    REFLECTION = "reflection"
    ATTRIBUTION = "attribution"
    CONSOLIDATION = "consolidation"
    COMPRESSION = "compression"
    DESCENT = "descent"
    ROUTING = "routing"
    EXTRACTION = "extraction"
    EVOLUTION = "evolution"   # candidate skills and guardrails (rose.evolve)
    RETENTION = "retention"   # maintenance after the learner: consolidation and recurrence reviews
    PROBE = "probe"      # replay probes (and the judge's own health probe, via rose.judge.health)


_UNBUILT: Any = object()


class Judge:
    """`backend` may be given, or built from `agent` settings the first time it is needed: a configured backend
    that cannot be built (an unknown name) then fails the model calls that are really made, never a gate, a
    recall that needs no model, or `rose add` (which stores the lesson unreconciled)."""

    def __init__(self, backend: Backend | None = _UNBUILT, *, agent: AgentSettings | None = None,
                 cache: JudgeCache | None = None, events_path: Path | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        if backend is _UNBUILT and agent is None:
            raise TypeError("Judge needs a backend or the agent settings to build one")
        self._backend = backend
        self._agent = agent
        self.build_failure: JudgeFailure | None = None
        self.cache = cache
        self.events_path = events_path
        self.timeout_s = timeout_s

    @property
    def backend(self) -> Backend | None:
        if self._backend is _UNBUILT:
            from rose.judge.backends.base import make_backend

            assert self._agent is not None
            try:
                self._backend = make_backend(self._agent)
            except JudgeFailure as failure:
                self.build_failure = failure
                self._backend = None
        return self._backend

    @backend.setter
    def backend(self, value: Backend | None) -> None:
        self._backend = value

    @classmethod
    def from_settings(cls, agent: AgentSettings, *, cache_path: Path | None = None,
                      events_path: Path | None = None) -> Judge:
        """The configured backend (None in model-free mode), built on first use; a cache at `cache_path` if given,
        events if given."""
        cache = JudgeCache(cache_path, agent.cache_max_entries) if cache_path is not None else None
        return cls(agent=agent, cache=cache, events_path=events_path, timeout_s=agent.timeout_s)

    @classmethod
    def for_store(cls, store: Store, settings: Settings) -> Judge:
        """Cache in `store.judge_cache_path`, events in `store.events_path` (the project store, machine-local)."""
        return cls.from_settings(settings.agent, cache_path=store.judge_cache_path, events_path=store.events_path)

    @property
    def available(self) -> bool:
        """False in model-free mode: callers skip or queue learning work instead of asking."""
        return self.backend is not None

    def ask(self, call: Call[Req, Ans], request: Req, *, stage: Stage | str, session_id: str | None = None,
            cwd: str | Path | None = None, timeout_s: float | None = None, max_turns: int | None = None,
            use_cache: bool = True, deadline: Deadline | None = None) -> Ans:
        """The call's typed answer, or JudgeFailure. `session_id` forks that live session (CLI backends).
        `deadline` caps every attempt (a retry included) to the time left; with too little left, no call is made."""
        if not isinstance(request, call.request_type):
            raise TypeError(f"{call.name} takes a {call.request_type.__name__}, got {type(request).__name__}")
        stage_name = stage.value if isinstance(stage, Stage) else str(stage)
        backend = self.backend
        if backend is None:
            failure = JudgeFailure(self.build_failure.kind if self.build_failure else FailureKind.NO_BACKEND,
                                   self.build_failure.detail if self.build_failure else
                                   "no model backend configured or found (model-free mode)", call=call.name)
            self._account(call, stage_name, None, 0, cached=False, failure=failure, attempt=1)
            raise failure

        key = None
        if use_cache and self.cache is not None:
            key = cache_key(call.name, call.version, backend.name, backend.model, canonical(request), session_id)
            hit = self._from_cache(call, request, key, stage_name)
            if hit is not None:
                return hit

        prompt = call.render(request)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            start = time.monotonic()
            reply: BackendReply | None = None
            limit = timeout_s or self.timeout_s
            if deadline is not None:
                if not deadline.allows():
                    failure = JudgeFailure(FailureKind.TIMEOUT, "no time left before the deadline: not asked")
                    failure.located(call.name, backend.name)
                    raise failure
                limit = deadline.cap(limit)
            try:
                reply = backend.complete(BackendRequest(
                    call=call.name, prompt=prompt, schema=call.schema, timeout_s=limit,
                    session_id=session_id, cwd=str(cwd) if cwd is not None else None, tools=call.tools,
                    reads=tuple(str(d) for d in call.reads(request)),
                    max_turns=max_turns or call.max_turns, payload=request))
                answer = call.answer(reply.data, request)
            except AnswerInvalid as invalid:
                failure = JudgeFailure(FailureKind.SCHEMA, f"answer breaks the schema: {invalid}",
                                       problems=invalid.problems)
            except JudgeFailure as raised:
                failure = raised
            else:
                ms = _ms(start)
                if key is not None and self.cache is not None:
                    try:
                        self.cache.put(key, reply.data)
                    except (OSError, LockTimeout):
                        pass  # the cache is an optimisation: failing to store an answer does not unmake it
                self._account(call, stage_name, backend, ms, cached=False, failure=None, attempt=attempt, reply=reply)
                return answer
            failure.located(call.name, backend.name)
            self._account(call, stage_name, backend, _ms(start), cached=False, failure=failure, attempt=attempt,
                          reply=reply)
            if failure.kind not in RETRYABLE or attempt == MAX_ATTEMPTS:
                raise failure
            prompt = call.render(request) + _retry_note(failure)
        raise AssertionError("unreachable")  # pragma: no cover

    def _from_cache(self, call: Call[Req, Ans], request: Req, key: str, stage: str) -> Ans | None:
        assert self.cache is not None
        start = time.monotonic()
        data = self.cache.get(key)
        if data is None:
            return None
        try:
            answer = call.answer(data, request)
        except AnswerInvalid:
            return None  # stale or garbled: ask again (the fresh answer overwrites it)
        self._account(call, stage, self.backend, _ms(start), cached=True, failure=None, attempt=0)
        return answer

    def _account(self, call: Call[Any, Any], stage: str, backend: Backend | None, ms: int, *, cached: bool,
                 failure: JudgeFailure | None, attempt: int, reply: BackendReply | None = None) -> None:
        if self.events_path is None:
            return
        from rose.store import events

        try:
            self._append(events, call, stage, backend, ms, cached, failure, attempt, reply)
        except (OSError, LockTimeout):
            pass  # accounting must not turn a valid judgment (or a typed failure) into a different error

    def _append(self, events: Any, call: Call[Any, Any], stage: str, backend: Backend | None, ms: int, cached: bool,
                failure: JudgeFailure | None, attempt: int, reply: BackendReply | None) -> None:
        events.append(
            self.events_path, events.EventKind.JUDGE,
            call=call.name, version=call.version, stage=stage,
            backend=backend.name if backend else None, model=(backend.model or "default") if backend else None,
            ms=ms, cached=cached, ok=failure is None, failure=failure.kind.value if failure else None,
            detail=failure.detail[:300] if failure else None, attempt=attempt,
            input_tokens=reply.input_tokens if reply and not cached else None,
            output_tokens=reply.output_tokens if reply and not cached else None,
            cost_usd=reply.cost_usd if reply and not cached else None,
        )


def _ms(start: float) -> int:
    return int((time.monotonic() - start) * 1000)


def _retry_note(failure: JudgeFailure) -> str:
    problems = failure.problems or [failure.detail]
    listed = "\n".join(f"- {p}" for p in problems[:10])
    return ("\n## Your previous answer was rejected\n"
            "It did not fit the required shape:\n" + listed + "\nAnswer again with one JSON object that fits the "
            "schema exactly and satisfies every rule above.\n")
