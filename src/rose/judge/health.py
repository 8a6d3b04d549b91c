"""`rose doctor --probe`: ask the backend the smallest question there is and report latency or the exact failure.

    result = probe(make_backend(settings.agent), timeout_s=30)
    print(result.line())      # "claude (default): answered in 812 ms"  |  "codex: timeout: no answer within 30s; ..."

Never cached (each probe carries a fresh nonce, and the answer must echo it, so a stale or canned reply fails).
Pass `events_path` to account the probe like any call (stage `probe`).
"""
from __future__ import annotations

import secrets
import time
from pathlib import Path

from rose.judge.backends.base import Backend
from rose.judge.calls.probe import PROBE, ProbeRequest
from rose.judge.errors import JudgeFailure
from rose.judge.judge import Judge, Stage
from rose.typedrecord import Record

PROBE_TIMEOUT_S = 30.0


class ProbeResult(Record, frozen=True):
    ok: bool
    backend: str          # "none" in model-free mode
    model: str
    ms: int
    failure: str | None = None   # a FailureKind value
    reason: str = ""             # the exact failure message, or "" when ok

    def line(self) -> str:
        who = f"{self.backend} ({self.model or 'default'})" if self.backend != "none" else "no backend"
        if self.ok:
            return f"{who}: answered in {self.ms} ms"
        return f"{who}: {self.failure}: {self.reason}"


def probe(backend: Backend | None, *, timeout_s: float = PROBE_TIMEOUT_S, events_path: Path | None = None) -> ProbeResult:
    name = backend.name if backend is not None else "none"
    model = backend.model if backend is not None else ""
    judge = Judge(backend, events_path=events_path, timeout_s=timeout_s)
    start = time.monotonic()
    try:
        judge.ask(PROBE, ProbeRequest(nonce="rose-" + secrets.token_hex(4)), stage=Stage.PROBE, use_cache=False)
    except JudgeFailure as failure:
        return ProbeResult(False, name, model, int((time.monotonic() - start) * 1000), failure.kind.value,
                           failure.detail)
    return ProbeResult(True, name, model, int((time.monotonic() - start) * 1000))
