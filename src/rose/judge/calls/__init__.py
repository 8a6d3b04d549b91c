"""Every semantic question rose asks, each a typed request, a strict schema, a prompt and a typed answer.

    call            module           question
    relevance       recall           which remembered lessons bear on this prompt?
    select          recall           which lessons does this work need? (a forked session searches the store)
    route           recall           which selection rule (when <kind of task>, then ...) does this session teach?
    assess          attribution      how did this session go, and which served lessons were actually used?
    rank_repairs    attribution      how likely is it that each dropped claim's absence caused this failure?
    related         consolidation    which existing lessons cover the same subject as this new one?
    scope           consolidation    does this lesson belong to this repo, or everywhere?
    reconcile       consolidation    duplicate / refines / contradicts / specialises / orthogonal?
    merge           consolidation    what shared parent generalises lessons used together?
    compress        compression      a shorter form of this lesson, declaring every dropped claim
    replay_probe    compression      given this lesson, how would you approach the original prompt?
    replay_judge    compression      does that approach reproduce the accepted outcome?
    extract         extraction       which user corrections and stated rules (quoted verbatim) should be remembered?
    verify          extraction       does the quoted or cited evidence support the claim?
    evolve          evolution        which skill or guardrail, if any, should this grounded memory become?
    consolidate     retention        one shorter record in place of two similar ones?
    verify_consolidation retention   may that shorter record replace the two it was made from?
    recurrence      retention        does a rule restated in several projects govern how the user works everywhere?
    probe           probe            health check: echo a token (rose doctor --probe)

Use the constants (`calls.ASSESS`) with `Judge.ask`; `CALLS` maps each name to its call.

Names load lazily: `calls.RELEVANCE` imports only calls/recall.py, so the UserPromptSubmit hook does not pay for
the dataclasses of the other seventeen calls.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rose import lazy

_MODULES: dict[str, tuple[str, ...]] = {
    "attribution": (
        "ASSESS", "RANK_REPAIRS", "AssessAnswer", "AssessRequest", "ClaimRef", "LessonUse", "RankRepairsAnswer",
        "RankRepairsRequest", "RepairScore", "SessionOutcome",
    ),
    "base": (
        "Call", "Candidate", "Lesson", "Message", "canonical",
    ),
    "compression": (
        "COMPRESS", "REPLAY_JUDGE", "REPLAY_PROBE", "CompressAnswer", "CompressRequest", "DroppedClaim",
        "ReplayJudgeAnswer", "ReplayJudgeRequest", "ReplayProbeAnswer", "ReplayProbeRequest", "ReplayVerdict",
    ),
    "consolidation": (
        "MERGE", "RECONCILE", "RELATED", "SCOPE", "LessonScope", "MergeAnswer", "MergeRequest", "ReconcileAnswer",
        "ReconcileRequest", "RelatedAnswer", "RelatedLesson", "RelatedRequest", "Relation", "ScopeAnswer",
        "ScopeRequest",
    ),
    "evolution": (
        "EVOLVE", "EvolveAnswer", "EvolveRequest", "Hypothesis", "ReplayCase",
    ),
    "extraction": (
        "EXTRACT", "VERIFY", "Confidence", "Decision", "ExperienceRecord", "ExtractAnswer", "ExtractedLesson",
        "ExtractRequest", "OrientationRecord", "VerifyAnswer", "VerifyRequest",
    ),
    "probe": (
        "PROBE", "ProbeAnswer", "ProbeRequest",
    ),
    "recall": (
        "RELEVANCE", "ROUTE", "SELECT", "Judgement", "RelevanceAnswer", "RelevanceRequest", "RouteAnswer",
        "RouteDecision", "RouteRequest", "SelectAnswer", "Selected", "SelectRequest", "Verdict",
    ),
    "retention": (
        "CONSOLIDATE", "RECURRENCE", "VERIFY_CONSOLIDATION", "ConsolidateAnswer", "ConsolidateRequest",
        "RecurrenceAnswer", "RecurrenceRequest", "RecurringRule", "VerifyConsolidationAnswer",
        "VerifyConsolidationRequest",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}
_ORDER = ("RELEVANCE", "SELECT", "ROUTE", "ASSESS", "RANK_REPAIRS", "RELATED", "SCOPE", "RECONCILE", "MERGE",
          "COMPRESS", "REPLAY_PROBE", "REPLAY_JUDGE", "EXTRACT", "VERIFY", "EVOLVE", "CONSOLIDATE",
          "VERIFY_CONSOLIDATION", "RECURRENCE", "PROBE")

__all__ = sorted([*_WHERE, "CALLS"])


def __getattr__(name: str) -> Any:
    if name == "CALLS":
        table = {call.name: call for call in (__getattr__(n) for n in _ORDER)}
        globals()["CALLS"] = table
        return table
    return lazy.export(__name__, _WHERE, name, globals())


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors only
    from rose.judge.calls.attribution import (
        ASSESS, RANK_REPAIRS, AssessAnswer, AssessRequest, ClaimRef, LessonUse, RankRepairsAnswer,
        RankRepairsRequest, RepairScore, SessionOutcome,
    )
    from rose.judge.calls.base import (
        Call, Candidate, Lesson, Message, canonical,
    )
    from rose.judge.calls.compression import (
        COMPRESS, REPLAY_JUDGE, REPLAY_PROBE, CompressAnswer, CompressRequest, DroppedClaim,
        ReplayJudgeAnswer, ReplayJudgeRequest, ReplayProbeAnswer, ReplayProbeRequest, ReplayVerdict,
    )
    from rose.judge.calls.consolidation import (
        MERGE, RECONCILE, RELATED, SCOPE, LessonScope, MergeAnswer, MergeRequest, ReconcileAnswer,
        ReconcileRequest, RelatedAnswer, RelatedLesson, RelatedRequest, Relation, ScopeAnswer,
        ScopeRequest,
    )
    from rose.judge.calls.evolution import (
        EVOLVE, EvolveAnswer, EvolveRequest, Hypothesis, ReplayCase,
    )
    from rose.judge.calls.extraction import (
        EXTRACT, VERIFY, Confidence, Decision, ExperienceRecord, ExtractAnswer, ExtractedLesson,
        ExtractRequest, OrientationRecord, VerifyAnswer, VerifyRequest,
    )
    from rose.judge.calls.probe import (
        PROBE, ProbeAnswer, ProbeRequest,
    )
    from rose.judge.calls.recall import (
        RELEVANCE, ROUTE, SELECT, Judgement, RelevanceAnswer, RelevanceRequest, RouteAnswer,
        RouteDecision, RouteRequest, SelectAnswer, Selected, SelectRequest, Verdict,
    )
    from rose.judge.calls.retention import (
        CONSOLIDATE, RECURRENCE, VERIFY_CONSOLIDATION, ConsolidateAnswer, ConsolidateRequest,
        RecurrenceAnswer, RecurrenceRequest, RecurringRule, VerifyConsolidationAnswer,
        VerifyConsolidationRequest,
    )

    CALLS: dict[str, Call]
