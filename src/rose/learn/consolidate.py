"""Stage 4, consolidation: new knowledge is reconciled with what is known before it is stored, never appended.

    scope       project or global (repository-derived lessons stay in the project; see `decide_scope`)
    related     the whole graph is shortlisted by the recall search, then judged (not only apexes)
    reconcile   duplicate   nothing stored; the hit is recorded on the existing lesson
                refines     folded into the matched lineage's level-0 body, registered as a rescue on every ancestor
                contradicts both kept, both disputed, the question attached and asked at recall
                specialises stored as a child of the more general lesson
                orthogonal  stored in a family of its own

With no backend (or a call that fails), the lesson is stored at once, marked unreconciled, and reconciled the next
time a backend answers: nothing a user teaches is dropped.

A project lesson never edits a global one (`may_edit`): what refines a global lesson is kept in the project under
it, a duplicate of one changes nothing, and a contradiction disputes only the project's lesson. Otherwise one
repository's text would reach every other through the user's global lessons.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from rose.lessons import derive_gist, derive_title
from rose.model import (Claim, ClaimKind, MemoryType, Node, Origin, Outcome, Relation, Scope, Status, now_iso,
                        seeded_id)
from rose.store import Layers, Store, family_slug
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge

SHORTLIST = 8        # lessons the search hands to `related`
RECONCILE_MAX = 3    # related lessons compared one by one, most related first


class Action(str, Enum):
    STORED = "stored"             # orthogonal: a new lesson in a family of its own
    DUPLICATE = "duplicate"
    REFINED = "refined"
    CONTRADICTS = "contradicts"
    SPECIALISES = "specialises"
    UNRECONCILED = "unreconciled"  # stored without reconciliation (no backend or a failed call)


@dataclass
class NewLesson:
    body: str
    title: str = ""
    gist: str = ""
    tags: list[str] = field(default_factory=list)
    family: str = ""
    memory_type: MemoryType = MemoryType.LESSON
    origin: Origin = Origin.MANUAL
    importance: float = 0.6
    confidence: float = 0.5
    evidence: list[str] = field(default_factory=list)
    outcome: Outcome = Outcome.UNKNOWN
    from_user: bool = True            # rests on the user's own words (a rule, a correction, `rose add`)
    scope: Scope | None = None        # an explicit choice (the user's --scope) skips the scope judgement
    quote: str = ""                   # the user's verbatim words it rests on (checked in code), for the scope call
    user_turn: str = ""               # the whole (redacted) message the quote is from: its context, for the scope call
    seed: str = ""                    # what it was learned from: a second run of the same job finds it stored


@dataclass
class Result:
    action: Action
    node: Node | None         # the lesson stored or changed
    store: Store | None
    matched: str = ""         # the existing lesson it was reconciled against
    detail: str = ""

    def describe(self) -> str:
        n = self.node
        text = {
            Action.STORED: f"stored {n.id if n else ''} in a new family {n.family if n else ''}",
            Action.DUPLICATE: f"duplicate of {self.matched}: nothing stored",
            Action.REFINED: f"refines {self.matched}: folded into {n.id if n else ''} and patched onto its ancestors",
            Action.CONTRADICTS: f"contradicts {self.matched}: both kept and marked disputed",
            Action.SPECIALISES: f"specialises {self.matched}: stored {n.id if n else ''} under it",
            Action.UNRECONCILED: f"stored {n.id if n else ''} unreconciled ({self.detail})",
        }[self.action]
        return text + (f" — {self.detail}" if self.detail and self.action is not Action.UNRECONCILED else "")


def project_description(layers: Layers) -> str:
    """The repository's name and the head of its README: repository content, shown to a judge only as untrusted
    data (it can describe the project, never decide where a lesson goes)."""
    root = layers.project_root()
    readme = next((root / n for n in ("README.md", "README.rst", "README") if (root / n).exists()), None)
    head = ""
    git = os.path.realpath(root / ".git") + os.sep
    if readme is not None and os.path.realpath(readme).startswith(git):
        readme = None   # a README linked into .git/ would quote its config (remote URLs can hold a token)
    if readme is not None:
        from rose.store import reader

        try:   # the repository's file: a regular one, no link out of it (a FIFO would hold the learner for ever)
            fd, _st = reader.open_regular(readme, within=root)
            try:
                head = " ".join(os.read(fd, 4096).decode("utf-8", "replace").split())[:300]
            finally:
                os.close(fd)
        except OSError:
            head = ""
    return f"repository {root.name}" + (f": {head}" if head else "")


def consolidate(layers: Layers, new: NewLesson, judge: Judge | None, settings: Settings) -> Result:
    from rose.judge import JudgeFailure

    from rose.redact import redact

    # redacted as given, before anything derives from them: a family becomes a folder name, slugged to lower case,
    # where a secret's shape (AKIA..., sk-...) would no longer be recognised
    new.family, new.tags = redact(new.family), [redact(t) for t in new.tags]
    new.title, new.body = redact(new.title), redact(new.body)
    new.title = new.title.strip() or derive_title(new.body)
    new.gist = new.gist.strip() or derive_gist(new.body)
    known = _already_known(layers, new)
    if known is not None:
        return known
    if judge is None or not judge.available:
        why = judge.build_failure.detail if judge is not None and judge.build_failure else "no model backend answered"
        return _store_unreconciled(layers, new, why)
    try:
        scope, scope_reason = decide_scope(layers, new, judge)
        related = _related(layers, new, judge, settings)
        for existing_store, existing in related[:RECONCILE_MAX]:
            relation, reason, question = _reconcile(new, existing, judge)
            if relation is not Relation.ORTHOGONAL:
                return _apply(layers, new, scope, scope_reason, relation, reason, question, existing_store, existing)
    except JudgeFailure as failure:
        return _store_unreconciled(layers, new, f"{failure.kind.value}: {failure}")
    node, store = _store(layers, new, scope, scope_reason, family=_new_family(layers, new))
    return Result(Action.STORED, node, store)


def decide_scope(layers: Layers, new: NewLesson, judge: Judge) -> tuple[Scope, str]:
    """Repository content alone never makes a global lesson; the user's words may, if the scope judgement agrees.

    The error is asymmetric (a global lesson filed locally is lost to every other repository), which the scope
    call's prompt states; here we only guard the store against promoting what a repository merely contains.
    """
    from rose.judge import Stage, calls

    if new.scope is not None:
        return new.scope, "chosen by the user"
    if not new.from_user:
        return Scope.PROJECT, "learned from repository content alone: project-scoped"
    answer = judge.ask(calls.SCOPE, calls.ScopeRequest(lesson=calls.Lesson("", new.title, new.body),
                                                        project=project_description(layers),
                                                        user_words=new.quote or new.body,
                                                        user_turn=new.user_turn),
                       stage=Stage.CONSOLIDATION)
    return Scope(answer.scope.value), f"scope judgement: {answer.reason}"


def _related(layers: Layers, new: NewLesson, judge: Judge, settings: Settings) -> list[tuple[Store, Node]]:
    """Shortlist with the recall search over every node (not only apexes), then let the model judge."""
    from rose.judge import Stage, calls
    from rose.recall import candidates
    from rose.recall.pipeline import rank_lists

    stores = layers.stores()
    if not stores:
        return []
    for store in stores:
        store.sync()
    query = f"{new.title}\n{' '.join(new.tags)}\n{new.body}"
    lists = rank_lists(stores, query, settings, hot=False)
    shortlist = [c for c in candidates.fuse(stores, lists, settings.recall, map_up=False)
                 if candidates.relevant_enough(c) and c.row.status != "archived"][:SHORTLIST]
    if not shortlist:
        return []
    answer = judge.ask(calls.RELATED, calls.RelatedRequest(
        lesson=calls.Lesson("", new.title, new.body),
        candidates=[calls.Candidate(c.id, c.row.title, c.row.gist) for c in shortlist]), stage=Stage.CONSOLIDATION)
    by_id = {c.id: c for c in shortlist}
    out = []
    for rel in answer.related:
        c = by_id.get(rel.id)
        if c is not None:
            out.append((c.store, c.store.get(c.id)))
    return out


def _reconcile(new: NewLesson, existing: Node, judge: Judge) -> tuple[Relation, str, str]:
    from rose.judge import Stage, calls

    answer = judge.ask(calls.RECONCILE, calls.ReconcileRequest(
        new=calls.Lesson("", new.title, new.body), existing=calls.Lesson(existing.id, existing.title, existing.body)),
        stage=Stage.CONSOLIDATION)
    return answer.relation, answer.reason, answer.question or ""


def may_edit(store: Store, scope: Scope) -> bool:
    """Whether a lesson of `scope` may change (fold into, count a hit on, dispute) a lesson in `store`: only where
    it could itself be stored. A project lesson (repository content, or the user's words the scope judgement kept to
    this repository) never changes the user's global lessons."""
    return store.scope is not Scope.GLOBAL or scope is Scope.GLOBAL


