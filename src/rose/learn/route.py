"""Stage 7, selection lessons: after a session, what it needed against what it was served and how it searched.

Two steps, after the episode is recorded (the learner calls `learn_routes` once per ended session):

    credit  every selection of the session that was given rules (the session scratch's `selections`, written by
            recall) is scored against the episode's needed set: the lessons it used, and those the agent looked up
            itself. A rule engaged with a selection when the selection chose from a folder it points at, or left a
            folder it rules out alone where search alone would have served from it; it then helped when the
            selection beat search alone (recall higher, or equal with precision higher). Counts, in code.
    learn   when the session teaches something about where to look (the agent had to find a needed lesson the
            selector did not serve, or nothing a selection served was used), the `route` call is asked for one rule
            conditioned on a kind of task; a refusal stores nothing.

Idempotent: a rule's record lists the episodes it was credited for, and a learned rule's id derives from the
episode, so a job killed half-way and run again neither counts twice nor stores a second rule.
"""
from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from rose.model import SERVABLE_SQL
from rose.errors import CorruptFile, NodeNotFound
from rose.store.events import EventKind
from rose.store.sessions import SessionState, read_session, update_session

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge
    from rose.model import Episode
    from rose.routing import Rule
    from rose.store import Layers, Store

_ID = re.compile(r"(?<![A-Za-z0-9_])n_[A-Za-z0-9][A-Za-z0-9_-]{0,63}")   # rose.model.NODE_ID_RE, in text
_STORE_WORDS = (".rose", "nodes/", "rose search", "rose show", "index.md")
SEARCHES_SHOWN = 12      # tool calls on the store shown to the route call, each clipped
SEARCH_CHARS = 240


def looked_up(conversation: Any, stores: list[Store]) -> list[str]:
    """Lessons the agent fetched itself: an id of the store in a tool call's input (a Read of its file, `rose
    show ID`, a `cat .rose/nodes/...`). A search's results are hits, not needs: only what was then opened counts."""
    from rose.transcripts.model import Kind

    named: list[str] = []
    for m in getattr(conversation, "messages", []):
        if m.kind is Kind.TOOL_CALL:
            named += [i for i in _ID.findall(m.text) if i not in named]
    known = {i for s in stores for i, r in s.index.rows_by_id(named).items() if r.status != "archived"}
    return [i for i in named if i in known]


def searches(conversation: Any) -> str:
    """The session's tool calls on the store (greps, `rose search`, reads), redacted and clipped."""
    from rose.redact import redact
    from rose.transcripts.model import Kind

    lines = []
    for m in getattr(conversation, "messages", []):
        if m.kind is Kind.TOOL_CALL and any(w in m.text for w in _STORE_WORDS):
            lines.append(f"{m.tool_name or 'tool'}: {' '.join(m.text.split())[:SEARCH_CHARS]}")
    return redact("\n".join(lines[-SEARCHES_SHOWN:]))


def learn_routes(layers: Layers, owner: Store, session_id: str, conversation: Any, judge: Judge,
                 settings: Settings) -> str:
    """Credit the session's rules, then ask for a new one if the session teaches where to look. Returns what it
    did ("" when nothing). Raises JudgeFailure when the route call fails (the job is retried, nothing guessed)."""
    state = read_session(owner, session_id)
    episode_id = state.episode
    if not episode_id or state.routed:
        return ""
    try:
        episode = owner.get_episode(str(episode_id))
    except (NodeNotFound, CorruptFile) as exc:  # an episode gone or unreadable: nothing to learn from, said once
        owner.event(EventKind.SKIP, what="route", session=session_id, id=str(episode_id), reason=str(exc))
        update_session(owner, session_id, _routed)
        return ""
    stores = layers.stores()
    found = looked_up(conversation, stores)
    needed = list(dict.fromkeys(list(episode.used) + found))
    parts = []
    credited = credit(stores, episode, state.selections, set(needed))
    if credited:
        parts.append(f"{credited} rule record(s) updated")
    rule = _learn(layers, owner, stores, episode, found, conversation, judge, settings,
                  selected=bool(state.selections))
    if rule is not None:
        parts.append(f"selection rule {rule.id} learned ({rule.when} -> {rule.then})")
    update_session(owner, session_id, _routed)
    return "; ".join(parts)


def _routed(state: SessionState) -> None:
    state.routed = True


