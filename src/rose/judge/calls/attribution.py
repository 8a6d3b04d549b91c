"""Calls that read outcomes: assess (how did the session go, which served lessons were actually used) and
rank_repairs (which dropped claim's absence most likely caused a failure)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rose.judge import schema as sch
from rose.judge.calls.base import ID, REASON, Call, Lesson, each_exactly_once
from rose.judge.prompt import Prompt, one_line
from rose.model import EpisodeOutcome

# -- assess --------------------------------------------------------------------------------------------------------

ASSESS_VERSION = 1


SessionOutcome = EpisodeOutcome  # success | failure | partial | unknown


@dataclass
class AssessRequest:
    """The session's opening prompt, a digest of what happened, and each lesson as it was served."""

    prompt: str
    digest: str
    served: list[Lesson]


@dataclass
class LessonUse:
    id: str
    used: bool
    reason: str


@dataclass
class AssessAnswer:
    version: ClassVar[int] = ASSESS_VERSION
    outcome: SessionOutcome
    accepted_summary: str
    lessons: list[LessonUse]

    @property
    def used(self) -> list[str]:
        return [u.id for u in self.lessons if u.used]

    @property
    def unused(self) -> list[str]:
        return [u.id for u in self.lessons if not u.used]


ASSESS_SCHEMA = sch.obj(
    outcome=sch.enum(*(o.value for o in SessionOutcome)),
    accepted_summary=sch.text("What the agent ended up doing that the user accepted; empty-handed work says so.",
                              2000),
    lessons=sch.array(sch.obj(id=ID, used=sch.boolean(), reason=REASON),
                      "One entry per served lesson.", max_items=200),
)


def _render_assess(r: AssessRequest) -> str:
    served = Prompt("how did this session go, and which served lessons were actually used?", """
Below are a coding session's opening prompt, a digest of what happened (messages, commands, results and the agent's
own reasoning) and the lessons rose served into it.

1. outcome: success (the user's goal was reached and accepted), failure (it was not, or the user rejected it),
   partial (some of it), unknown (the digest does not show).
2. accepted_summary: in a few sentences, what the agent ended up doing that the user accepted.
3. For every served lesson, decide `used`. Be strict; the default is false. A lesson was used only when the digest
   shows it changed what the agent did or concluded: its advice was followed, its parameter or step appears, or the
   agent's reasoning cites it. Being on-topic is not being used. Being read and found irrelevant is not being used.
   Being served and then contradicted (the agent did the opposite) is not being used. When unsure, false.
   Give a short reason citing what in the digest shows it.""") \
        .data("prompt", r.prompt, "The session's opening prompt:") \
        .data("digest", r.digest, "Digest of the session:")
    for lesson in r.served:
        served.data(f"lesson {one_line(lesson.id, 80)}", lesson.text(), "")
    if not r.served:
        served.data("lessons", "(no lessons were served)", "Served lessons:")
    return served.render('Return {"outcome", "accepted_summary", "lessons": [{"id", "used", "reason"}, ...]} with '
                         "one entry per served lesson.")


ASSESS: Call[AssessRequest, AssessAnswer] = Call(
    name="assess", version=ASSESS_VERSION, question="how did this session go, and which lessons actually bore on it?",
    request_type=AssessRequest, answer_type=AssessAnswer, schema=ASSESS_SCHEMA, render=_render_assess,
    parse=lambda d: AssessAnswer(SessionOutcome(d["outcome"]), d["accepted_summary"],
                                 [LessonUse(u["id"], u["used"], u["reason"]) for u in d["lessons"]]),
    checks=lambda d, r: each_exactly_once([u["id"] for u in d["lessons"]], [s.id for s in r.served], "lessons"))

# -- rank_repairs --------------------------------------------------------------------------------------------------

RANK_REPAIRS_VERSION = 1


@dataclass
class ClaimRef:
    """A dropped claim offered for descent, with a handle the caller chose (e.g. c1, c2, ...)."""

    id: str
    claim: str
    kind: str = "fact"


@dataclass
class RankRepairsRequest:
    lesson: Lesson        # the short form that was served when the work failed
    failure: str          # what went wrong
    claims: list[ClaimRef]


@dataclass
class RepairScore:
    id: str
    score: float
    reason: str


@dataclass
class RankRepairsAnswer:
    version: ClassVar[int] = RANK_REPAIRS_VERSION
    scores: list[RepairScore]

    def score(self, claim_id: str) -> float:
        return next(s.score for s in self.scores if s.id == claim_id)


RANK_REPAIRS_SCHEMA = sch.obj(
    scores=sch.array(sch.obj(
        id=ID,
        score=sch.number("0 = its absence cannot explain the failure, 1 = it almost certainly does.",
                         minimum=0, maximum=1),
        reason=REASON,
    ), "One entry per claim.", max_items=200),
)


def _render_rank(r: RankRepairsRequest) -> str:
    return Prompt("which dropped detail explains this failure?", """
A lesson was shortened by compression, and each piece of detail the compression removed was recorded as a claim.
Work guided by the short form then failed. For every dropped claim, score from 0 to 1 how likely it is that the
claim's absence from the short form caused this failure: would having it have prevented the failure? Judge by
meaning, not shared words: "parse the body, not the status code" explains "treated HTTP 200 as success" while sharing
none of its words. Score every claim once, by its id, with a short reason.""") \
        .data("lesson", r.lesson.text(), "The short form that was served:") \
        .data("failure", r.failure, "What went wrong:") \
        .lines("claims", (f"{c.id} [{c.kind}] {c.claim}" for c in r.claims), "Dropped claims (id [kind] claim):") \
        .render('Return {"scores": [{"id", "score", "reason"}, ...]} with one entry per claim.')


RANK_REPAIRS: Call[RankRepairsRequest, RankRepairsAnswer] = Call(
    name="rank_repairs", version=RANK_REPAIRS_VERSION,
    question="how likely is it that each dropped claim's absence caused this failure?",
    request_type=RankRepairsRequest, answer_type=RankRepairsAnswer, schema=RANK_REPAIRS_SCHEMA,
    render=_render_rank,
    parse=lambda d: RankRepairsAnswer([RepairScore(s["id"], float(s["score"]), s["reason"]) for s in d["scores"]]),
    checks=lambda d, r: each_exactly_once([s["id"] for s in d["scores"]], [c.id for c in r.claims], "scores"))
