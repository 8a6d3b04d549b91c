"""The smallest call there is: echo a nonce. `rose doctor --probe` uses it to prove a backend answers end to end
(process or HTTP, structured output, parsing) and to time it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rose.judge import schema as sch
from rose.judge.calls.base import Call
from rose.judge.prompt import Prompt

PROBE_VERSION = 1


@dataclass
class ProbeRequest:
    nonce: str


@dataclass
class ProbeAnswer:
    version: ClassVar[int] = PROBE_VERSION
    echo: str


PROBE_SCHEMA = sch.obj(echo=sch.string("The token, copied exactly.", max_length=200))


def _render(r: ProbeRequest) -> str:
    return Prompt("health check", "Copy the token in the data block below into `echo`, exactly.") \
        .data("token", r.nonce).render('Return {"echo": "<the token>"}.')


def _check(d: dict[str, Any], r: ProbeRequest) -> list[str]:
    return [] if d["echo"].strip() == r.nonce else [f"echo: expected the token {r.nonce!r}, got {d['echo']!r}"]


PROBE: Call[ProbeRequest, ProbeAnswer] = Call(
    name="probe", version=PROBE_VERSION, question="health check: echo this token",
    request_type=ProbeRequest, answer_type=ProbeAnswer, schema=PROBE_SCHEMA, render=_render,
    parse=lambda d: ProbeAnswer(d["echo"].strip()), checks=_check, max_turns=2)