KEPT_OFF_GLOBAL = "a project lesson never edits a global one"


def _apply(layers: Layers, new: NewLesson, scope: Scope, scope_reason: str, relation: Relation, reason: str,
           question: str, store: Store, existing: Node) -> Result:
    if not may_edit(store, scope):
        return _beside_global(layers, new, scope, scope_reason, relation, reason, question, store, existing)
    if relation is Relation.DUPLICATE:
        def hit(n: Node) -> None:
            n.evidence = list(dict.fromkeys(n.evidence + new.evidence))
            if new.quote and new.evidence:
                n.quotes.setdefault(new.evidence[0], new.quote)
            n.extra["duplicate_hits"] = int(n.extra.get("duplicate_hits", 0)) + 1
        store.update(existing.id, hit)
        store.event(EventKind.UPDATE, id=existing.id, relation=Relation.DUPLICATE.value, reason=reason)
        return Result(Action.DUPLICATE, store.get(existing.id), store, existing.id, reason)
    if relation is Relation.REFINES:
        root = fold_refinement(store, existing, new)
        return Result(Action.REFINED, root, store, existing.id, reason)
    if relation is Relation.CONTRADICTS:
        node, new_store = _store(layers, new, scope, scope_reason, family=existing.family, status=Status.DISPUTED,
                                 conflict=question or reason, disputes=[existing.id])

        def dispute(n: Node) -> None:
            n.status = Status.DISPUTED
            n.conflict = question or reason
            n.disputes = list(dict.fromkeys(n.disputes + [node.id]))
        store.update(existing.id, dispute)
        return Result(Action.CONTRADICTS, node, new_store, existing.id, reason)
    if relation is Relation.SPECIALISES:
        node, new_store = _store(layers, new, scope, scope_reason, family=existing.family, parents=[existing.id])
        if new_store is store:
            store.update(existing.id, lambda n: n.derived_from.append(node.id) if node.id not in n.derived_from else None)
        return Result(Action.SPECIALISES, node, new_store, existing.id, reason)
    node, new_store = _store(layers, new, scope, scope_reason, family=_new_family(layers, new))
    return Result(Action.STORED, node, new_store)


