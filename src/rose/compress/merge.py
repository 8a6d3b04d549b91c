"""Merge: lessons repeatedly used together on work that succeeded earn a shared parent, a generalisation across
lessons (not a compression within one). Counting co-use is an observed outcome, so it stays in code; writing the
generalisation is the `merge` call.

The parent is validated on the union of its children's regression sets, replayed with the parent served above the
children (the children keep their detail and stay servable; a parent that over-generalises into something the
accepted work contradicts fails there). Held-out episodes are replayed after acceptance like any compression's.
Both edges are lists: a child keeps its compression parent and gains the merge parent beside it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from rose.compress import episodes as corpus
from rose.compress import heldout
from rose.compress.eligibility import seconds_since, successes_since_attempt
from rose.compress.graph import served_text
from rose.compress.replay import Replay, replay
from rose.model import SERVED_STATUSES, EpisodeOutcome, Node, Origin, Status, now_iso
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.compress.graph import Graph, Located
    from rose.config import Settings
    from rose.judge import Judge
    from rose.model import Episode

MERGE_AFTER_CO_USES = 3    # successful episodes that used both lessons before a shared parent is attempted
SERVABLE = SERVED_STATUSES


@dataclass
class MergeOutcome:
    children: list[str]
    accepted: Node | None
    reason: str
    replays: list[Replay] = field(default_factory=list)
    heldout: heldout.HeldOut | None = None

    def describe(self) -> str:
        pair = " + ".join(self.children)
        if self.accepted is None:
            return f"merge of {pair} rejected: {self.reason}"
        text = f"merged {pair} under {self.accepted.id} L{self.accepted.level} ({self.reason})"
        return text + (", " + self.heldout.describe() if self.heldout else "")


def co_use_counts(graph: Graph, found: dict[str, Located]) -> dict[tuple[str, str], int]:
    """For each pair of these lessons: successful episodes (in any layer) that used both. A lesson counts with its
    whole lineage (the forms below it), so compressing a lesson does not reset what it was used with."""
    lineage = {i: {n.id for n in graph.subtree(f.node)} for i, f in found.items()}
    counts = {tuple(sorted(p)): 0 for p in combinations(sorted(found), 2)}
    if not counts:
        return counts
    for store in graph.layers.stores():
        episodes, _bad = store.episodes()
        for ep in episodes:
            if ep.outcome is not EpisodeOutcome.SUCCESS:
                continue
            used = set(ep.used)
            for a, b in counts:
                if used & lineage[a] and used & lineage[b]:
                    counts[(a, b)] += 1
    return counts


def merge_parents(graph: Graph, node: Node) -> set[str]:
    """Live merge parents of the lesson or of any form below it (a merge of an earlier form still covers it)."""
    out = set()
    for n in graph.subtree(node):
        for pid in n.parents:
            parent = graph.node(pid)
            if parent is not None and parent.origin is Origin.MERGE and parent.status not in (Status.ARCHIVED,
                                                                                               Status.DEMOTED):
                out.add(pid)
    return out


def share_parent(graph: Graph, a: Node, b: Node) -> bool:
    return bool(merge_parents(graph, a) & merge_parents(graph, b))


def candidates(graph: Graph, episode: Episode, settings: Settings) -> list[tuple[Located, Located]]:
    """Pairs of this episode's used, servable lessons that have earned a shared parent and do not have one."""
    if episode.outcome is not EpisodeOutcome.SUCCESS or len(episode.used) < 2:
        return []
    found = {i: f for i in episode.used if (f := graph.find(i)) is not None and f.node.status in SERVABLE}
    counts = co_use_counts(graph, found)
    cooldown = settings.compression.cooldown_s
    out = []
    for (a, b), n in sorted(counts.items()):
        fa, fb = found[a], found[b]
        if n < MERGE_AFTER_CO_USES or share_parent(graph, fa.node, fb.node):
            continue
        if b in {x.id for x in graph.subtree(fa.node)} or a in {x.id for x in graph.subtree(fb.node)}:
            continue   # one already generalises the other
        if min(seconds_since(fa.node.last_attempt), seconds_since(fb.node.last_attempt)) < cooldown:
            continue
        if min(successes_since_attempt(fa.node), successes_since_attempt(fb.node)) < settings.compression.min_successes:
            continue
        out.append((fa, fb))
    return out


def served_with_children(title: str, body: str, children: list[Node]) -> str:
    parts = [body.strip()]
    for child in children:
        parts.append(f"{child.title}:\n{served_text(child)}")
    return "\n\n".join(parts)


def attempt(graph: Graph, pair: tuple[Located, Located], judge: Judge, settings: Settings) -> MergeOutcome:
    from rose.judge import JudgeFailure, Stage, calls

    cs = settings.compression
    stamp = now_iso()
    children = []
    def start(n: Node) -> None:
        n.last_attempt, n.last_attempt_successes = stamp, n.stats.successes
    for f in pair:
        children.append(f.store.update(f.node.id, start))
    ids = [c.id for c in children]
    try:
        answer = judge.ask(calls.MERGE, calls.MergeRequest([calls.Lesson(c.id, c.title, served_text(c))
                                                            for c in children]), stage=Stage.CONSOLIDATION)
    except JudgeFailure as failure:
        return MergeOutcome(ids, None, f"merge did not answer ({failure.kind.value})")
    covered = [c for c in children if c.id in answer.covers]
    if len(covered) < 2:
        return MergeOutcome(ids, None, "the parent does not cover both lessons")
    validation, held = corpus.split(corpus.regression_set(graph, covered), cs.heldout_fraction)
    if not validation:
        return MergeOutcome(ids, None, "no recorded episodes to validate against")
    text = served_with_children(answer.title, answer.body, covered)
    replays = replay(judge, answer.title, text, corpus.sample(validation, cs.replay_k, salt="merge|" + "|".join(ids)),
                     graph, {c.id for c in covered})
    failed = [r for r in replays if not r.passed]
    if failed:
        found_store = pair[0].store
        found_store.event(EventKind.UPDATE, stage="merge", action="rejected", children=ids,
                          failed=[r.episode.id for r in failed])
        return MergeOutcome(ids, None, f"{len(failed)} of {len(replays)} replays failed", replays)

    store = pair[0].store
    tags = list(dict.fromkeys(t for c in covered for t in c.tags))
    parent = Node(id=store.new_id(taken=graph.layers.id_taken), family=covered[0].family, title=answer.title,
                  body=answer.body, gist=answer.gist, level=max(c.level for c in covered) + 1, origin=Origin.MERGE,
                  derived_from=[c.id for c in covered], tags=tags, scope=covered[0].scope, last_attempt=stamp,
                  importance=max(c.importance for c in covered))
    store.save(parent)
    for f in pair:
        if f.node.id in parent.derived_from:
            f.store.update(f.node.id, lambda n: n.parents.append(parent.id) if parent.id not in n.parents else None)
    store.event(EventKind.UPDATE, stage="merge", action="accepted", children=ids, parent=parent.id)
    held_result = heldout.evaluate(graph, store, parent, judge, settings, held,
                                   text=served_with_children(parent.title, parent.body, covered))
    return MergeOutcome(ids, store.get(parent.id), f"{len(replays)}/{len(replays)} replays passed", replays,
                        held_result)
