"""Calls that mint memories from a transcript: extract (quote-first user rules behind a LEARN/NONE gate, plus
orientation and experience records that cite message handles) and verify (does the cited evidence support it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from rose.judge import schema as sch
from rose.judge.calls.base import REASON, Call, Candidate, Message
from rose.judge.prompt import Prompt, one_line
from rose.model import Outcome, Scope

# -- extract -------------------------------------------------------------------------------------------------------

EXTRACT_VERSION = 2
MAX_LESSONS = 3                 # one strong lesson beats three weak ones
MAX_ORIENTATION = 3
EXPERIENCE_WORDS = (150, 600)   # an experience record's length, all four sections together
EVIDENCE_ROLES = ("user", "tool")


class Decision(str, Enum):
    LEARN = "LEARN"
    NONE = "NONE"


class Confidence(str, Enum):
    HIGH = "high"       # a direct correction
    MEDIUM = "medium"   # a stated preference or rule


@dataclass
class ExtractRequest:
    """The transcript as addressable messages (handles like session://s1/message/4), the existing lessons (one line
    each, to avoid restating them) and what the project is. `want_experience` is the harness's value gate: when
    False the answer must not contain an experience record."""

    messages: list[Message]
    existing: list[Candidate] = field(default_factory=list)
    project: str = ""
    want_experience: bool = False


@dataclass
class ExtractedLesson:
    quote: str          # the user's words, verbatim
    title: str
    body: str
    confidence: Confidence
    scope: Scope
    tags: list[str]


@dataclass
class OrientationRecord:
    title: str
    body: str
    evidence: list[str]   # 1-4 handles of user or tool messages


@dataclass
class ExperienceRecord:
    title: str
    objective: str
    durable_knowledge: str
    outcome_and_evidence: str
    reuse_conditions: str
    outcome: Outcome
    evidence: list[str]   # 1-6 handles

    SECTIONS: ClassVar[tuple[str, ...]] = ("objective", "durable_knowledge", "outcome_and_evidence", "reuse_conditions")

    def words(self) -> int:
        return sum(len(getattr(self, s).split()) for s in self.SECTIONS)

    def markdown(self) -> str:
        heads = ("Objective", "Durable knowledge", "Outcome and evidence", "Reuse conditions")
        return "\n\n".join(f"## {h}\n\n{getattr(self, s).strip()}" for h, s in zip(heads, self.SECTIONS)) + "\n"


@dataclass
class ExtractAnswer:
    version: ClassVar[int] = EXTRACT_VERSION
    decision: Decision
    lessons: list[ExtractedLesson]
    orientation: list[OrientationRecord]
    experience: ExperienceRecord | None


HANDLE = sch.string("A message handle copied exactly from the transcript.", min_length=1, max_length=200)

EXTRACT_SCHEMA = sch.obj(
    decision=sch.enum(*(d.value for d in Decision)),
    lessons=sch.array(sch.obj(
        quote=sch.text("The user's words, copied verbatim from one user message.", 1000),
        title=sch.text("A short title.", 120),
        body=sch.text("The lesson: what to do or avoid, and when.", 4000),
        confidence=sch.enum(*(c.value for c in Confidence)),
        scope=sch.enum(*(s.value for s in Scope)),
        tags=sch.array(sch.string(min_length=1, max_length=40), max_items=8),
    ), "Empty when decision is NONE.", max_items=MAX_LESSONS),
    orientation=sch.array(sch.obj(
        title=sch.text("A short title.", 120),
        body=sch.text("How the subject works: a durable, descriptive fact or decision.", 2000),
        evidence=sch.array(HANDLE, "1 to 4 handles of user or tool messages that show it.", min_items=1, max_items=4),
    ), max_items=MAX_ORIENTATION),
    experience=sch.nullable(sch.obj(
        title=sch.text("A short title.", 120),
        objective=sch.text("What the work set out to do.", 2000),
        durable_knowledge=sch.text("The non-obvious knowledge that would save searches or failed attempts.", 4000),
        outcome_and_evidence=sch.text("How it ended and what shows it.", 2000),
        reuse_conditions=sch.text("When this applies again, and when it does not.", 2000),
        outcome=sch.enum(*(o.value for o in Outcome)),
        evidence=sch.array(HANDLE, "1 to 6 handles, including real user or tool messages.", min_items=1, max_items=6),
    )),
)


def _render_extract(r: ExtractRequest) -> str:
    experience = (
        "Experience (optional): if, and only if, the work holds substantial non-obvious knowledge that would save a "
        "later session several searches or failed attempts, write one experience record of 150 to 600 words in four "
        "sections (objective, durable knowledge, outcome and evidence, reuse conditions), its outcome (verified: a "
        "check was run and passed; failed; unknown: honestly not shown, including a pass on someone's reading "
        "alone) and 1 to 6 evidence handles including real user or tool messages. Reject generic advice, activity "
        "logs, transient status, secrets, exact line numbers and facts one obvious search would find: then null."
        if r.want_experience else "Experience: not requested for this transcript; `experience` must be null.")
    transcript = [f"[{m.handle}] {m.role}: {m.text}" for m in r.messages]
    return Prompt("what did the user teach in this session?", f"""
Read the transcript and extract what a later session should remember. Quote first.