def _beside_global(layers: Layers, new: NewLesson, scope: Scope, scope_reason: str, relation: Relation, reason: str,
                   question: str, store: Store, existing: Node) -> Result:
    """A project lesson related to a global one: stored in the project (or not at all), the global one untouched."""
    if relation is Relation.DUPLICATE:
        return Result(Action.DUPLICATE, existing, store, existing.id, f"{reason} ({KEPT_OFF_GLOBAL}: no hit recorded)")
    if relation is Relation.CONTRADICTS:
        node, new_store = _store(layers, new, scope, scope_reason, family=existing.family, status=Status.DISPUTED,
                                 conflict=question or reason, disputes=[existing.id])
        return Result(Action.CONTRADICTS, node, new_store, existing.id,
                      f"{reason} (only this project's lesson is disputed: {KEPT_OFF_GLOBAL})")
    # refines or specialises: the project's detail is kept under the global lesson, for this project alone
    node, new_store = _store(layers, new, scope, scope_reason, family=existing.family, parents=[existing.id])
    why = reason if relation is Relation.SPECIALISES else f"{reason} (kept in this project under it: {KEPT_OFF_GLOBAL})"
    return Result(Action.SPECIALISES, node, new_store, existing.id, why)


def fold_refinement(store: Store, matched: Node, new: NewLesson) -> Node:
    """Fold new detail into the matched lineage's level-0 lesson and register it on every ancestor as a rescue.

    Rescues make recall re-attach the detail at once (a sticky patch); repair folds it in for good once it keeps
    proving necessary. Working compressions are left as they are.
    """
    root = _level0(store, matched)
    detail = new.body.strip()

    def fold(n: Node) -> None:
        if detail not in n.body:
            n.body = n.body.rstrip() + "\n\n" + detail
        n.evidence = list(dict.fromkeys(n.evidence + new.evidence))
        if new.quote and new.evidence:
            n.quotes.setdefault(new.evidence[0], new.quote)
    store.update(root.id, fold)
    for ancestor_id in _ancestors(store, root.id):
        def patch(n: Node, holder: str = root.id) -> None:
            if not any(c.claim == detail for c in n.dropped):
                n.dropped.append(Claim(detail, ClaimKind.FACT, holder=holder, rescues=1))
        store.update(ancestor_id, patch)
    store.event(EventKind.UPDATE, id=root.id, relation=Relation.REFINES.value, ancestors=_ancestors(store, root.id))
    return store.get(root.id)


