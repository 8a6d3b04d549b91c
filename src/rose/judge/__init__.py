"""The judge: every question about meaning is a model call behind a strict JSON schema, cached, and fail-closed.

    from rose.judge import Judge, JudgeFailure, Stage, calls
    judge = Judge.for_store(store, settings)
    try:
        answer = judge.ask(calls.ASSESS, calls.AssessRequest(prompt, digest, served), stage=Stage.ATTRIBUTION)
    except JudgeFailure as failure:
        ...  # no judgment: skip or queue the work; never treat it as a pass or as "nothing applied"

Layout: calls/ (one module per stage: the requests, schemas, prompts and answers), backends/ (claude, codex,
openai, anthropic, scripted, and the registry), cache.py, judge.py (Judge.ask), health.py (`probe`, rose doctor --probe),
schema.py (builders and the fast validator), prompt.py (untrusted-data blocks). See docs/judge.md.

Importing this package is cheap (no jsonschema, subprocess or urllib): backends load when chosen, and each name
loads its own module on first use, so `rose doctor`'s make_backend does not define the calls' dataclasses.
"""
from __future__ import annotations

import importlib

from rose import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.judge import calls
    from rose.judge.backends.base import (Backend, BackendReply, BackendRequest, make_backend, register_backend,
                                          registered)
    from rose.judge.backends.scripted import Scripted
    from rose.judge.cache import JudgeCache
    from rose.judge.errors import AnswerInvalid, FailureKind, JudgeFailure
    from rose.judge.health import ProbeResult, probe
    from rose.judge.judge import Judge, Stage

_WHERE = {
    "Backend": "backends.base", "BackendReply": "backends.base", "BackendRequest": "backends.base",
    "make_backend": "backends.base", "register_backend": "backends.base", "registered": "backends.base",
    "Scripted": "backends.scripted", "JudgeCache": "cache", "AnswerInvalid": "errors", "FailureKind": "errors",
    "JudgeFailure": "errors", "Judge": "judge", "Stage": "judge", "ProbeResult": "health", "probe": "health",
}

__all__ = [
    "AnswerInvalid", "Backend", "BackendReply", "BackendRequest", "FailureKind", "Judge", "JudgeCache",
    "JudgeFailure", "ProbeResult", "Scripted", "Stage", "calls", "make_backend", "probe", "register_backend",
    "registered",
]


def __getattr__(name: str) -> Any:
    if name == "calls":   # a submodule (itself lazy): importing it sets the attribute
        return importlib.import_module("rose.judge.calls")
    return lazy.export(__name__, _WHERE, name, globals())
