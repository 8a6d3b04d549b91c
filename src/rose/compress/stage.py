"""What the learner runs after each episode is recorded: observe, settle, descend, repair, merge, compress.

    note = after_episode(layers, owner, episode, judge, settings, digest)

1. observe   when a used lesson carries sticky patches or detail under trial: one `assess` call on whether that
             detail was itself used
2. settle    sticky patches used on success earn a rescue; trials are decided (rescue / next candidate /
             escalate / knowledge gap)
3. descend   a used compressed lesson on failed work, with no trial used, opens a descent (an uncompressed lesson
             has nothing below it to descend to)
4. repair    claims that rescued often enough fold back into the body
5. merge     lessons used together on enough successful work earn a shared parent
6. compress  every used lesson that has become eligible gets one attempt

A judge that fails skips that step (nothing is guessed); the rest still runs. So does a step stopped by a store
error (a lesson deleted meanwhile): the episode is already recorded and the learner job completes. Returns a
one-line summary for the learner's log ("" when nothing happened).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rose.compress import compression, descent, eligibility, merge, observe, payback, repair
from rose.compress.graph import Graph
from rose.errors import RoseError
from rose.model import SERVABLE, EpisodeOutcome, Origin

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rose.compress.graph import Located
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
    merge_always: bool = False   # make a due merge even where it cannot pay (the demo's small world shows one)


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
                  digest: str | None = None, seen: dict[str, bool] | None = None) -> str:
    """`seen`: the attached detail already judged with the session's own `assess` call (rose.learn.attribute), so
    step 1 asks again only about pieces that call did not cover."""
    stages = _override or Stages()
    run = _Run(Graph(layers), episode, judge, settings, digest,
               replace(stages, compress=stages.compress and settings.compression.enabled))
    run.judged = dict(seen or {})
    steps = [("descent", run.observe_and_settle, stages.descent), ("descent", run.descend, stages.descent),
             ("repair", run.repair, stages.descent), ("merge", run.merge, stages.merge),
             ("compression", run.compress, run.stages.compress)]
    for name, step, enabled in steps:
        if not enabled:
            continue
        try:
            step()
        except RoseError as exc:   # a lesson deleted or a file unreadable meanwhile: this step stops, not the job
            run.notes.append(f"{name} step stopped: {type(exc).__name__}: {exc}")
    return "; ".join(run.notes)


class _Run:
    def __init__(self, graph: Graph, episode: Episode, judge: Judge, settings: Settings, digest: str | None,
                 stages: Stages):
        self.graph, self.episode, self.judge, self.settings, self.digest, self.stages = \
            graph, episode, judge, settings, digest, stages
        self.notes: list[str] = []
        self.success = episode.outcome is EpisodeOutcome.SUCCESS
        self.failure = episode.outcome is EpisodeOutcome.FAILURE
        self.used = [f for f in (graph.find(i) for i in episode.used) if f is not None]
        self.pieces: list[observe.Piece] = []
        self.seen: dict[str, bool] | None = None
        self.judged: dict[str, bool] = {}     # pieces the session's assess call already answered

    def current(self) -> list[Located]:
        return [f for f in (self.graph.find(u.node.id) for u in self.used) if f is not None]

    def observe_and_settle(self) -> None:
        """Steps 1-2: was the detail attached under a used lesson itself used? Then credit and decide it."""
        for f in self.used:
            texts = descent.node_texts(self.graph, descent.referenced(f.node.trials))
            attached = [descent.attached_texts(t, texts) for t in f.node.trials]
            self.pieces += observe.pieces(f.node, spans=False, attached=attached)
        if not self.pieces:
            return
        if all(p.id in self.judged for p in self.pieces):
            self.seen = {p.id: self.judged[p.id] for p in self.pieces}   # answered with the session's assess call
        elif self.digest is not None:
            self.seen = observe.observe(self.judge, self.episode, self.digest, self.pieces)
        if self.seen is None:
            self.notes.append("descent: attached detail not judged (no digest or the judge did not answer)")
            return
        for f in self.used:
            if f.node.trials or any(c.rescues > 0 for c in f.node.dropped):
                self._apply(descent.settle(self.graph, f, self.seen, self.success, self.episode))

    def descend(self) -> None:
        """Step 3. A lesson whose attached detail was tried here has already moved on; one whose trials could not
        be judged waits; a merge parent's detail is its children, which are served beside it."""
        if not self.failure:
            return
        tried = {p.node for p in self.pieces if p.kind == "trial" and self.seen and self.seen.get(p.id)}
        for f in self.current():
            node = f.node
            if node.id in tried or node.origin is Origin.MERGE or node.status not in SERVABLE \
                    or (self.seen is None and node.trials):
                continue
            self._apply(descent.open_descent(self.graph, f, self.episode, self.judge, self.settings))

    def repair(self) -> None:
        for f in self.current():
            for claim in repair.repair(f, self.settings.descent.repair_after_rescues):
                self.notes.append(f"repair: folded \u201c{descent.short(claim)}\u201d into {f.node.id}")

    def merge(self) -> None:
        """Step 5, before compression, so lessons used together are merged in the form that was used; only where a
        parent can pay for itself (rose.compress.payback.merge_pays)."""
        if self.success:
            for pair in merge.candidates(self.graph, self.episode, self.settings)[:1]:
                pays = payback.merge_pays(self.graph.layers.stores(), self.settings.recall)
                if not pays.worth and not self.stages.merge_always:
                    self.notes.append(f"merge of {pair[0].node.id} + {pair[1].node.id} not attempted: {pays.reason}")
                    continue
                self.notes.append(merge.attempt(self.graph, pair, self.judge, self.settings).describe())

    def compress(self) -> None:
        if self.success:
            for f in self.current():
                elig = eligibility.check(self.graph, f.node, self.settings.compression)
                if elig.ok:
                    self.notes.append(compression.attempt(self.graph, f, self.judge, self.settings, elig).describe())

    def _apply(self, fx: descent.Effects) -> None:
        descent.apply_effects(self.graph, fx)
        self.notes += fx.notes
