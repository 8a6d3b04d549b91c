"""Calls that earn a lesson its shorter form: compress (a shorter lesson plus the claims it dropped), replay_probe (a
fresh process says how it would approach an old prompt with the candidate) and replay_judge (does that approach
reproduce the accepted outcome)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from rose.judge import schema as sch
from rose.judge.calls.base import REASON, Call, Lesson
from rose.judge.prompt import Prompt
from rose.model import ClaimKind

# -- compress ------------------------------------------------------------------------------------------------------

COMPRESS_VERSION = 1
CLAIM_KINDS = tuple(k.value for k in ClaimKind)


@dataclass
class CompressRequest:
    """`working_spans` is None when no reflection has recorded which sentences did work (evidence absent), and a
    list (possibly empty) when it has. Absent and empty are different: absent means compress conservatively."""

    lesson: Lesson
    preserve: list[str] = field(default_factory=list)         # hints from rejected attempts: keep these
    working_spans: list[str] | None = None
    target_ratio: float = 0.75                                 # at most this fraction of the original's length
    holders: list[str] = field(default_factory=list)          # more ids that may hold a dropped claim


@dataclass
class DroppedClaim:
    claim: str
    kind: ClaimKind
    holder: str


@dataclass
class CompressAnswer:
    version: ClassVar[int] = COMPRESS_VERSION
    title: str
    gist: str
    body: str
    dropped: list[DroppedClaim]


COMPRESS_SCHEMA = sch.obj(
    title=sch.text("The title, kept or tightened.", 120),
    gist=sch.text("One line, the routing view.", 240),
    body=sch.text("The shorter lesson.", 8000),
    dropped=sch.array(sch.obj(
        claim=sch.text("One removed piece of detail, stated so it can be re-attached on its own.", 600),
        kind=sch.enum(*CLAIM_KINDS),
        holder=sch.string("Id of the lesson whose text still holds the claim.", min_length=1, max_length=80),
    ), "Every piece of detail the shorter form no longer states.", max_items=60),
)


def _render_compress(r: CompressRequest) -> str:
    if r.working_spans is None:
        spans_note = ("No record exists of which sentences did work when this lesson was used. Compress "
                      "conservatively: a sentence with no record may simply not have come up yet.")
        spans = "(evidence absent: no reflection has recorded which sentences did work)"
    else:
        spans_note = ("These sentences were observed doing work (they changed what an agent did). Keep them; take "
                      "the reduction from everything else.")
        spans = "\n".join(r.working_spans) if r.working_spans else "(recorded, but no sentence was seen doing work)"
    holders = ", ".join(dict.fromkeys([r.lesson.id, *r.holders]))
    return Prompt("a shorter form of this lesson, and what it drops", f"""
This lesson was used on work that succeeded, which is evidence it holds slack. Write a shorter form that keeps what
made it work: at most {r.target_ratio:.0%} of its length. Keep every preserve hint (earlier attempts failed without
them). {spans_note}

