"""Recurrence promotion: a rule the user restates in three or more projects may be how they work everywhere.

Recurrence only nominates (rules.recurs): projects that share a stack produce the same stack rule. A model review
(the `recurrence` call) must confirm that the user's own words govern how they work in every project; otherwise the
instances stay where they are. A cluster is reviewed only when the job that ran this pass just minted or restated one
of its rules, and a verdict is remembered against the cluster's evidence (the instances and their evidence handles),
so a declined rule is asked again on new evidence, not on every run.

Only the user's own rules take part: lessons resting on the user's words (a quote-checked extraction, or `rose add`),
never repository-derived records (orientation, experience, anything without the user's words). A repository's
committed store is untrusted: its instances may help nominate, but the rule that moves is the one this job just
learned from the user or one from the user's own stores (~/.rose/projects/...), the highest-importance among those.
On confirmation it moves to the global store unchanged (same id and text), its evidence and quotes unioned with the
other instances', which are listed in its `related` and archived in their projects (never deleted).

The project stores considered are the ones this user's learner has worked in (a registry in the global store's
machine-local cache/, at most MAX_PROJECTS, the most recent first).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rose.text import load_json
from rose.model import SERVABLE, MemoryType, Node, Origin, Scope, now_iso
from rose.retention import rules
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.judge import Judge
    from rose.retention.maintain import PassReport
    from rose.store import Layers, Store

REGISTRY = "project-stores.json"   # under the global store's cache/: project stores the learner has worked in
VERDICTS = "recurrence.json"       # under the global store's cache/: verdicts, by the evidence they were given
MAX_PROJECTS = 64                  # project stores compared (the most recently seen): bounded work per pass
SHORTLIST = 10                     # lexical hits per other project checked for a near-verbatim restatement


def _cache(name: str) -> Path:
    from rose.store.layers import global_root

    return global_root() / "cache" / name


def _read(name: str) -> dict:
    try:
        data = load_json(_cache(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(name: str, data: dict) -> None:
    from rose.store.atomic import write_text_atomic

    path = _cache(name)
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n", mode=0o600)


def clean() -> None:
    """Temp files a writer of these caches left when it was killed (the registry, the verdicts)."""
    from rose.store.atomic import clean_stray_temps

    folder = _cache(REGISTRY).parent
    if folder.is_dir():
        clean_stray_temps(folder, recursive=False)


def register(store: Store) -> list[Path]:
    """Record that this project store exists (most recent first); returns the registered roots."""
    root = str(store.root.resolve())
    data = _read(REGISTRY)
    roots = [r for r in data.get("stores", []) if isinstance(r, str) and r != root]
    roots = [root, *roots][:MAX_PROJECTS]
    if data.get("stores", [])[:1] != [root]:
        _write(REGISTRY, {"stores": roots})
    return [Path(r) for r in roots]


def users_rule(node: Node) -> bool:
    """A project lesson resting on the user's own words: the only kind recurrence may move global."""
    return (node.memory_type is MemoryType.LESSON and node.scope is Scope.PROJECT
            and node.status in SERVABLE
            and (node.origin is Origin.MANUAL or (node.origin is Origin.EXTRACTION and bool(node.quotes))))


def _words(node: Node) -> frozenset[str]:
    return rules.words(f"{node.title}\n{node.body}")


def _restatement(store: Store, rule: Node, words: frozenset[str]) -> Node | None:
    """This project's near-verbatim restatement of the rule (the closest at or above RECURRENCE_JACCARD), if any."""
    best: tuple[float, Node] | None = None
    for node_id, _score in store.index.search(f"{rule.title}\n{rule.body}", limit=SHORTLIST):
        try:
            node = store.get(node_id)
        except Exception:  # noqa: BLE001 - unreadable or gone: not an instance
            continue
        if not users_rule(node):
            continue
        score = rules.jaccard(words, _words(node))
        if score >= rules.RECURRENCE_JACCARD and (best is None or score > best[0]):
            best = (score, node)
    return best[1] if best else None


def _project_name(store: Store) -> str:
    return store.root.parent.name if store.root.name == ".rose" else store.root.name


def _own(store: Store) -> bool:
    from rose.store.layers import global_root

    return store.root.resolve().is_relative_to(global_root())


