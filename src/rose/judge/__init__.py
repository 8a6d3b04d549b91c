"""The judge: every question about meaning is a model call behind a strict JSON schema, cached, and fail-closed.

    from rose.judge import Judge, JudgeFailure, Stage, calls
    judge = Judge.for_store(store, settings)
    try:
        answer = judge.ask(calls.ASSESS, calls.AssessRequest(prompt, digest, served), stage=Stage.ATTRIBUTION)
    except JudgeFailure as failure:
        ...  # no judgment: skip or queue the work; never treat it as a pass or as "nothing applied"

Layout: calls/ (one module per stage: the requests, schemas, prompts and answers), backends/ (claude, codex,
openai, anthropic, scripted, and the registry), cache.py, judge.py (Judge.ask), probe.py (rose doctor --probe),
schema.py (builders and the fast validator), prompt.py (untrusted-data blocks). See docs/judge.md.

Importing this package is cheap (no jsonschema, subprocess or urllib): backends load when chosen.
"""
from __future__ import annotations

from rose.judge import calls
from rose.judge.backends.base import (Backend, BackendReply, BackendRequest, make_backend, register_backend,
                                      registered)
from rose.judge.backends.scripted import Scripted
from rose.judge.cache import JudgeCache
from rose.judge.errors import AnswerInvalid, FailureKind, JudgeFailure
from rose.judge.judge import Judge, Stage
from rose.judge.probe import ProbeResult, probe

__all__ = [
    "AnswerInvalid", "Backend", "BackendReply", "BackendRequest", "FailureKind", "Judge", "JudgeCache",
    "JudgeFailure", "ProbeResult", "Scripted", "Stage", "calls", "make_backend", "probe", "register_backend",
    "registered",
]
