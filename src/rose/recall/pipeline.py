"""Recall, end to end: gates -> candidate search -> selection (with fallbacks) -> second pass -> pack -> notice.

    result = recall(layers, prompt, session_id=..., hot=True)
    result.block    the text injected above the prompt ("" = nothing to inject)
    result.notice   the line the user sees; says what was injected, and says so when something failed
    result.trace    every stage, for `rose trace`
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable

from rose.recall.trace import Trace

from rose.model import NEVER_SERVED
from rose.config import Selector, Settings
from rose.deadline import MIN_STEP_S
from rose.errors import LockTimeout
from rose.recall import candidates as search
from rose.recall import selectors
from rose.recall.pack import Item, Tier, assign_tiers, fit, notice, render_block
from rose.store.budget import whole
from rose.store.index import SERVABLE
from rose.store.sessions import SessionState
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.deadline import Deadline
    from rose.judge import Judge
    from rose.store import Layers, Store

BUSY = (LockTimeout, sqlite3.OperationalError)   # another writer holds the store: bounded waits on the hook path

SECOND_PASS_TERMS = 24   # the second query is built from titles and tags: bounded, so its cost is too
DISCLOSURE_MAX = 2        # lessons the second pass may add: it widens recall, it must not flood it
MAX_PROMPT_CHARS = 8000   # a pasted log is searched by its head; the whole of it never reaches FTS or a model


class RecallResult(Record):
    """What one recall served: the block, the notice line, the items and the trace."""
    block: str
    notice: str
    items: list[Item] = field(default_factory=list)
    trace: Trace = field(default_factory=lambda: Trace())

    @property
    def injected(self) -> list[Item]:
        return [i for i in self.items if i.tier is not Tier.FRESH]


def recall(layers: Layers, prompt: str, *, session_id: str | None = None, settings: Settings | None = None,
           judge: Judge | None = None, judge_factory: Callable[[], Judge] | None = None, hot: bool = False,
           cwd: str | None = None, agent: str | None = None, record_session: bool = True,
           deadline: Deadline | None = None) -> RecallResult:
    """`agent` is the harness the session belongs to: only a backend of the same agent can fork that session.

    `judge_factory` builds the judge only if a selector really needs one (a store that fits needs none). `deadline`
    is the whole recall's: every selector, fallback and second pass takes its time from it. On the hook path
    (`hot`), a busy index or a held lock is waited on only briefly (Store.bound_waits): recall then serves from what
    is there and says so on the notice."""
    from rose.deadline import Deadline

    deadline = deadline or Deadline.none()
    settings = settings or layers.settings()
    rs = settings.recall
    trace: Trace = {"prompt": prompt[:MAX_PROMPT_CHARS], "selector_configured": rs.selector.value}
    if not rs.enabled:
        trace["gate"] = "recall.enabled is false"
        return RecallResult("", "", trace=trace)
    stores = layers.stores()
    notes: list[str] = []
    building: list[str] = []
    from rose.warm import client

    # inside the warm helper, the periodic full scan of unchanged folders (0.5 s of CPU at 50,000 lessons, every
    # FULL_SCAN_EVERY_S) runs in its background instead of inside this prompt; new or removed files are still
    # seen here at once (their folder's mtime changed)
    background = client.BACKGROUND_SYNC if hot else None
    for store in stores:
        try:
            report = store.sync(quick=hot, until=_parse_until(deadline) if hot else None,
                                defer_scan=background is not None)
            if report.scan_due and background is not None:
                background(str(store.root), store.scope.value)
            if report.pending:
                building.append(f"{store.scope.value} index building in the background: "
                                f"{report.files - report.pending} of {report.files} lessons searchable")
                notes.append(building[-1])
        except BUSY as exc:
            if not hot:
                raise
            notes.append(f"{store.scope.value} index busy ({_busy_what(exc)}): served from its last state")
    size = whole(stores)   # what serving all of it would cost
    count = size.count
    trace["store"] = {"servable": count, "tokens": size.tokens, "max_pack_tokens": rs.max_pack_tokens,
                      "global_tokens": size.global_tokens, "global_max_tokens": rs.global_max_tokens}
    if count == 0:
        trace["gate"] = "empty store: nothing to recall"
        # a fresh clone whose index is still being built has lessons, only none searchable yet: say so
        return RecallResult("", notice([], "; ".join(building)) if building else "", trace=trace)

    query = prompt[:MAX_PROMPT_CHARS]
    if size.fits(rs):
        trace["gate"] = "whole store fits the budget: served unfiltered, no selector"
        chosen = [(s, r, "the whole store fits the budget") for s in stores
                  for r in s.index.rows("status IN (%s)" % ",".join("?" * len(SERVABLE)), SERVABLE)]
        chosen.sort(key=lambda c: -c[1].importance)   # the order a budget cut would follow (it does not bind here)
        chosen += [(p.store, p.row, p.reason) for p in _cold(stores, query, trace)]
    else:
        trace["gate"] = "store outgrows the budget: filtering"
        if judge is None and judge_factory is not None and rs.selector is not Selector.HYBRID:
            judge = judge_factory()
        chosen, more = _select(stores, query, settings, trace, judge, session_id, cwd, hot, agent, deadline)
        notes += more

    owner = stores[0]
    record = SessionState.load(owner, session_id) if session_id else SessionState()
    record.turn += 1
    items = [Item(r.id, r, s, reason, Tier.FULL) for s, r, reason in chosen]
    assign_tiers(items, record, rs)
    bodies: dict[str, str] = {}
    for store in stores:
        bodies.update(store.index.bodies([i.id for i in items if i.store is store and i.tier is Tier.FULL]))
    for item in items:
        item.ref = record.ref(item.id)
    paths = {i.id: str(i.store.root / i.row.path) for i in items if i.row.memory_type == "experience"}
    fitted = fit(items, bodies, rs, paths)
    items = fitted.items
    withheld = _withhold(items, record, settings, session_id, hot) if session_id and record_session else []
    if withheld:   # held back this session to measure whether they help (rose.credit): named on the notice
        items = [i for i in items if all(i is not w for w in withheld)]
    skills: list[str] = []
    if settings.evolution.enabled and session_id and record_session:   # generated skills, per trial arm
        skills, applied = _skills(stores, owner, session_id, query, settings, hot)
        if applied:
            notes.append(applied)
    block = render_block(items, skills)
    line = notice(items, "; ".join(notes), fitted.left_out, withheld=len(withheld))
    trace["left_out"] = fitted.left_out
    trace["withheld"] = [i.id for i in withheld]
    if not items and not notes and not fitted.left_out and not withheld:
        # nothing matched and nothing failed: said only when a search ran (a prompt nothing bears on gets nothing)
        line = f"⋯ ROSE · nothing relevant among {count} lessons" if trace["gate"].startswith("store outgrows") \
            else ""
    if session_id and record_session:
        line = _announce(owner, line, hot)
    if session_id and record_session:
        for item in items:
            if item.tier is not Tier.FRESH:
                record.served[item.id] = record.turn
        # what the selector chose, beside search alone: stage 7 credits rules from it
        selection = {"turn": record.turn, **trace["selection"]} if "selection" in trace else None
        try:
            record.save_recall(owner, session_id, selection)
        except BUSY as exc:
            if not hot:
                raise
            line += f" · served record not saved ({_busy_what(exc)})"
    trace["pack"] = [{"id": i.id, "tier": i.tier.value, "tokens": i.tokens, "reason": i.reason,
                      "scope": i.store.scope.value} for i in items]
    trace["block"] = block
    if session_id and record_session:
        from rose.store.events import EventKind

        try:
            # rose's own notes are enums and counts; only a backend's failure reason is outside text to redact
            owner.event(EventKind.INJECT, structural=not trace.get(OUTSIDE_TEXT), session=session_id,
                        served=[i.id for i in items if i.tier is Tier.FULL],
                        refreshed=[i.id for i in items if i.tier is Tier.REFRESH],
                        fresh=[i.id for i in items if i.tier is Tier.FRESH], withheld=[i.id for i in withheld],
                        tokens=sum(i.tokens for i in items), selector=trace.get("selector_ran", "none"), notes=notes)
        except BUSY:
            if not hot:
                raise  # telemetry is not worth a wait on the prompt path
    trace["notice"] = line
    return RecallResult(block, line, items, trace)


def _withhold(items: list[Item], record: SessionState, settings: Settings, session_id: str, hot: bool) -> list[Item]:
    """The lessons this session withholds to measure them (rose.credit.withhold); none when the store is busy."""
    from rose.credit.withhold import withhold

    try:
        return withhold([i for i in items if i.tier is Tier.FULL], record, settings, session_id)
    except BUSY:
        if not hot:
            raise
        return []   # serving is the safe side: nothing is withheld when the counts cannot be read


def _skills(stores: list[Store], owner: Store, session_id: str, prompt: str, settings: Settings,
            hot: bool) -> tuple[list[str], str]:
    from rose.evolve.runtime import skills

    try:
        return skills(stores, owner, session_id, prompt, settings)
    except BUSY:
        if not hot:
            raise
        return [], ""


def _announce(owner: Store, line: str, hot: bool) -> str:
    """A lesson the learner withdrew as harmful is named once, on the next notice line."""
    from rose.credit.announce import take_announcements

    try:
        said = take_announcements(owner)
    except BUSY:
        if not hot:
            raise
        return line
    if not said:
        return line
    return f"{line} · {said}" if line else f"⋯ ROSE · {said}"


OUTSIDE_TEXT = "notes_carry_outside_text"   # trace flag: a note quotes text rose did not write (redact the event)
SYNC_SHARE = 0.25   # of the prompt's time left, at most SYNC_MAX_S: what parsing unindexed files may take
SYNC_MAX_S = 1.0


def _parse_until(deadline: Deadline) -> float:
    """When the prompt path stops parsing unindexed files (a fresh clone): the rest is built in the background."""
    import time

    return time.monotonic() + min(SYNC_MAX_S, SYNC_SHARE * deadline.remaining())


def _cold(stores: list[Store], query: str, trace: Trace) -> list[Any]:
    """At most two cold records an exact lexical match pages into consideration (rose.retention.paging)."""
    from rose.retention.paging import page

    paged = page(stores, query)
    trace["cold"] = [{"id": p.row.id, "title": p.row.title, "scope": p.store.scope.value, "reason": p.reason}
                     for p in paged]
    return paged


def _paged_candidate(p: Any, found: list[Any], k: float) -> Any:
    """A paged cold record as a candidate: an exact match fuses like the best hot candidate, reweighted by its own
    importance (no recency: it has not been used lately). The selector, then the budget, decide if it is served.
    The exact match is its lexical evidence (admitted), and its BM25, from the cold index's own scale, is put on
    its store's hot scale as that of the store's best hot hit, so the hybrid cut weighs it as the match it is."""
    fused = max((c.fused for c in found), default=1.0 / (k + 1))
    weight = 1 - search.IMPORTANCE_SPAN / 2 + search.IMPORTANCE_SPAN * p.row.importance
    bm25 = max((c.bm25 for c in found if c.store is p.store and c.bm25 is not None), default=p.bm25)
    return search.Candidate(p.row.id, p.store, p.row, lexical_rank=1, bm25=bm25, admitted=True, fused=fused,
                            score=fused * weight)


def _busy_what(exc: BaseException) -> str:
    return "a lock is held" if isinstance(exc, LockTimeout) else "the database is locked"


def _select(stores: list[Store], query: str, settings: Settings, trace: Trace, judge: Judge | None,
            session_id: str | None, cwd: str | None, hot: bool, agent: str | None,
            deadline: Deadline) -> tuple[list[tuple[Any, Any, str]], list[str]]:
    rs = settings.recall
    lists = rank_lists(stores, query, settings, hot, deadline)
    trace["dense"] = lists.dense_status.value
    trace["lexical_list"] = [[s.scope.value, i, round(score, 4)] for s, i, score in lists.lexical]
    trace["dense_list"] = [[s.scope.value, i, round(score, 4)] for s, i, score in lists.dense]
    ranked = search.fuse(stores, lists, rs)
    found = ranked[: rs.candidates]
    paged = _cold(stores, query, trace)
    found += [_paged_candidate(p, found, rs.rrf_k) for p in paged]
    notes: list[str] = []
    if lists.dense_status is not search.DenseStatus.ON and lists.dense_status is not search.DenseStatus.OFF:
        notes.append(f"dense search {lists.dense_status.value}, lexical only")

    given = _rules(stores, settings) if rs.selector is not Selector.HYBRID else []
    rules = [r.text() for r in given]
    trace["routing_rules"] = rules
    baseline = [ch.id for ch in selectors.hybrid(found).chosen]   # search alone: what a rule's record is against
    found = found + search.from_rule_folders(stores, given, ranked, found)   # where the rules say to look
    trace["candidates"] = [c.trace() for c in found]
    selection = _run_selector(query, found, stores, settings, judge, session_id, cwd, rules, notes, trace, agent,
                              deadline)
    trace["selection"] = {"selector": selection.ran.value, "chosen": [ch.id for ch in selection.chosen],
                          "baseline": baseline, "rules": [r.id for r in given],
                          "rule_added": [c.id for c in found if c.rule]}

    picked = list(selection.chosen)
    if rs.disclosure and picked and selection.ran is not Selector.FORK:
        picked += _second_pass(stores, query, picked, found, settings, selection.ran, judge, rules, trace, hot,
                               deadline, first=lists)
    # A selector may name a lower node on purpose (the walk descended to it); archived and demoted ones never serve.
    located = {c.id: (c.store, c.row) for c in found}
    cold = {p.row.id for p in paged}   # paged in from the cold archive: served as they are, if chosen
    out: list[tuple[Any, Any, str]] = []
    for ch in picked:
        hit = located.get(ch.id) or _lookup(stores, ch.id)
        if hit is not None and (hit[1].status not in NEVER_SERVED or ch.id in cold) \
                and ch.id not in {r.id for _s, r, _w in out}:
            out.append((hit[0], hit[1], f"{selection.ran.value}: {ch.reason}"))
    return out, notes


def _run_selector(query, found, stores, settings, judge, session_id, cwd, rules, notes, trace, agent=None,
                  deadline=None):
    from rose.deadline import Deadline

    deadline = deadline or Deadline.none()
    rs = settings.recall
    want = rs.selector
    fallbacks: list[str] = []
    if want is not Selector.HYBRID and not deadline.allows():
        fallbacks.append(f"{want.value} -> hybrid (no time left for a model call)")
        notes.append("out of time for a selector, served by search")
        want = Selector.HYBRID
    if want is Selector.FORK:
        reason = None
        if not session_id:
            reason = "no session to fork"
        elif judge is None or not judge.available:
            reason = "no model backend"
        elif not judge.backend.can_fork:
            reason = f"backend {judge.backend.name} cannot fork a session"
        elif agent and judge.backend.name not in (agent, "scripted"):
            reason = f"a {agent} session cannot be forked by the {judge.backend.name} backend"
        if reason:
            fallbacks.append(f"fork -> judge ({reason})")
            want = Selector.JUDGE
    if want is Selector.JUDGE and (judge is None or not judge.available):
        fallbacks.append("judge -> hybrid (no model backend)")
        want = Selector.HYBRID
    selection = None
    if want is Selector.FORK:
        try:
            selection = selectors.fork(query, session_id, cwd, stores, judge, rs, rules, deadline)
        except selectors.SelectorFailed as failed:
            fallbacks.append(f"fork failed ({failed.reason}) -> judge")
            notes.append(f"fork selector failed ({_short(failed.reason)})")
            trace[OUTSIDE_TEXT] = True
            want = Selector.JUDGE
    if selection is None and want is Selector.JUDGE:
        try:
            selection = selectors.judge_walk(query, found, stores, judge, rs, rules, deadline)
        except selectors.SelectorFailed as failed:
            fallbacks.append(f"judge failed ({failed.reason}) -> hybrid")
            notes.append(f"judge selector failed ({_short(failed.reason)}), served by search")
            trace[OUTSIDE_TEXT] = True
    if selection is None:
        selection = selectors.hybrid(found)
    trace["selector_ran"] = selection.ran.value
    trace["fallbacks"] = fallbacks
    trace["verdicts"] = selection.verdicts or [{"id": ch.id, "verdict": ch.verdict, "reason": ch.reason}
                                               for ch in selection.chosen]
    if selection.ran is not rs.selector:
        notes.append(f"by {selection.ran.value}")
    return selection


def _short(reason: str, limit: int = 80) -> str:
    reason = " ".join(reason.split())
    return reason if len(reason) <= limit else reason[: limit - 1] + "…"


def _second_pass(stores, query, picked, found, settings, ran, judge, rules, trace, hot, deadline, first=None):
    """Progressive disclosure: search again with the first results in hand (titles, tags, DAG neighbours).

    Without a model, a lesson found this way is served only when it ranks top 3 on the second query and also
    holds a selective word of the prompt itself (`first`, the first pass's lists): a
    neighbour of what was served is not, by itself, what the prompt needs."""
    rs = settings.recall
    seeds = []
    for ch in picked:
        for store in stores:
            rows = store.index.rows_by_id([ch.id])
            if ch.id in rows:
                r = rows[ch.id]
                seeds += [r.title, " ".join(r.tags)]
                neighbours = store.index.rows_by_id(r.parents + r.derived_from)
                seeds += [n.title for n in neighbours.values()]
    expanded = " ".join(dict.fromkeys(w for w in " ".join(seeds).split() if len(w) > 2))
    expanded = " ".join(expanded.split()[:SECOND_PASS_TERMS])
    exclude = {c.id for c in found} | {ch.id for ch in picked}
    # the lexical query holds the expansion's selective words only: titles share generic words ("always", "check")
    # with thousands of lessons, which made this query most of a prompt's cost at 50,000 lessons, and alone they
    # are no evidence (bench/bench_retrieval.py end to end: recall .839 -> .836, precision .455 -> .453, served
    # and off-topic unchanged); the dense query reads the whole expansion
    if hot and ran is not Selector.JUDGE and first is not None and first.evidence \
            and not _may_serve(stores, search.lexical(stores, expanded, depth=3, selective_only=True), first,
                               exclude):
        # without a model only a top-3 lexical hit of this query that holds a selective prompt word is served:
        # none of them does, so the dense query and the fusion would choose nothing (the prompt path skips them).
        # The top three alone are ranked for that (the first three of the full list, whose BM25 ranks fewer)
        trace["second_pass"] = {"query": expanded[:500], "candidates": [],
                                "skipped": "no top-3 hit holds a selective word of the prompt"}
        return []
    lexical = search.lexical(stores, expanded, selective_only=True)
    lists = rank_lists(stores, expanded, settings, hot, deadline, evidence=False, lexical=lexical)
    fresh = search.fuse(stores, lists, rs, exclude=exclude)[:DISCLOSURE_MAX * 2]
    for c in fresh:
        c.pass_no = 2
    trace["second_pass"] = {"query": expanded[:500], "candidates": [c.trace() for c in fresh]}
    if not fresh:
        return []
    if ran is Selector.JUDGE and judge is not None:
        if not deadline.allows(2 * MIN_STEP_S):
            trace["second_pass"]["skipped"] = "no time left for its model call"
            return []
        try:
            extra = selectors.judge_walk(query, fresh, stores, judge, _one_call(rs), rules, deadline)
            trace["second_pass"]["verdicts"] = extra.verdicts
            return [ch for ch in extra.chosen if ch.verdict == "relevant"][:DISCLOSURE_MAX]
        except selectors.SelectorFailed as failed:
            trace["second_pass"]["failed"] = failed.reason
            return []
    def prompt_word(c) -> bool:
        hit = first.evidence.get((id(c.store), c.id)) if first is not None else None
        return first is None or not first.evidence or (hit is not None and hit.selective >= 1)

    return [selectors.Choice(c.id, "second pass: " + selectors._hybrid_reason(c), "search")
            for c in fresh if c.lexical_rank is not None and c.lexical_rank <= 3 and c.admitted
            and prompt_word(c)][:DISCLOSURE_MAX]


def _may_serve(stores, top, first, exclude) -> bool:
    """Could one of these lexical hits be served by the no-model second pass? Its servable node must be new and a
    first-pass hit holding a selective word of the prompt (a necessary condition of the rule at the end of
    _second_pass; the fused ranks decide the rest)."""
    for store, node_id, _score in top:
        rows = store.index.rows_by_id([node_id])
        target = search.servable(store, rows[node_id], rows) if node_id in rows else None
        hit = first.evidence.get((id(store), target.id)) if target is not None else None
        if target is not None and target.id not in exclude and hit is not None and hit.selective >= 1:
            return True
    return False


def _one_call(rs):
    from rose.typedrecord import replace

    return replace(rs, judge_calls=1, max_depth=0)


def _lookup(stores, node_id):
    for store in stores:
        rows = store.index.rows_by_id([node_id])
        if node_id in rows:
            return store, rows[node_id]
    return None


def _rules(stores: list[Store], settings: Settings):  # -> list[rose.routing.Rule]
    from rose.routing import load_rules, within_cap

    rules, _problems = load_rules([s.routing_dir for s in stores])
    return within_cap(rules, settings.routing.max_tokens)


def rank_lists(stores: list[Store], query: str, settings: Settings, hot: bool,
               deadline: Deadline | None = None, evidence: bool = True,
               lexical: list | None = None) -> search.RankLists:
    """Both rank lists; `evidence` also counts each lexical hit's evidence (the second pass does without, and may
    hand its `lexical` list in, already searched)."""
    dense, status = _dense(stores, query, settings, hot, deadline)
    model = search.dense_model(settings.embed) if status is search.DenseStatus.ON else None
    if not evidence:
        return search.RankLists(search.lexical(stores, query) if lexical is None else lexical, dense, status, {},
                                model)
    hits = search.lexical_hits(stores, query)
    return search.RankLists([(s, h.id, h.score) for s, h in hits], dense, status, search.evidence_of(hits), model)


def _dense(stores: list[Store], query: str, settings: Settings, hot: bool, deadline: Deadline | None = None):
    """Dense ranks from the warm helper; without one, the hook goes lexical-only (and a helper is started for the
    next prompt) while commands load the model in-process."""
    from rose.config import EmbedProvider

    es = settings.embed
    if es.provider is EmbedProvider.NONE:
        return [], search.DenseStatus.OFF
    if es.provider in (EmbedProvider.AUTO, EmbedProvider.WORDLLAMA):
        from rose.embed.static import available

        if not available():
            return [], search.DenseStatus.OFF
    from rose.warm import client

    dbs = {str(s.index_db_path): s for s in stores}
    embed = client.embed_spec(es)
    timeout = client.DENSE_TIMEOUT_S if deadline is None else deadline.cap(client.DENSE_TIMEOUT_S)
    reply = client.dense(embed, query, list(dbs), search.LEXICAL_DEPTH, timeout) if timeout > 0.01 else None
    if reply is None and hot:
        sock = client.socket_path()
        if sock is None or not client.helpers_allowed():
            return [], search.DenseStatus.OFF   # no private folder for a helper, or helpers off: lexical only
        if client.LOCAL_DENSE is None:   # inside the helper it is the helper itself that is still loading
            client.spawn(sock)
        return [], search.DenseStatus.WARMING
    if reply is None:
        try:
            from rose.embed import make_embedder
            from rose.embed.dense import lacking_in_process, rank_in_process, skips_in_process
            from rose.store.events import note_skips

            embedder = make_embedder(es)
            if embedder is None:
                return [], search.DenseStatus.OFF
            for store in stores:
                if lacking_in_process(store.index_db_path, embedder.name):
                    store.embed_missing(embedder)
            reply = {"ranks": rank_in_process([s.index_db_path for s in stores], embedder, query,
                                              search.LEXICAL_DEPTH)}
            for store in stores:   # a vector file ignored (and written again) or not written: a logged skip
                note_skips(store.events_path, "vector file", skips_in_process(store.index_db_path, embedder.name),
                           store.wait_s)
        except Exception:  # noqa: BLE001 - dense is an improvement, never a requirement
            return [], search.DenseStatus.FAILED
    merged = [(dbs[db], node_id, float(cos)) for db, ranked in reply.get("ranks", {}).items() if db in dbs
              for node_id, cos in ranked]
    merged.sort(key=lambda h: -h[2])
    return merged[: search.LEXICAL_DEPTH], search.DenseStatus.ON