def _fingerprint(instances: list[tuple[Store, Node]]) -> str:
    ident = sorted([str(s.root), n.id, sorted(n.evidence)] for s, n in instances)
    return hashlib.sha256(json.dumps(ident).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def review(layers: Layers, judge: Judge, touched: list[str], report: PassReport) -> list[str]:
    """Review the clusters the touched rules belong to; returns the ids moved global."""
    from rose.judge import JudgeFailure, Stage, calls
    from rose.store import Store
    from rose.store.layers import sound_store

    project = layers.project
    if project is None:
        return []
    roots = register(project)
    others: list[Store] = []
    try:
        for root in roots[1:]:
            if (root / "nodes").is_dir() and root.resolve() != project.root.resolve() and sound_store(root):
                others.append(Store(root, Scope.PROJECT))
        promoted: list[str] = []
        for rule_id in dict.fromkeys(touched):
            try:
                rule = project.get(rule_id)
            except Exception:  # noqa: BLE001 - gone since it was touched
                continue
            if not users_rule(rule):
                continue
            words = _words(rule)
            instances: list[tuple[Store, Node]] = [(project, rule)]
            for other in others:
                try:
                    other.sync()
                    found = _restatement(other, rule, words)
                except Exception:  # noqa: BLE001 - another project's store we cannot read is not evidence
                    continue
                if found is not None:
                    instances.append((other, found))
            if not rules.recurs(str(s.root) for s, _n in instances):
                continue
            verdicts = _read(VERDICTS)
            key = _fingerprint(instances)
            if key in verdicts:
                continue   # asked on exactly this evidence already
            request = calls.RecurrenceRequest([
                calls.RecurringRule(_project_name(s), " / ".join(n.quotes.values()) or n.body,
                                    calls.Lesson(n.id, n.title, n.body)) for s, n in instances])
            try:
                answer = judge.ask(calls.RECURRENCE, request, stage=Stage.RETENTION)
            except JudgeFailure:
                continue   # no answer: nothing moves, nothing is remembered (asked again when restated)
            verdicts[key] = {"everywhere": answer.everywhere, "reason": answer.reason, "at": now_iso(),
                             "ids": [n.id for _s, n in instances]}
            _write(VERDICTS, verdicts)
            project.event(EventKind.RETENTION, action="recurrence reviewed", ids=[n.id for _s, n in instances],
                          everywhere=answer.everywhere, reason=answer.reason)
            if not answer.everywhere:
                continue
            movable = [(s, n) for s, n in instances if n.id == rule.id or _own(s)]
            top_id = rules.promotion_choice([(n.id, rules.effective_importance(n.importance, n.learned_importance),
                                              len(n.evidence), n.created) for _s, n in movable])
            top_store, top = next((s, n) for s, n in movable if n.id == top_id)
            rest = [(s, n) for s, n in instances if n is not top]
            _to_global(layers, top_store, top, rest, answer.reason)
            for s, n in rest:
                moved = s.archive([n.id], f"promoted to the global store as {top.id}")
                report.count("promoted", len(moved))
            promoted.append(top.id)
        return promoted
    finally:
        for other in others:
            other.close()


def _to_global(layers: Layers, source: Store, node: Node, rest: list[tuple[Store, Node]], reason: str) -> None:
    """Write the rule into the global store (its text unchanged), then take its file out of the project: a move,
    checked before the project's copy goes (the global file must hold the same text)."""
    target = layers.writable(Scope.GLOBAL)
    if not target.has(node.id):
        moved = Node.from_dict(node.to_dict(), node.body)
        moved.scope = Scope.GLOBAL
        moved.learned_importance = node.learned_importance
        moved.evidence = list(dict.fromkeys(node.evidence + [e for _s, n in rest for e in n.evidence]))
        for _s, n in rest:
            for handle, words in n.quotes.items():
                moved.quotes.setdefault(handle, words)
        moved.related = list(dict.fromkeys([*node.related, *(n.id for _s, n in rest)]))
        moved.extra["scope_reason"] = f"recurrence review: {reason}"
        moved.extra["promoted_from"] = _project_name(source)
        target.save(moved)
    if target.get(node.id).body != node.body:
        raise RuntimeError(f"{node.id} in the global store does not hold the project's text: the project copy stays")
    source.delete(node.id, because=f"moved to the global store ({target.root})")
    source.event(EventKind.RETENTION, action="promoted", id=node.id, to=str(target.root),
                 related=[n.id for _s, n in rest])
