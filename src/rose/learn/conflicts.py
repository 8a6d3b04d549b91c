"""Contradictions are never resolved silently: `rose conflicts` lists them, `rose resolve` settles one.

    rose resolve ID          both lessons stand (the question was answered: both hold, in their contexts)
    rose resolve ID --drop   ID was wrong: it moves to the cold archive (kept whole; rose.store.archive), the other
                             lessons stand; `rose restore ID` brings it back
"""
from __future__ import annotations

from rose.errors import CorruptFile, NodeNotFound
from rose.model import Node, Status
from rose.store import Layers, Store
from rose.store.events import EventKind
from rose.store.index import DISPUTED_SQL
from rose.typedrecord import Record


class Conflict(Record):
    node: Node
    store: Store
    question: str
    against: list[str]


def open_conflicts(layers: Layers) -> list[Conflict]:
    out = []
    for store in layers.require_any():
        store.sync()
        for row in store.index.rows(DISPUTED_SQL):
            node = store.get(row.id)
            out.append(Conflict(node, store, node.conflict, node.disputes))
    return out


def resolve(layers: Layers, node_id: str, drop: bool) -> list[str]:
    """Settle the dispute around `node_id`; returns the ids whose status changed."""
    layers.require_any()
    store, node = layers.locate(node_id)
    changed = [node_id]
    partners = list(node.disputes)

    def settle(n: Node) -> None:
        if drop:
            n.status = Status.ARCHIVED
            n.extra["archived_because"] = "dropped by `rose resolve --drop`"
        else:
            n.status = Status.ACTIVE
        n.conflict = ""
        n.disputes = []
    store.update(node_id, settle, because="dropped by `rose resolve --drop`" if drop else "")
    for other_id in partners:
        try:
            other_store, other = layers.locate(other_id)
        except (NodeNotFound, CorruptFile) as exc:  # a partner deleted or broken by hand: nothing to settle there
            store.event(EventKind.SKIP, what="settle", id=other_id, reason=str(exc))
            continue

        def release(n: Node) -> None:
            n.disputes = [d for d in n.disputes if d != node_id]
            if not n.disputes and n.status is Status.DISPUTED:
                n.status = Status.ACTIVE
                n.conflict = ""
            elif not n.disputes and n.status is Status.ARCHIVED and n.archived_from is Status.DISPUTED:
                n.archived_from, n.conflict = Status.ACTIVE, ""   # a cold partner returns undisputed
        other_store.update(other.id, release)
        changed.append(other.id)
    store.event(EventKind.UPDATE, id=node_id, resolved=True, dropped=drop, partners=partners)
    return changed
