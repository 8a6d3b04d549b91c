"""The judge's one failure type. A judgment that did not yield a valid answer is a JudgeFailure, never a pass.

    RoseError
    └── JudgeFailure(kind=FailureKind.…)   raised by Judge.ask and by every backend's complete()

`kind` says what went wrong so callers and `rose doctor` can tell "nothing is installed" from "the model spoke
nonsense". Only SCHEMA and UNPARSEABLE are retried, once, by Judge.ask; every other kind surfaces at once. The classes
live in rose.errors (the one error tree); this module re-exports them and says which kinds are retried.
"""
from __future__ import annotations

from rose.errors import AnswerInvalid, FailureKind, JudgeFailure

__all__ = ["OUTAGE", "RETRYABLE", "AnswerInvalid", "FailureKind", "JudgeFailure"]

RETRYABLE = frozenset({FailureKind.SCHEMA, FailureKind.UNPARSEABLE})
# The backend itself is down or unusable (not this request's problem): a learner stops asking after a few in a row.
OUTAGE = frozenset({FailureKind.MISSING_BINARY, FailureKind.TIMEOUT, FailureKind.EXIT, FailureKind.MODEL_ERROR,
                    FailureKind.HTTP, FailureKind.UNREACHABLE, FailureKind.CONFIG})
