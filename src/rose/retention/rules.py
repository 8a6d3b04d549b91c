"""The decision rules of retention, as pure functions over named constants (seed 003, "Long-run retention").

The runtime (rose.retention.maintain, rose.learn.attribute, recall's cold paging) and the benchmark
(bench/bench_retention.py) call these same functions, so what is measured is what runs. Nothing here reads a file,
a clock or a model: every input is an argument.

    1  importance moves with evidence      next_importance, effective_importance, archive_now
    2  utility                             utility, age_days, confidence_term
    3  two watermarks per scope and type   watermarks, eviction (over units: a record and the detail below it)
       one consolidation attempt           words, jaccard, nominate, consolidated_traits
    4  the cold archive                    preview, cold_match
    5  weak and stale                      weak_and_stale
    6  recurrence                          recurs, promotion_choice

Importance is a number in [0, 1] (what a lesson's file says it was minted with, moved by evidence); tokens are
rose.tokens estimates; ages are days.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone

from rose.typedrecord import Record

# -- 1. importance moves with evidence ---------------------------------------------------------------------------
IMPORTANCE_FLOOR = 0.1   # importance at which repeated negative credit archives a record at once: it has misled
                         # the work it was used on, again and again
IMPORTANCE_CEIL = 1.0    # the top of the scale: evidence raises importance towards it, never past it
EVIDENCE_SHARE = 0.25    # one attributed use moves importance this share of the way towards its outcome: towards
                         # the ceiling on a successful session, towards 0 on a failed one. Bounded and diminishing,
                         # so frequency of use cannot outweigh correctness; and a lesson settles at about the share
                         # of its sessions that succeed, so a failure it did not cause (a session that failed for
                         # a fact no served lesson held) is weighed against its successes rather than piling up.
                         # Failures in a row take a medium mint (0.6) to the floor in seven, a high one (0.9) in
                         # eight: what misleads every time it is used goes; a lesson whose sessions fail for other
                         # reasons as often as they succeed stays near 0.5
# Measured (bench/bench_retention.py): a fixed step of 0.15 down against 10% of the headroom up took a lesson whose
# sessions succeeded half the time to the floor, and archived the rules a whole family of tasks needed.


def effective_importance(minted: float, learned: float | None) -> float:
    """What retention and recall read: the evidence-moved value when evidence has moved it, else the minted one."""
    value = minted if learned is None else learned
    return min(IMPORTANCE_CEIL, max(0.0, float(value)))


def next_importance(current: float, outcome: str) -> float:
    """Importance after one *attributed use* on a session with this outcome ("success", "failure"; anything else,
    a partial or unknown outcome, leaves it as it is). Exposure without use never reaches here: it is neutral."""
    if outcome == "success":
        return round(min(IMPORTANCE_CEIL, current + EVIDENCE_SHARE * (IMPORTANCE_CEIL - current)), 4)
    if outcome == "failure":
        return round(max(IMPORTANCE_FLOOR, current - EVIDENCE_SHARE * current), 4)
    return current


def archive_now(importance: float) -> bool:
    """Has negative credit brought it to the floor? Then it moves to the cold archive at once, not at the next
    budget crossing: a record that keeps misleading must stop being served."""
    return importance <= IMPORTANCE_FLOOR + 1e-9


# -- 2. utility --------------------------------------------------------------------------------------------------
W_IMPORTANCE = 0.55        # the weights of U (seed 003): correctness first,
W_CONFIDENCE = 0.15        # then how sure the evidence was,
W_USES = 0.15              # how often it demonstrably changed the work,
W_RECENCY = 0.15           # and how lately
USES_FULL = 10             # material uses at which the use term is full: ln(1 + uses) / ln(1 + 10), capped at 1
RECENCY_SCALE_DAYS = 180.0  # days without a material use at which the recency term has halved: 0.15 / (1 + age/180)
HIGH_CONFIDENCE = 0.8      # a confidence at or above this is high (C = 1; a direct correction mints 0.9), else C = 0.5


def confidence_term(confidence: float) -> float:
    return 1.0 if confidence >= HIGH_CONFIDENCE else 0.5


def utility(importance: float, confidence: float, uses: int, age: float) -> float:
    """U = 0.55 I + 0.15 C + 0.15 min(1, ln(1 + uses) / ln(11)) + 0.15 / (1 + age / 180), in [0, 1].

    Task relevance is deliberately absent: maintenance has no current task, and relevance is recall's signal."""
    use_term = min(1.0, math.log1p(max(0, uses)) / math.log1p(USES_FULL))
    recency = 1.0 / (1.0 + max(0.0, age) / RECENCY_SCALE_DAYS)
    return (W_IMPORTANCE * min(1.0, max(0.0, importance)) + W_CONFIDENCE * confidence_term(confidence)
            + W_USES * use_term + W_RECENCY * recency)