def _level0(store: Store, node: Node) -> Node:
    seen = {node.id}
    while node.level > 0 and node.derived_from:
        nxt = next((c for c in node.derived_from if c not in seen and store.has(c)), None)
        if nxt is None:
            break
        seen.add(nxt)
        node = store.get(nxt)
    return node


def _ancestors(store: Store, node_id: str) -> list[str]:
    out: list[str] = []
    frontier = [node_id]
    while frontier:
        nxt = []
        for nid in frontier:
            if not store.has(nid):
                continue
            for parent in store.get(nid).parents:
                if parent not in out and parent != node_id and store.has(parent):
                    out.append(parent)
                    nxt.append(parent)
        frontier = nxt
    return out


def _new_family(layers: Layers, new: NewLesson) -> str:
    if new.family:
        return family_slug(new.family)
    if new.tags:
        return family_slug(new.tags[0])
    words = [w for w in family_slug(new.title).split("-") if len(w) > 3][:2]
    return family_slug("-".join(words) or "general")


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _already_known(layers: Layers, new: NewLesson) -> Result | None:
    """Found in code, before any model call: the same evidence learned by an earlier run of this job (its seeded
    id exists), or the same text taught again (an exact match after case and whitespace are folded)."""
    if new.seed:
        node_id = seeded_id(new.seed)
        for store in layers.stores():
            if store.has(node_id):
                return Result(Action.DUPLICATE, store.get(node_id), store, node_id, "already learned from this evidence")
    body = _normal(new.body)
    if not body:
        return None
    for store in layers.stores():
        # the same text holds every one of its words: those lessons alone are ranked (the best five of them include
        # every duplicate the best five of an any-word search would)
        for node_id, _score in store.index.search(new.body[:2000], limit=5, every_word=True):
            rows = store.index.rows_by_id([node_id])
            row = rows.get(node_id)
            if row is None or row.status == "archived":
                continue
            existing = store.get(node_id)
            if _normal(existing.body) == body:
                if not may_edit(store, new.scope or Scope.PROJECT):   # its scope is not judged yet: the project's
                    return Result(Action.DUPLICATE, existing, store, node_id,
                                  f"the same text is stored already ({KEPT_OFF_GLOBAL}: no hit recorded)")
                def hit(n: Node) -> None:
                    n.evidence = list(dict.fromkeys(n.evidence + new.evidence))
                    if new.quote and new.evidence:
                        n.quotes.setdefault(new.evidence[0], new.quote)
                    n.extra["duplicate_hits"] = int(n.extra.get("duplicate_hits", 0)) + 1
                store.update(node_id, hit)
                return Result(Action.DUPLICATE, store.get(node_id), store, node_id, "the same text is stored already")
    return None


def _store(layers: Layers, new: NewLesson, scope: Scope, scope_reason: str, *, family: str,
           status: Status = Status.ACTIVE, conflict: str = "", disputes: list[str] | None = None,
           parents: list[str] | None = None, unreconciled: bool = False) -> tuple[Node, Store]:
    store = layers.writable(scope)
    wanted = seeded_id(new.seed) if new.seed else ""
    node_id = wanted if wanted and not layers.id_taken(wanted) else store.new_id(taken=layers.id_taken)
    node = Node(id=node_id, family=family, title=new.title, body=new.body.strip("\n"),
                gist=new.gist, tags=[t.lower() for t in new.tags], origin=new.origin, memory_type=new.memory_type,
                scope=scope, importance=new.importance, confidence=new.confidence, evidence=list(new.evidence),
                outcome=new.outcome, status=status, conflict=conflict, disputes=list(disputes or []),
                parents=list(parents or []), unreconciled=unreconciled)
    if new.quote and new.evidence:   # the user's own words, kept with the message they were checked against
        node.quotes = {new.evidence[0]: new.quote}
    node.extra["scope_reason"] = scope_reason
    node.extra["learned"] = now_iso()
    store.save(node)
    store.event(EventKind.ADD, id=node.id, family=node.family, origin=node.origin.value, scope=scope.value,
                memory_type=node.memory_type.value, unreconciled=unreconciled)
    return node, store


