"""Held-out evaluation: after a compression (or merge) is accepted, the episodes that were never allowed to accept
it are replayed, and the node records its held-out pass rate. A node that fails any of its held-out episodes is
demoted and the node it was made from is served again; the failures become preserve hints for the next attempt.

The pass rate is the measurement the spec lacked: whether a compressed lesson still reproduces accepted work it was
not validated on. Held-out episodes never accept a compression and never feed the compressor's span evidence; the
one place they do inform a later attempt is the preserve hint a demotion leaves, after which the lineage's next
held-out measurement on those same episodes is no longer blind (docs/compression.md says so too).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rose.compress import episodes as corpus
from rose.compress.demote import demote
from rose.compress.graph import served_text
from rose.compress.replay import Replay, replay

if TYPE_CHECKING:
    from rose.compress.graph import Graph
    from rose.config import Settings
    from rose.judge import Judge
    from rose.model import Episode, Node
    from rose.store import Store


@dataclass
class HeldOut:
    passed: int
    total: int
    demoted: bool = False
    replays: list[Replay] = field(default_factory=list)

    def describe(self) -> str:
        if not self.total:
            return "no held-out episodes yet"
        text = f"held-out {self.passed}/{self.total}"
        return text + (": demoted, the lesson below is served again" if self.demoted else "")


def evaluate(graph: Graph, store: Store, node: Node, judge: Judge, settings: Settings, pool: list[Episode],
             text: str | None = None) -> HeldOut:
    """Replay `node` (served as `text`, default its served form) on a sample of the held-out `pool`, with the
    other lessons each episode used beside it."""
    sample = corpus.sample(pool, settings.compression.replay_k, salt="heldout|" + node.id)
    if not sample:
        return HeldOut(0, 0)
    stands_for = {node.id} | ({c.id for c in graph.children(node)} if text is not None else set())
    replays = replay(judge, node.title, text if text is not None else served_text(node), sample, graph, stands_for)
    passed = sum(r.passed for r in replays)

    def record(n: Node) -> None:
        n.heldout_passed, n.heldout_total = passed, len(replays)
    store.update(node.id, record)
    result = HeldOut(passed, len(replays), replays=replays)
    if passed < len(replays):
        hints = [r.hint() for r in replays if not r.passed and not r.unreadable]
        demote(graph, node.id, f"failed {len(replays) - passed} of {len(replays)} held-out episodes", hints)
        result.demoted = True
    return result