Lessons (procedural: do / avoid). Only user corrections and user-stated rules qualify: an explicit correction, a
declared project convention, preference or constraint, or a repeated correction of the same mistake. Things the
assistant figured out on its own, one-off debugging steps, generic developer knowledge and anything derivable by
reading the code do not qualify, and nothing already in the existing lessons listed below.
First decide: LEARN if at least one such lesson exists, else NONE (then `lessons` is empty). Return at most
{MAX_LESSONS} lessons: one strong lesson beats three weak ones. Each carries `quote`: the user's own words copied
verbatim (exact characters) from one user message that states or corrects it; a lesson without a verbatim quote is
not a lesson. The quote states the rule itself, at least two words, one naming its subject: "yes", "do it" or "wrong"
alone ground nothing. confidence: high for a direct correction, medium for a stated preference. scope: global only when it is
clearly about how this user works everywhere or about a tool used anywhere; project otherwise.

Orientation (descriptive: how the subject works, key decisions, constraints), independent of the decision: at most
{MAX_ORIENTATION} records, each citing 1 to 4 handles of user or tool messages that show it. An empty list is fine.

{experience}

Message handles are the bracketed prefixes, e.g. [session://s1/message/4]; copy them exactly, without brackets.""") \
        .data("transcript", "\n\n".join(transcript), "The transcript (each message: [handle] role: text):") \
        .lines("existing", (c.line() for c in r.existing), "Lessons that exist already (id | title | gist):") \
        .data("project", r.project or "(unknown)", "The project:") \
        .render('Return {"decision": "LEARN"|"NONE", "lessons": [...], "orientation": [...], "experience": {...}|null}.')


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _check_extract(d: dict[str, Any], r: ExtractRequest) -> list[str]:
    out: list[str] = []
    if d["decision"] == Decision.NONE.value and d["lessons"]:
        out.append("lessons: must be empty when decision is NONE")
    if d["decision"] == Decision.LEARN.value and not d["lessons"]:
        out.append("lessons: decision LEARN needs at least one lesson")
    # Quotes are deliberately not checked here: a quote that is not the user's words rejects that one lesson
    # (rose.learn.mint checks each against the full transcript), not the whole answer.
    # Orientation and experience evidence is checked per record in rose.learn.mint: one record citing the wrong
    # message is rejected alone, the rest of the answer stands.
    exp = d["experience"]
    if exp is not None:
        if not r.want_experience:
            out.append("experience: must be null (not requested)")
        words = sum(len(exp[s].split()) for s in ExperienceRecord.SECTIONS)
        lo, hi = EXPERIENCE_WORDS
        if not lo <= words <= hi:
            out.append(f"experience: {words} words; an experience record has {lo} to {hi}")
    return out


def _parse_extract(d: dict[str, Any]) -> ExtractAnswer:
    exp = d["experience"]
    return ExtractAnswer(
        decision=Decision(d["decision"]),
        lessons=[ExtractedLesson(x["quote"], x["title"], x["body"], Confidence(x["confidence"]), Scope(x["scope"]),
                                 list(x["tags"])) for x in d["lessons"]],
        orientation=[OrientationRecord(x["title"], x["body"], list(x["evidence"])) for x in d["orientation"]],
        experience=None if exp is None else ExperienceRecord(
            exp["title"], exp["objective"], exp["durable_knowledge"], exp["outcome_and_evidence"],
            exp["reuse_conditions"], Outcome(exp["outcome"]), list(exp["evidence"])),
    )


EXTRACT: Call[ExtractRequest, ExtractAnswer] = Call(
    name="extract", version=EXTRACT_VERSION,
    question="which user corrections and stated rules (quoted verbatim) should be remembered, plus orientation/experience?",
    request_type=ExtractRequest, answer_type=ExtractAnswer, schema=EXTRACT_SCHEMA, render=_render_extract,
    parse=_parse_extract, checks=_check_extract)

# -- verify --------------------------------------------------------------------------------------------------------

VERIFY_VERSION = 1


@dataclass
class VerifyRequest:
    claim: str                 # the lesson, orientation or experience text to check
    evidence: list[Message]    # the quoted or cited messages


@dataclass
class VerifyAnswer:
    version: ClassVar[int] = VERIFY_VERSION
    supported: bool
    reason: str


VERIFY_SCHEMA = sch.obj(supported=sch.boolean(), reason=REASON)


def _render_verify(r: VerifyRequest) -> str:
    return Prompt("does the cited evidence support this claim?", """
A memory is about to be stored, citing the messages below as its evidence. A citation that exists is not yet a
citation that supports the claim. Decide whether the evidence, read as written, supports everything the claim states:
supported is false if the claim adds anything the evidence does not show, generalises beyond it, inflates an outcome
(calls unverified work verified) or misreads it. When unsure, false.""") \
        .data("claim", r.claim, "The claim:") \
        .data("evidence", "\n\n".join(f"[{one_line(m.handle, 200)}] {m.role}: {m.text}" for m in r.evidence)
              or "(no evidence)", "The evidence:") \
        .render('Return {"supported": true|false, "reason"}.')


VERIFY: Call[VerifyRequest, VerifyAnswer] = Call(
    name="verify", version=VERIFY_VERSION, question="does the quoted or cited evidence support the claim?",
    request_type=VerifyRequest, answer_type=VerifyAnswer, schema=VERIFY_SCHEMA, render=_render_verify,
    parse=lambda d: VerifyAnswer(d["supported"], d["reason"]))
