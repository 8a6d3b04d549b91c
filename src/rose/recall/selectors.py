"""Selection: which candidates this prompt needs, by one of three selectors.

    fork    a fork of the live session searches the store with read-only tools and returns ids (spec 002)
    judge   the apex walk: one line per candidate, relevant / maybe / unrelated / descend, bounded
    hybrid  no model call: the fused candidates above the relevance floor

A selector returns a Selection or raises SelectorFailed; the pipeline falls back fork -> judge -> hybrid and the
notice says which one ran. Hybrid cannot fail: it is the floor recall always stands on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rose.config import Selector
from rose.recall.candidates import Candidate, relevant_enough

if TYPE_CHECKING:
    from rose.config import RecallSettings
    from rose.deadline import Deadline
    from rose.judge import Judge
    from rose.store import Store

HYBRID_MAX_LESSONS = 6   # without a model, serve at most this many: the floor is coarse, the budget is not a goal
HYBRID_RELATIVE_CUT = 0.8  # and only those scoring at least this share of the best: precision .15 -> .28 for
                           # recall .87 -> .84 on bench/recall_quality


class SelectorFailed(Exception):
    def __init__(self, selector: Selector, reason: str):
        super().__init__(f"{selector.value}: {reason}")
        self.selector = selector
        self.reason = reason


@dataclass
class Choice:
    id: str
    reason: str
    verdict: str = "relevant"   # relevant | maybe | unresolved | search


@dataclass
class Selection:
    ran: Selector
    chosen: list[Choice]
    verdicts: list[dict[str, str]] = field(default_factory=list)  # every verdict given, for `rose trace`
    calls: int = 0


def hybrid(candidates: list[Candidate]) -> Selection:
    floor = [c for c in candidates if relevant_enough(c)]
    best = max((c.score for c in floor), default=0.0)
    chosen = [Choice(c.id, _hybrid_reason(c), "search") for c in floor if c.score >= HYBRID_RELATIVE_CUT * best]
    return Selection(Selector.HYBRID, chosen[:HYBRID_MAX_LESSONS])


def _hybrid_reason(c: Candidate) -> str:
    parts = []
    if c.lexical_rank is not None:
        parts.append(f"lexical #{c.lexical_rank}")
    if c.dense_rank is not None:
        parts.append(f"dense #{c.dense_rank} (cos {c.dense_cos:.2f})")
    if c.via:
        parts.append("matched via " + ", ".join(c.via))
    if c.pass_no == 2:
        parts.append("found by the second pass")
    return "; ".join(parts)


def judge_walk(prompt: str, candidates: list[Candidate], stores: list[Store], judge: Judge,
               settings: RecallSettings, rules: list[str], deadline: Deadline | None = None) -> Selection:
    """The apex walk over the candidates' lineages, abstract to concrete. Unresolved branches are served, also when
    the deadline leaves no time for another call."""
    from rose.deadline import Deadline
    from rose.judge import JudgeFailure, Stage, calls

    deadline = deadline or Deadline.none()
    rows = {}
    owner: dict[str, Store] = {}
    for c in candidates:
        rows[c.id] = c.row
        owner[c.id] = c.store
    # start at the apexes above the candidates (bounded by the candidate count, never the store size)
    frontier: list[str] = []
    for c in candidates:
        apex = _apex(c, rows, owner)
        if apex not in frontier:
            frontier.append(apex)
    selection = Selection(Selector.JUDGE, [])
    depth = 0
    while frontier:
        out_of_time = selection.calls > 0 and not deadline.allows()
        if selection.calls >= settings.judge_calls or depth > settings.max_depth or out_of_time:
            why = "the deadline came" if out_of_time else "budget ran out"
            for node_id in frontier:  # out of budget: serve what is still open rather than drop it
                selection.chosen.append(Choice(node_id, f"{why} before it was judged", "unresolved"))
            break
        request = calls.RelevanceRequest(prompt=prompt, rules=rules, candidates=[
            calls.Candidate(i, rows[i].title, rows[i].gist) for i in frontier])
        try:
            answer = judge.ask(calls.RELEVANCE, request, stage=Stage.RECALL, timeout_s=settings.selector_timeout_s,
                               deadline=deadline)
        except JudgeFailure as failure:
            raise SelectorFailed(Selector.JUDGE, f"{failure.kind.value}: {failure}") from None
        selection.calls += 1
        depth += 1
        nxt: list[str] = []
        maybes: list[Choice] = []
        for j in answer.judgements:
            selection.verdicts.append({"id": j.id, "verdict": j.verdict.value, "reason": j.reason})
            if j.verdict.value == "relevant":
                selection.chosen.append(Choice(j.id, j.reason, "relevant"))
            elif j.verdict.value == "maybe":
                maybes.append(Choice(j.id, j.reason, "maybe"))
            elif j.verdict.value == "descend":
                children = _children(j.id, rows, owner)
                if children:
                    nxt += [ch for ch in children if ch not in nxt]
                else:  # nothing below to open: the line itself is the most concrete form
                    selection.chosen.append(Choice(j.id, j.reason + " (no children to open)", "relevant"))
        selection.chosen += maybes  # relevant first; maybes are served while the budget allows
        frontier = nxt
    return selection


def _apex(c: Candidate, rows: dict, owner: dict) -> str:
    node_id, seen = c.id, {c.id}
    while True:
        parents = [p for p in rows[node_id].parents if p not in seen]
        if not parents:
            return node_id
        store = owner[node_id]
        found = store.index.rows_by_id(parents)
        servable = [r for r in found.values() if r.servable]
        if not servable:
            return node_id
        parent = min(servable, key=lambda r: r.id)
        rows[parent.id] = parent
        owner[parent.id] = store
        seen.add(parent.id)
        node_id = parent.id


def _children(node_id: str, rows: dict, owner: dict) -> list[str]:
    store = owner[node_id]
    found = store.index.rows_by_id(rows[node_id].derived_from)
    for r in found.values():
        rows[r.id] = r
        owner[r.id] = store
    return [r.id for r in found.values() if r.status != "archived"]


def fork(prompt: str, session_id: str, cwd: str | None, stores: list[Store], judge: Judge,
         settings: RecallSettings, rules: list[str], deadline: Deadline | None = None) -> Selection:
    """A fork of the live session greps the store (read-only tools) and names the lessons this prompt needs."""
    from rose.judge import JudgeFailure, Stage, calls

    request = calls.SelectRequest(task=prompt, store_dirs=[str(s.root) for s in stores], rules=rules,
                                  max_lessons=HYBRID_MAX_LESSONS + 2)
    try:
        answer = judge.ask(calls.SELECT, request, stage=Stage.RECALL, session_id=session_id, cwd=cwd,
                           timeout_s=settings.selector_timeout_s, deadline=deadline,
                           max_turns=settings.selector_max_tool_calls + 1, use_cache=False)
    except JudgeFailure as failure:
        raise SelectorFailed(Selector.FORK, f"{failure.kind.value}: {failure}") from None
    known = {i for s in stores for i in s.index.rows_by_id(answer.ids)}
    chosen = [Choice(n.id, n.reason, "relevant") for n in answer.nodes if n.id in known]
    verdicts = [{"id": n.id, "verdict": "relevant" if n.id in known else "unknown id", "reason": n.reason}
                for n in answer.nodes]
    return Selection(Selector.FORK, chosen, verdicts, calls=1)
