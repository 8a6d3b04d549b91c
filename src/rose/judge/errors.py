"""The judge's one failure type. A judgment that did not yield a valid answer is a JudgeFailure, never a pass.

    RoseError
    └── JudgeFailure(kind=FailureKind.…)   raised by Judge.ask and by every backend's complete()

`kind` says what went wrong so callers and `rose doctor` can tell "nothing is installed" from "the model spoke
nonsense". Only SCHEMA and UNPARSEABLE are retried, once, by Judge.ask; every other kind surfaces at once.
"""
from __future__ import annotations

from enum import Enum

from rose.errors import RoseError


class FailureKind(str, Enum):
    NO_BACKEND = "no_backend"          # model-free mode (nothing configured or found) or an unregistered backend
    MISSING_BINARY = "missing_binary"  # the configured CLI is not on PATH / not executable
    TIMEOUT = "timeout"                # past the deadline; the child's whole process group was killed
    EXIT = "exit"                      # the CLI exited non-zero without saying why in its JSON
    MODEL_ERROR = "model_error"        # the backend answered but reported an error (claude is_error, turn.failed)
    HTTP = "http"                      # an HTTP 4xx/5xx from an API endpoint
    UNREACHABLE = "unreachable"        # connection refused, DNS failure, TLS failure
    UNPARSEABLE = "unparseable"        # no JSON object could be read from the reply
    SCHEMA = "schema"                  # a JSON object that breaks the call's schema or its extra checks
    REFUSED = "refused"                # the model declined to answer (OpenAI `refusal`)
    CONFIG = "config"                  # the backend cannot run as configured (e.g. no model name for openai)
    SCRIPT = "script"                  # the scripted (test) backend had nothing queued and no handler


RETRYABLE = frozenset({FailureKind.SCHEMA, FailureKind.UNPARSEABLE})
# The backend itself is down or unusable (not this request's problem): a learner stops asking after a few in a row.
OUTAGE = frozenset({FailureKind.MISSING_BINARY, FailureKind.TIMEOUT, FailureKind.EXIT, FailureKind.MODEL_ERROR,
                    FailureKind.HTTP, FailureKind.UNREACHABLE, FailureKind.CONFIG})


class JudgeFailure(RoseError):
    """A model call that did not yield a valid answer. Fail closed: the caller must treat it as "no judgment"."""

    def __init__(self, kind: FailureKind, detail: str, *, call: str = "", backend: str = "",
                 status: int | None = None, problems: list[str] | None = None):
        self.kind = FailureKind(kind)
        self.detail = detail
        self.call = call
        self.backend = backend
        self.status = status
        self.problems = list(problems or [])
        super().__init__(self._message())

    def _message(self) -> str:
        where = " ".join(p for p in (f"judge {self.call}" if self.call else "judge",
                                     f"via {self.backend}" if self.backend else "") if p)
        return f"{where} failed ({self.kind.value}): {self.detail}"

    def located(self, call: str, backend: str) -> JudgeFailure:
        """The same failure, stamped with the call and backend it happened in (for messages and events)."""
        self.call = self.call or call
        self.backend = self.backend or backend
        self.args = (self._message(),)
        return self


class AnswerInvalid(ValueError):
    """Raised by a call's validation: the answer breaks the schema or an extra check. Judge.ask turns it into a
    JudgeFailure(SCHEMA); it is its own type so calls can be tested without a backend."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))
