"""Minting: what a session taught, grounded in what was actually said (seed 003's extraction, checked in code).

    lessons       only user corrections and stated rules, at most 3, each with a verbatim user quote that must be
                  found, in code, in a real user turn, state the rule (`ungrounded`: two words or more, one of
                  them the lesson's), and then pass the verify call
    orientation   how the subject works: cites 1-4 real user or tool messages, verified
    experience    150-600 words in four sections, with the session's outcome and 1-6 evidence handles, behind a
                  value gate, verified

Assistant prose is never evidence. A check that does not answer rejects the candidate (fail closed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rose.learn.consolidate import NewLesson, Result, consolidate
from rose.model import MemoryType, Origin, Outcome
from rose.store import Layers
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge

IMPORTANCE = {"high": 0.9, "medium": 0.6}       # a direct correction outranks a stated preference
CONFIDENCE = {"high": 0.9, "medium": 0.6}
EXPERIENCE_MIN_TOOL_RESULTS = 8                  # value gate for an outcome-unknown trajectory (seed 003)
EXPERIENCE_MIN_TOKENS = 8000
MESSAGE_TEXT_CAP = 4000                          # per message sent to extract; quotes are checked on the full text
QUOTE_MIN_WORDS = 2                              # "yes", "wrong": a reply, not a rule ("use pnpm" is one)
TURN_CONTEXT_CHARS = 1500                        # of the quoted message either side of the quote, for the scope call
# a word is a run of letters or digits; a CJK character is a word by itself (those scripts write no spaces)
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")
# words a reply or a rule's framing is made of: they show no subject the quote and the lesson share
_FRAMING = frozenset("always never every instead again yes yeah okay sure thanks right wrong good fine like thing "
                     "things really actually just dont stuff".split())


@dataclass
class Rejected:
    what: str
    reason: str


@dataclass
class MintReport:
    decision: str = "NONE"
    stored: list[Result] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)

    @property
    def minted(self) -> int:
        return sum(1 for r in self.stored if r.node is not None)


def handle(session_id: str, n: int) -> str:
    return f"session://{session_id}/message/{n}"


def mint(layers: Layers, conversation: Any, judge: Judge, settings: Settings, *, session_id: str,
         outcome: Outcome = Outcome.UNKNOWN, since: int = 0, fork_session: str | None = None) -> MintReport:
    """Extract, ground and consolidate. Raises JudgeFailure only if the extract call itself fails (the caller keeps
    the work queued); a failed check on one candidate only rejects that candidate."""
    from rose.judge import JudgeFailure, Stage, calls
    from rose.learn.consolidate import project_description
    from rose.transcripts import Role, counts, quote_in_user_turns

    messages = [m for m in conversation.messages if m.n >= since and m.role in (Role.USER, Role.ASSISTANT, Role.TOOL)
                and m.text.strip() and not m.synthetic]
    if not any(m.role is Role.USER for m in messages):
        return MintReport()
    by_handle = {handle(session_id, m.n): m for m in conversation.messages}
    stats = counts(conversation)
    want_experience = _experience_worth_asking(outcome, stats)
    from rose.redact import redact

    def shown(text: str) -> str:  # a model never sees a secret either: the texts are redacted before they go
        return text[:MESSAGE_TEXT_CAP] if conversation.redacted else redact(text[:MESSAGE_TEXT_CAP])

    request = calls.ExtractRequest(
        messages=[calls.Message(handle(session_id, m.n), m.role.value, shown(m.text)) for m in messages],
        existing=_existing(layers, " ".join(m.text for m in messages if m.role is Role.USER)[:4000]),
        project=project_description(layers), want_experience=want_experience)
    answer = judge.ask(calls.EXTRACT, request, stage=Stage.EXTRACTION, session_id=fork_session)
    report = MintReport(decision=answer.decision.value)

    def verified(claim: str, handles: list[str]) -> str | None:
        """None when the evidence supports the claim; else why not (no answer counts as no)."""
        evidence = [calls.Message(h, by_handle[h].role.value, shown(by_handle[h].text)) for h in handles]
        try:
            v = judge.ask(calls.VERIFY, calls.VerifyRequest(claim=claim, evidence=evidence), stage=Stage.EXTRACTION)
        except JudgeFailure as failure:
            return f"verify did not answer ({failure.kind.value})"
        return None if v.supported else f"verify: {v.reason}"

    if answer.decision.value == "LEARN":
        for lesson in answer.lessons[:3]:
            n = quote_in_user_turns(conversation, lesson.quote)
            if n is None:
                report.rejected.append(Rejected(lesson.title, "quote is not the user's words verbatim"))
                continue
            why = ungrounded(lesson.quote, lesson.title, lesson.body)
            if why:
                report.rejected.append(Rejected(lesson.title, why))
                continue
            why = verified(f"{lesson.title}: {lesson.body}", [handle(session_id, n)])
            if why:
                report.rejected.append(Rejected(lesson.title, why))
                continue
            report.stored.append(consolidate(layers, NewLesson(
                body=lesson.body, title=lesson.title, tags=list(lesson.tags), origin=Origin.EXTRACTION,
                importance=IMPORTANCE[lesson.confidence.value], confidence=CONFIDENCE[lesson.confidence.value],
                evidence=[handle(session_id, n)], from_user=True, quote=lesson.quote, outcome=outcome,
                user_turn=shown(_around(conversation.messages[n].text, lesson.quote, TURN_CONTEXT_CHARS)),
                seed=f"lesson|{session_id}|{n}|{lesson.quote}|{lesson.title}"), judge, settings))

    for record in answer.orientation:
        problem = _cited(record.evidence, by_handle, 1, 4)
        why = problem or verified(f"{record.title}: {record.body}", record.evidence)
        if why:
            report.rejected.append(Rejected(record.title, why))
            continue
        # descriptive knowledge of this repository: never the user's rule for every project, whoever it cites
        report.stored.append(consolidate(layers, NewLesson(
            body=record.body, title=record.title, memory_type=MemoryType.ORIENTATION, origin=Origin.REFLECTION,
            evidence=list(record.evidence), from_user=False, importance=0.5, outcome=outcome,
            seed=f"orientation|{session_id}|{'|'.join(record.evidence)}|{record.title}"), judge, settings))

    exp = answer.experience
    if exp is not None and want_experience:
        body = (f"## Objective\n{exp.objective}\n\n## Durable knowledge\n{exp.durable_knowledge}\n\n"
                f"## Outcome and evidence\n{exp.outcome_and_evidence}\n\n## Reuse conditions\n{exp.reuse_conditions}")
        problem = _cited(exp.evidence, by_handle, 1, 6)
        if not problem and exp.outcome.value in ("verified", "failed"):
            roles = {by_handle[h].role.value for h in exp.evidence}
            if not {"user", "tool"} <= roles:
                problem = "a verified or failed experience needs both user and tool evidence"
        why = problem or verified(body, exp.evidence)
        if why:
            report.rejected.append(Rejected(exp.title, why))
        else:
            report.stored.append(consolidate(layers, NewLesson(
                body=body, title=exp.title, memory_type=MemoryType.EXPERIENCE, origin=Origin.REFLECTION,
                evidence=list(exp.evidence), from_user=False, importance=0.6,
                outcome=Outcome(exp.outcome.value),
                seed=f"experience|{session_id}|{'|'.join(exp.evidence)}|{exp.title}"), judge, settings))
    owner = layers.stores()[0]
    owner.event(EventKind.LEARN, session=session_id, decision=report.decision, minted=report.minted,
                rejected=[f"{r.what}: {r.reason}" for r in report.rejected])
    return report


def ungrounded(quote: str, title: str, body: str) -> str | None:
    """Why a verbatim quote cannot ground this lesson, or None. A quote grounds a lesson when it states the rule:
    two words or more, and a word of its subject in the lesson's title or body (a word counted by its first four
    letters, so tests/testing match; stop words and a reply's framing never count). A one-word reply found in a user
    turn ("yes") would otherwise carry whatever the extractor wrote, from the repository's text, as the user's rule."""
    words = _WORD.findall(quote)
    if len(words) < QUOTE_MIN_WORDS:
        return (f"the quote is {len(words)} word{'s' if len(words) != 1 else ''}: too short to state a rule "
                f"(at least {QUOTE_MIN_WORDS})")
    if not _subject(words) & _subject(_WORD.findall(f"{title} {body}")):
        return "the quote shares no word with the lesson: it does not state it"
    return None


def _subject(words: list[str]) -> set[str]:
    from rose.words import STOPWORDS

    out = set()
    for w in words:
        w = w.lower().replace("'", "")
        if w not in STOPWORDS and w not in _FRAMING:
            out.add(w[:4])
    return out


def _around(text: str, quote: str, chars: int) -> str:
    """The message the quote was found in, or `chars` of it either side of the quote when it is longer."""
    if len(text) <= 2 * chars:
        return text
    head = next((w for w in quote.split() if len(w) > 3), quote.strip()[:20])
    at = text.find(head)
    if at < 0:
        return text[:2 * chars]
    start = max(0, at - chars)
    return ("…" if start else "") + text[start:at + len(quote) + chars] + "…"


def _experience_worth_asking(outcome: Outcome, stats: Any) -> bool:
    """The value gate: a checked outcome needs user and tool evidence; an unknown one must also be large."""
    if stats.user_turns == 0 or stats.tool_results == 0:
        return False
    if outcome in (Outcome.VERIFIED, Outcome.FAILED):
        return True
    return stats.tool_results >= EXPERIENCE_MIN_TOOL_RESULTS and stats.tokens >= EXPERIENCE_MIN_TOKENS


def _cited(handles: list[str], by_handle: dict[str, Any], lo: int, hi: int) -> str | None:
    if not lo <= len(handles) <= hi:
        return f"cites {len(handles)} messages; {lo} to {hi} are required"
    for h in handles:
        m = by_handle.get(h)
        if m is None:
            return f"cites {h}, which is not a message of this session"
        if m.role.value not in ("user", "tool") or m.synthetic:
            return f"cites {h}, which is not a user or tool message (assistant prose is never evidence)"
    return None


def _cites_user(handles: list[str], by_handle: dict[str, Any]) -> bool:
    return any(by_handle[h].role.value == "user" for h in handles if h in by_handle)


def _existing(layers: Layers, text: str) -> list[Any]:
    """A bounded, id-labelled view of what is known already, so the extractor does not restate it. Servable lessons
    only: a superseded form is known through the compression that replaced it (same title, usually the same gist),
    and a demoted or withdrawn one is not what rose holds to be true; listing them cost the extract prompt about a
    tenth of its tokens in bench/bench_compression.py and told the extractor nothing more."""
    from rose.judge import calls
    from rose.model import SERVABLE

    servable = {s.value for s in SERVABLE}
    out = []
    for store in layers.stores():
        for node_id, _score in store.index.search(text, limit=10):
            rows = store.index.rows_by_id([node_id])
            if node_id in rows and rows[node_id].status in servable:
                out.append(calls.Candidate(node_id, rows[node_id].title, rows[node_id].gist))
    return out[:15]
