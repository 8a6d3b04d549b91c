"""Small builders for retention tests: lessons, compressed lineages, credits through the real attribution code."""
from __future__ import annotations

from rose.learn.attribute import Attribution, record_episode
from rose.model import EpisodeOutcome, MemoryType, Node, Origin, Status
from rose.store import Layers, Store


def lesson(node_id: str, body: str = "", **kw) -> Node:
    body = body or f"Body of {node_id}: " + " ".join(f"word{i}" for i in range(kw.pop("words", 20)))
    return Node(id=node_id, family=kw.pop("family", "fam"), title=kw.pop("title", f"Title {node_id}"), body=body,
                **kw)


def lineage(store: Store, head: str, detail: str, **kw) -> tuple[Node, Node]:
    """A compressed lesson (L1) over the level-0 detail it supersedes."""
    low = lesson(detail, level=0, status=Status.SUPERSEDED, parents=[head], **kw)
    top = lesson(head, level=1, origin=Origin.COMPRESSION, derived_from=[detail], **kw)
    store.save_many([low, top])
    return top, low


def credit(layers: Layers, ids: list[str], outcome: EpisodeOutcome, session: str, unused: list[str] = ()):
    return record_episode(layers, layers.project, session, "the task",
                          Attribution(outcome, "done", list(ids), list(unused), "reported"),
                          episode_id=f"e_{session}")


def orientation(node_id: str, body: str, **kw) -> Node:
    kw.setdefault("origin", Origin.REFLECTION)
    return lesson(node_id, body, memory_type=MemoryType.ORIENTATION, **kw)