def _when(stamp: str) -> datetime | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


CLOCK_SKEW = timedelta(days=1)   # a time this far ahead of now is a clock's fault; further ahead, no time at all


def age_days(last_used: str, created: str, now: datetime) -> float:
    """Days since the last material use, or since creation when it was never used. An unreadable time counts as
    now: a record is never aged out on a stamp rose cannot read. A use stamped in the future (a wrong clock, or a
    committed usage line that would keep a lesson "just used" for ever) is no use: the age runs from creation."""
    used = _when(last_used)
    when = used if used is not None and used <= now + CLOCK_SKEW else _when(created)
    if when is None:
        return 0.0
    return max(0.0, (now - when).total_seconds() / 86400.0)


# -- 3. watermarks per scope and memory type -----------------------------------------------------------------------
SOFT_SHARE = 0.8   # the soft watermark, as a share of the hard one: eviction stops there, so the store is not
                   # trimmed again by the very next record (hysteresis)
# Hard token budgets of the hot store, per (scope, memory type), in estimated tokens of the records' bodies (a
# record and the detail below it: a compressed lesson's superseded forms count with it). Fixed, not settings: they
# are what keeps recall sharp, and recall's own budgets (a 2,000-token pack, 512 of it global) are fixed too.
HARD_TOKENS: dict[tuple[str, str], int] = {
    ("project", "lesson"): 20_000,       # ~200 rules of ~100 tokens: more than one project's stated rules
    ("project", "orientation"): 12_000,  # ~150 working assumptions about one project
    ("project", "experience"): 40_000,   # ~80 experiences of 150-600 words
    ("global", "lesson"): 8_000,         # the user's own rules for every project: 16 times the pack's global share
    ("global", "orientation"): 4_000,    # orientation is a repository's; a global one is rare
    ("global", "experience"): 8_000,
}


class Watermarks(Record, frozen=True):
    """A bucket's token watermarks: crossing hard starts maintenance, eviction stops at soft."""
    hard: int    # tokens: crossing it starts maintenance of the bucket
    soft: int    # tokens: eviction archives until the bucket is back at or under it

    def over(self, tokens: int) -> bool:
        return tokens > self.hard


def watermarks(scope: str, memory_type: str, hard_tokens: dict[tuple[str, str], int] | None = None) -> Watermarks:
    hard = (hard_tokens or HARD_TOKENS).get((scope, memory_type)) or HARD_TOKENS[("project", "lesson")]
    return Watermarks(hard, int(hard * SOFT_SHARE))


class Unit(Record, frozen=True):
    """What eviction moves as one: a record recall can serve, and the detail only it leads to (a compressed lesson's
    superseded forms), so archiving never leaves detail behind that no hot lesson reaches, and a restore brings it
    back together."""

    head: str
    members: tuple[str, ...]   # the head first
    tokens: int
    utility: float
    exempt: str = ""           # why retention may not archive it ("" = it may)


def eviction(units: Sequence[Unit], tokens: int, marks: Watermarks) -> list[Unit]:
    """The units to archive: none while the bucket is at or under its hard mark; past it, the lowest-utility units
    first (the larger first among equals, then by id, so the choice is stable) until the bucket is at its soft mark.
    Exempt units are never chosen, even if the mark then cannot be reached."""
    if not marks.over(tokens):
        return []
    out: list[Unit] = []
    for unit in sorted((u for u in units if not u.exempt), key=lambda u: (u.utility, -u.tokens, u.head)):
        if tokens <= marks.soft:
            break
        out.append(unit)
        tokens -= unit.tokens
    return out


# -- 3b. one similar-pair consolidation ----------------------------------------------------------------------------
CONSOLIDATE_TYPES = ("orientation", "experience")   # short user-quoted rules are never synthesized: a generated
                                                    # merge would break their quote-first contract
NOMINATE_JACCARD = 0.5   # word-set Jaccard of two records' title and body at which they are nominated for one
                         # review. Similarity only nominates; the verifier decides whether they may be replaced