def _store_unreconciled(layers: Layers, new: NewLesson, why: str) -> Result:
    """No judgement: the user's explicit scope, else the project (never global by default: a global lesson needs
    the scope judgement on the user's own words, and a project lesson filed locally is only noise elsewhere)."""
    scope = new.scope or Scope.PROJECT
    node, store = _store(layers, new, scope, "not yet judged: " + why, family=_new_family(layers, new),
                         unreconciled=True)
    return Result(Action.UNRECONCILED, node, store, detail=why)


def reconcile_pending(layers: Layers, judge: Judge, settings: Settings, limit: int = 20) -> list[Result]:
    """Lessons stored while no backend answered get the reconciliation they missed, oldest first."""
    from rose.judge import JudgeFailure

    results = []
    pending = [(s, s.get(node_id)) for s in layers.stores() for node_id in s.index.unreconciled_ids()]
    pending.sort(key=lambda sn: sn[1].created)
    for store, node in pending[:limit]:
        new = NewLesson(body=node.body, title=node.title, gist=node.gist, tags=node.tags, family="",
                        memory_type=node.memory_type, origin=node.origin, importance=node.importance,
                        confidence=node.confidence, evidence=node.evidence, outcome=node.outcome,
                        from_user=node.origin in (Origin.MANUAL, Origin.EXTRACTION))
        try:
            related = [(s, n) for s, n in _related(layers, new, judge, settings) if n.id != node.id]
            verdict = None
            for existing_store, existing in related[:RECONCILE_MAX]:
                relation, reason, question = _reconcile(new, existing, judge)
                if relation is not Relation.ORTHOGONAL:
                    verdict = (relation, reason, question, existing_store, existing)
                    break
        except JudgeFailure:
            break  # still no answer: leave the rest for next time
        if verdict is None:
            store.update(node.id, lambda n: setattr(n, "unreconciled", False))
            results.append(Result(Action.STORED, store.get(node.id), store))
            continue
        relation, reason, question, existing_store, existing = verdict
        if relation is Relation.REFINES and not may_edit(existing_store, node.scope):
            relation = Relation.SPECIALISES   # kept in the project under the global lesson, which stays as it was
        if relation is Relation.DUPLICATE:
            _archive(store, node.id, f"duplicate of {existing.id}")
            results.append(Result(Action.DUPLICATE, existing, existing_store, existing.id, reason))
        elif relation is Relation.REFINES:
            fold_refinement(existing_store, existing, new)
            _archive(store, node.id, f"folded into the lineage of {existing.id}")
            results.append(Result(Action.REFINED, existing, existing_store, existing.id, reason))
        elif relation is Relation.CONTRADICTS:
            # each edit binds this iteration's values (it runs at once, but a closure over loop names would not say so)
            def mine(n: Node, conflict: str = question or reason, other: str = existing.id) -> None:
                n.status, n.conflict, n.unreconciled = Status.DISPUTED, conflict, False
                n.disputes = list(dict.fromkeys([*n.disputes, other]))

            def theirs(n: Node, conflict: str = question or reason, other: str = node.id) -> None:
                n.status, n.conflict = Status.DISPUTED, conflict
                n.disputes = list(dict.fromkeys([*n.disputes, other]))
            store.update(node.id, mine)
            if may_edit(existing_store, node.scope):
                existing_store.update(existing.id, theirs)
            results.append(Result(Action.CONTRADICTS, store.get(node.id), store, existing.id, reason))
        else:  # specialises
            def under(n: Node, parent: str = existing.id, family: str = existing.family) -> None:
                n.parents = list(dict.fromkeys([*n.parents, parent]))
                n.family, n.unreconciled = family, False

            def derived(n: Node, child: str = node.id) -> None:
                if child not in n.derived_from:
                    n.derived_from.append(child)
            store.update(node.id, under)
            if existing_store is store:
                store.update(existing.id, derived)
            results.append(Result(Action.SPECIALISES, store.get(node.id), store, existing.id, reason))
    return results


def _archive(store: Store, node_id: str, why: str) -> None:
    """Into the cold archive (rose.store.archive), kept whole: what it said lives on in the lesson it duplicated or
    refined."""
    def arch(n: Node) -> None:
        n.status, n.unreconciled = Status.ARCHIVED, False
        n.extra["archived_because"] = why
    store.update(node_id, arch, because=why)