# -- credit ----------------------------------------------------------------------------------------------------------
def _families(stores: list[Store], ids: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for store in stores:
        out.update({i: r.family for i, r in store.index.rows_by_id(ids).items()})
    return out


def precision_recall(chosen: list[str], needed: set[str]) -> tuple[float, float]:
    hits = len(set(chosen) & needed)
    return (hits / len(chosen) if chosen else 0.0), (hits / len(needed) if needed else 0.0)


def engaged(rule: Rule, chosen: set[str], baseline: set[str], family: dict[str, str]) -> bool:
    """Did the selection act on this rule, as far as code can see? It chose from a folder the rule points at, or
    it left a folder the rule rules out alone where search alone would have served from it."""
    picked = {family[i] for i in chosen if i in family}
    if set(rule.look_in) & picked:
        return True
    base = {family[i] for i in baseline if i in family}
    return bool(rule.skip) and not (set(rule.skip) & picked) and bool(set(rule.skip) & base)


def credit(stores: list[Store], episode: Episode, selections: list[dict[str, Any]], needed: set[str]) -> int:
    """Update the record of every rule the session's selections engaged; returns how many rules changed."""
    from rose.routing import RECORD_KEEP, load_rules, update_rule

    if not needed or not selections:
        return 0   # nothing was needed (or no selection was made): no evidence either way
    ids = {i for sel in selections for key in ("chosen", "baseline") for i in sel.get(key) or []}
    family = _families(stores, ids)
    tally: dict[str, list[tuple[float, float, bool]]] = {}
    where: dict[str, Any] = {}
    for store in stores:
        rules, _problems = load_rules([store.routing_dir])
        for rule in rules:
            where[rule.id] = (store.routing_dir, rule)
    for sel in selections:
        chosen, baseline = list(sel.get("chosen") or []), list(sel.get("baseline") or [])
        p, r = precision_recall(chosen, needed)
        pb, rb = precision_recall(baseline, needed)
        for rule_id in sel.get("rules") or []:
            if rule_id not in where:
                continue   # forgotten since
            rule = where[rule_id][1]
            if engaged(rule, set(chosen), set(baseline), family):
                tally.setdefault(rule_id, []).append((p, r, r > rb or (r == rb and p > pb)))
    changed = 0
    for rule_id, rows in tally.items():
        def add(rule: Rule, rows: list[tuple[float, float, bool]] = rows) -> None:
            if episode.id in rule.credited:
                return   # counted by an earlier run of this job
            rule.tried += len(rows)
            rule.helped += sum(1 for _p, _r, better in rows if better)
            rule.precision_sum += sum(p for p, _r, _b in rows)
            rule.recall_sum += sum(r for _p, r, _b in rows)
            rule.credited = (rule.credited + [episode.id])[-RECORD_KEEP:]
        if update_rule(where[rule_id][0], rule_id, add) is not None:
            changed += 1
    return changed


# -- learn -----------------------------------------------------------------------------------------------------------
def _learn(layers: Layers, owner: Store, stores: list[Store], episode: Episode, found: list[str], conversation: Any,
           judge: Judge, settings: Settings, *, selected: bool = True) -> Rule | None:
    """Ask for a rule only when the session shows where to look: the agent found a needed lesson that was not
    served, or a selection (`selected`: a selector chose in this session) served several lessons and none was used.
    A session served the whole store unfiltered (it fit the recall budget, rose.store.budget) chose nothing, so
    "none was used" says nothing about a choice; and a rule acts only on a selector, which does not run while the
    store fits. That route call was paid and could not pay back (bench/bench_compression.py: a tenth of all
    sessions); the sessions that first have a selection to judge ask it."""
    from rose.judge import Stage, calls
    from rose.routing import RuleRefused, load_rules, save_rule, within_cap

    served = list(episode.served)
    missed = [i for i in found if i not in served]
    if not missed and not (selected and len(served) >= 2 and not episode.used):
        return None   # the selection served what was needed (or nothing was selected): nothing to teach
    rule_id = "r_" + hashlib.sha256(f"route|{episode.id}".encode()).hexdigest()[:6]
    if (owner.routing_dir / f"{rule_id}.yaml").exists():
        return None   # learned by an earlier run of this job
    rows: dict[str, Any] = {}
    for store in stores:
        rows.update(store.index.rows_by_id(served + missed))
    families = sorted({r[0] for s in stores for r in s.index.conn.execute(
        f"SELECT DISTINCT family FROM nodes WHERE status IN {SERVABLE_SQL}")})
    existing, _problems = load_rules([s.routing_dir for s in stores])
    request = calls.RouteRequest(
        task=episode.prompt, used=list(episode.used),
        served=[calls.Candidate(i, rows[i].title, rows[i].gist) for i in served if i in rows],
        looked_up=[calls.Candidate(i, rows[i].title, rows[i].gist) for i in missed if i in rows],
        rules=[r.text() for r in within_cap(existing, settings.routing.max_tokens)],
        searches=searches(conversation), families=families,
        family_of={i: r.family for i, r in rows.items()})
    answer = judge.ask(calls.ROUTE, request, stage=Stage.ROUTING)
    if answer.refused or not answer.when or not answer.then:
        return None
    try:
        return save_rule(owner.routing_dir, answer.when, answer.then, look_in=answer.look_in, skip=answer.skip,
                         rule_id=rule_id)
    except RuleRefused:
        return None   # the checks in code stand behind the call's: an unconditioned rule is never stored