POOL_MAX = 300           # records of one bucket compared pairwise, the lowest-utility first (those eviction would
                         # take next): at most ~45,000 comparisons a pass
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 1)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def nominate(records: Sequence[tuple[str, frozenset[str]]], declined: Iterable[tuple[str, str]] = (),
             threshold: float = NOMINATE_JACCARD) -> tuple[str, str, float] | None:
    """The most similar pair (ids in order, and their Jaccard) at or above the threshold, skipping pairs already
    declined by a verifier; None when no pair qualifies."""
    skip = {tuple(sorted(p)) for p in declined}
    best: tuple[str, str, float] | None = None
    pool = list(records)[:POOL_MAX]
    for i, (a, wa) in enumerate(pool):
        for b, wb in pool[i + 1:]:
            pair = tuple(sorted((a, b)))
            if pair in skip:
                continue
            score = jaccard(wa, wb)
            if score >= threshold and (best is None or score > best[2] or (score == best[2] and pair < best[:2])):
                best = (pair[0], pair[1], score)
    return best


OUTCOME_STRENGTH = {"unknown": 0, "failed": 1, "verified": 1}   # a checked outcome is a stronger claim than none


def consolidated_traits(importances: Sequence[float], confidences: Sequence[float],
                        outcomes: Sequence[str]) -> tuple[float, float, str]:
    """(importance, confidence, outcome) of a replacement: the lower importance and confidence, and never a
    stronger outcome than any source's (sources that disagree, or any unknown, make it unknown)."""
    outcome = outcomes[0] if outcomes and all(o == outcomes[0] for o in outcomes) else "unknown"
    return min(importances), min(confidences), outcome


# -- 4. the cold archive -------------------------------------------------------------------------------------------
PREVIEW_CHARS = 160    # characters of a cold record kept in the catalog (its gist, else its body's head)
COLD_PAGE_MAX = 2      # cold records one recall may page into consideration: the archive may help, never flood
COLD_MIN_TERMS = 2     # distinct query words a cold record's title, tags and preview must hold verbatim to be an
                       # exact lexical match (or its whole title must appear in the query): one generic word never
                       # brings back what retention put away
COLD_MIN_WORD = 3      # characters a query word needs to count (drops ticket numbers, `a1`, ...)


def preview(node: object) -> str:
    text = " ".join((getattr(node, "gist", "") or getattr(node, "body", "") or "").split())
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1].rstrip() + "…"


def cold_match(query: str, title: str, catalog_text: str) -> int:
    """How exactly a cold record matches a query: the number of distinct query words (content words of at least
    COLD_MIN_WORD characters) its catalog text holds as whole words, plus 10 when its whole title (two words or
    more) appears in the query. 0 when that is not an exact match (fewer than COLD_MIN_TERMS words, no title)."""
    from rose.words import STOPWORDS   # one list of stopwords for every search

    asked = {w for w in _WORD.findall(query.lower()) if len(w) >= COLD_MIN_WORD and w not in STOPWORDS}
    held = set(_WORD.findall(catalog_text.lower()))
    hits = len(asked & held)
    flat_title = " ".join(_WORD.findall(title.lower()))
    titled = len(flat_title.split()) >= 2 and f" {flat_title} " in f" {' '.join(_WORD.findall(query.lower()))} "
    if titled:
        return hits + 10
    return hits if hits >= COLD_MIN_TERMS else 0


# -- 5. weak and stale ---------------------------------------------------------------------------------------------
WEAK_IMPORTANCE = 0.4   # at or below: weak (a medium mint that failed once or more, or anything minted low)
STALE_DAYS = 90.0       # days without a material use (from creation when never used)


def weak_and_stale(scope: str, importance: float, age: float) -> bool:
    """A project record both weak and unused for 90 days moves to the archive, whatever the budget. Global
    records are the user's own rules for everywhere and are left to the watermarks."""
    return scope == "project" and importance <= WEAK_IMPORTANCE + 1e-9 and age >= STALE_DAYS


# -- 6. recurrence -------------------------------------------------------------------------------------------------
RECURRENCE_JACCARD = 0.6    # word-set Jaccard at which two projects' rules are the same rule restated
RECURRENCE_MIN_PROJECTS = 3  # projects a rule must recur in to be nominated: three projects sharing a stack
                             # produce the same stack rule, so recurrence only nominates and a review decides


def recurs(projects: Iterable[str]) -> bool:
    return len(set(projects)) >= RECURRENCE_MIN_PROJECTS


def promotion_choice(instances: Sequence[tuple[str, float, int, str]]) -> str:
    """Of (id, importance, evidence count, created), the instance that moves global: the highest importance, then
    the most evidence, then the oldest, then the id."""
    return min(instances, key=lambda i: (-i[1], -i[2], i[3], i[0]))[0]