Declare every piece of detail the shorter form no longer states as a dropped claim: the claim itself (so it can be
re-attached alone), its kind (parameter, step, condition, example, rationale, warning, fact) and its holder, the id
of the lesson whose text still holds it ({holders}). A shorter form that loses detail without declaring it is
rejected. Also give the title and a one-line gist.""") \
        .data("lesson", r.lesson.text(), "The lesson:") \
        .lines("preserve", r.preserve, "Preserve hints (must stay):") \
        .data("working spans", spans, "Spans observed doing work:") \
        .render('Return {"title", "gist", "body", "dropped": [{"claim", "kind", "holder"}, ...]}.')


def _check_compress(d: dict[str, Any], r: CompressRequest) -> list[str]:
    allowed = {r.lesson.id, *r.holders} - {""}
    if not allowed:
        return []
    return [f"dropped[{i}].holder: {c['holder']!r} is not one of {', '.join(sorted(allowed))}"
            for i, c in enumerate(d["dropped"]) if c["holder"] not in allowed]


COMPRESS: Call[CompressRequest, CompressAnswer] = Call(
    name="compress", version=COMPRESS_VERSION, question="a shorter form of this lesson, declaring every dropped claim",
    request_type=CompressRequest, answer_type=CompressAnswer, schema=COMPRESS_SCHEMA, render=_render_compress,
    parse=lambda d: CompressAnswer(d["title"], d["gist"], d["body"],
                                   [DroppedClaim(c["claim"], ClaimKind(c["kind"]), c["holder"]) for c in d["dropped"]]),
    checks=_check_compress)

# -- replay_probe --------------------------------------------------------------------------------------------------

REPLAY_PROBE_VERSION = 1


@dataclass
class ReplayProbeRequest:
    lesson: Lesson   # the candidate (compressed) lesson
    prompt: str      # the episode's original prompt


@dataclass
class ReplayProbeAnswer:
    version: ClassVar[int] = REPLAY_PROBE_VERSION
    approach: str


REPLAY_PROBE_SCHEMA = sch.obj(
    approach=sch.text("How you would approach the task: the steps, values and checks you would use.", 4000))


def _render_probe(r: ReplayProbeRequest) -> str:
    return Prompt("how would you approach this task?", """
You are given a lesson from an earlier piece of work and a task. Do not do the task. Say how you would approach it:
the steps you would take, in order, with the specific values, commands, conditions and checks you would use, as far
as the lesson and general knowledge let you. Be concrete; do not pad.""") \
        .data("lesson", r.lesson.text(), "The lesson you have:") \
        .data("task", r.prompt, "The task:") \
        .render('Return {"approach"}.')


REPLAY_PROBE: Call[ReplayProbeRequest, ReplayProbeAnswer] = Call(
    name="replay_probe", version=REPLAY_PROBE_VERSION,
    question="given this lesson, how would you approach the original prompt?",
    request_type=ReplayProbeRequest, answer_type=ReplayProbeAnswer, schema=REPLAY_PROBE_SCHEMA, render=_render_probe,
    parse=lambda d: ReplayProbeAnswer(d["approach"]))

# -- replay_judge --------------------------------------------------------------------------------------------------

REPLAY_JUDGE_VERSION = 1


class ReplayVerdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"


@dataclass
class ReplayJudgeRequest:
    prompt: str             # the episode's original prompt
    accepted_summary: str   # what the accepted work did
    approach: str           # the probe's answer


@dataclass
class ReplayJudgeAnswer:
    version: ClassVar[int] = REPLAY_JUDGE_VERSION
    verdict: ReplayVerdict
    reason: str

    @property
    def passed(self) -> bool:
        return self.verdict is ReplayVerdict.PASS


REPLAY_JUDGE_SCHEMA = sch.obj(verdict=sch.enum(*(v.value for v in ReplayVerdict)), reason=REASON)


def _render_replay_judge(r: ReplayJudgeRequest) -> str:
    return Prompt("does this approach reproduce the accepted outcome?", """
A task was once done and the result accepted; the accepted outcome is summarised below. Another agent, given only a
lesson, described how it would approach the same task. Decide whether following that approach would reproduce the
accepted outcome: it must contain every element the accepted outcome depended on (the values, steps and conditions
that mattered) and nothing that contradicts it. Missing scaffolding or brevity is not a failure; a missing or wrong
essential detail is. When unsure, fail.""") \
        .data("task", r.prompt, "The task:") \
        .data("accepted outcome", r.accepted_summary, "The accepted outcome:") \
        .data("approach", r.approach, "The proposed approach:") \
        .render('Return {"verdict": "pass"|"fail", "reason"}.')


REPLAY_JUDGE: Call[ReplayJudgeRequest, ReplayJudgeAnswer] = Call(
    name="replay_judge", version=REPLAY_JUDGE_VERSION,
    question="does the probe's approach reproduce the accepted outcome?",
    request_type=ReplayJudgeRequest, answer_type=ReplayJudgeAnswer, schema=REPLAY_JUDGE_SCHEMA,
    render=_render_replay_judge, parse=lambda d: ReplayJudgeAnswer(ReplayVerdict(d["verdict"]), d["reason"]))
