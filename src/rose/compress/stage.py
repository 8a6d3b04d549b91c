"""What the learner runs after each episode is recorded: observe, settle, descend, repair, compress, merge.

    note = after_episode(layers, owner, episode, judge, settings, digest)

1. observe   when a used lesson carries sticky patches or detail under trial: one `assess` call on whether that
             detail was itself used
2. settle    sticky patches used on success earn a rescue; trials are decided (rescue / next candidate /
             escalate / knowledge gap)
3. descend   a used compressed lesson on failed work, with no trial used, opens a descent
4. repair    claims that rescued often enough fold back into the body
5. merge     lessons used together on enough successful work earn a shared parent
6. compress  every used lesson that has become eligible gets one attempt

A judge that fails skips that step (nothing is guessed); the rest still runs. Returns a one-line summary for the
learner's log ("" when nothing happened).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rose.compress import compression, descent, eligibility, merge, observe, repair
from rose.compress.graph import Graph
from rose.model import EpisodeOutcome

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rose.config import Settings
    from rose.judge import Judge
    from rose.model import Episode
    from rose.store import Layers, Store


@dataclass(frozen=True)
class Stages:
    """Which steps run. All on in production; the benchmark switches one off to measure what it buys."""

    compress: bool = True
    descent: bool = True
    merge: bool = True


_override: Stages | None = None


@contextmanager
def only(stages: Stages) -> Iterator[None]:
    """Run with some steps switched off (a benchmark / test seam; there is no user setting for it)."""
    global _override
    saved, _override = _override, stages
    try:
        yield
    finally:
        _override = saved


def after_episode(layers: Layers, owner: Store, episode: Episode, judge: Judge, settings: Settings,
                  digest: str | None = None) -> str:
    stages = _override or Stages()
    stages = replace(stages, compress=stages.compress and settings.compression.enabled)
    graph = Graph(layers)
    notes: list[str] = []
    success = episode.outcome is EpisodeOutcome.SUCCESS
    failure = episode.outcome is EpisodeOutcome.FAILURE
    used = [f for f in (graph.find(i) for i in episode.used) if f is not None]

    # 1. observe: was the detail attached under a used lesson (sticky patches, trials) itself used?
    pieces: list[observe.Piece] = []
    if stages.descent:
        for f in used:
            texts = descent.node_texts(graph, descent.referenced(f.node.trials))
            attached = [descent.attached_texts(t, texts) for t in f.node.trials]
            pieces += observe.pieces(f.node, spans=False, attached=attached)
    seen = observe.observe(judge, episode, digest, pieces) if pieces and digest is not None else None
    if pieces and seen is None:
        notes.append("descent: attached detail not judged (no digest or the judge did not answer)")

    # 2. settle
    if seen:
        for f in used:
            if f.node.trials or any(c.rescues > 0 for c in f.node.dropped):
                fx = descent.settle(graph, f, seen, success, episode)
                descent.apply_effects(graph, fx)
                notes += fx.notes

    # 3. descend
    if stages.descent and failure:
        tried_here = {p.node for p in pieces if p.kind == "trial" and seen and seen.get(p.id)}
        for f in used:
            current = graph.find(f.node.id)
            if current is None or current.node.id in tried_here or current.node.status.value not in ("active",
                                                                                                     "disputed"):
                continue
            fx = descent.open_descent(graph, current, episode, judge, settings)
            descent.apply_effects(graph, fx)
            notes += fx.notes

    # 4. repair
    if stages.descent:
        for f in used:
            current = graph.find(f.node.id)
            if current is not None:
                folded = repair.repair(current, settings.descent.repair_after_rescues)
                notes += [f"repair: folded \u201c{descent._short(c)}\u201d into {current.node.id}" for c in folded]

    # 5. merge (before compress, so a lesson used with another is merged as the form that was used)
    if stages.merge and success:
        for pair in merge.candidates(graph, episode, settings)[:1]:
            notes.append(merge.attempt(graph, pair, judge, settings).describe())
    # 6. compress
    if stages.compress and success:
        for f in used:
            current = graph.find(f.node.id)
            if current is None:
                continue
            elig = eligibility.check(graph, current.node, settings.compression)
            if elig.ok:
                notes.append(compression.attempt(graph, current, judge, settings, elig).describe())

    return "; ".join(notes)
