"""Selection: which candidates this prompt needs, by one of three selectors.

    fork    a fork of the live session searches the store with read-only tools and returns ids (spec 002)
    judge   the apex walk: one line per candidate, relevant / maybe / unrelated / descend, bounded
    hybrid  no model call: the candidates whose real scores stand out (relative BM25, cosine), few or none

A selector returns a Selection or raises SelectorFailed; the pipeline falls back fork -> judge -> hybrid and the
notice says which one ran. Hybrid cannot fail: it is the floor recall always stands on.
"""
from __future__ import annotations


from rose.config import Selector
from rose.errors import SelectorFailed
from rose.recall.candidates import Candidate, dense_evidence, lexical_evidence
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rose.config import RecallSettings
    from rose.deadline import Deadline
    from rose.judge import Judge
    from rose.store import Store

HYBRID_MAX_LESSONS = 6   # the most lessons a selector names (the fork is asked for two more)
# The hybrid cut, on real scores (fusion scores depend only on ranks, so a cut on them is a rank cut). Chosen on
# bench/recall_quality and checked on its held-out halves (bench/bench_retrieval.py --sweep):
HYBRID_SERVE_MAX = 3        # without a model, serve at most this many: most prompts need one or two
LEXICAL_RELATIVE = 0.6      # an admitted lexical hit serves at this share of the best admitted BM25 or above
DENSE_MARGIN = 0.04         # a dense-only hit serves within this of the best cosine (at its space's floor or above)




class Choice(Record):
    """One lesson a selector chose, and why."""
    id: str
    reason: str
    verdict: str = "relevant"   # relevant | maybe | unresolved | search


class Selection(Record):
    """What a selector ran and chose, with every verdict given along the way."""
    ran: Selector
    chosen: list[Choice]
    verdicts: list[dict[str, str]] = field(default_factory=list)  # every verdict given, for `rose trace`
    calls: int = 0


def hybrid(candidates: list[Candidate]) -> Selection:
    """The candidates whose evidence stands out, in fused order, at most HYBRID_SERVE_MAX; nothing when none has
    evidence (a prompt with nothing relevant gets nothing)."""
    return Selection(Selector.HYBRID, [Choice(c.id, _hybrid_reason(c), "search") for c in hybrid_cut(candidates)])


def hybrid_cut(candidates: list[Candidate], serve_max: int = HYBRID_SERVE_MAX, lexical_relative: float =
               LEXICAL_RELATIVE, dense_margin: float = DENSE_MARGIN) -> list[Candidate]:
    """The cut on real scores. BM25 is relative to the best admitted hit of the same store (scores of two stores
    are not on one scale: their word statistics differ), cosine to the best dense hit; the stores take turns, best
    first, so a store with many matching lessons cannot crowd out another's single match."""
    keep: dict[int, list[Candidate]] = {}
    for store_key in dict.fromkeys(id(c.store) for c in candidates):
        mine = [c for c in candidates if id(c.store) == store_key]
        lex = [c for c in mine if lexical_evidence(c) and c.bm25 is not None]
        dense = [c for c in mine if dense_evidence(c)]
        best_bm25 = max((c.bm25 for c in lex), default=0.0)   # type: ignore[type-var]
        best_cos = max((c.dense_cos for c in dense), default=0.0)   # type: ignore[type-var]
        kept = {id(c) for c in lex if c.bm25 >= lexical_relative * best_bm25}   # type: ignore[operator]
        kept |= {id(c) for c in dense if c.dense_cos >= best_cos - dense_margin}   # type: ignore[operator]
        keep[store_key] = [c for c in mine if id(c) in kept]
    out: list[Candidate] = []
    turn = 0
    while len(out) < serve_max and any(turn < len(v) for v in keep.values()):
        out += [v[turn] for v in keep.values() if turn < len(v)]
        turn += 1
    order = {id(c): i for i, c in enumerate(candidates)}
    return sorted(out[:serve_max], key=lambda c: order[id(c)])


def _hybrid_reason(c: Candidate) -> str:
    parts = []
    if c.lexical_rank is not None:
        parts.append(f"lexical #{c.lexical_rank}" + ("" if c.admitted else " (too little lexical evidence alone)"))
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
