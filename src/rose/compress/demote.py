"""Demotion: a node that proved worse than what it was made from stops being served, and the nodes it was made from
are served again. Nothing is deleted: the demoted node keeps its file, its edges and its record.

Used when a compression fails its held-out set, and when descent had to escalate to level 0 and level 0 rescued
the work (the manifest did not name the detail that mattered, so the compression cut too deep).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rose.compress.graph import base_body
from rose.compress.replay import add_hints
from rose.model import Node, Status
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.compress.graph import Graph


def demote(graph: Graph, node_id: str, reason: str, hints: list[str] | None = None) -> list[str]:
    """Demote `node_id`, restore its superseded children to active (with `hints` added to their preserve list).
    Returns the ids restored."""
    found = graph.find(node_id)
    if found is None:
        return []

    def down(n: Node) -> None:
        n.status = Status.DEMOTED
        n.trials = []
        n.body = base_body(n.body)
    node = found.store.update(node_id, down)
    restored = []
    for child_id in node.derived_from:
        child = graph.find(child_id)
        if child is None:
            continue

        def up(c: Node) -> None:
            if c.status is Status.SUPERSEDED:
                c.status = Status.ACTIVE
            if hints:
                c.preserve = _merge_hints(c.preserve, hints)
        child.store.update(child_id, up)
        restored.append(child_id)
    found.store.event(EventKind.UPDATE, stage="compression", action="demoted", node=node_id, reason=reason,
                      restored=restored)
    return restored


def _merge_hints(preserve: list[str], hints: list[str]) -> list[str]:
    out = list(preserve)
    for h in hints:
        if h not in out:
            out.append(h)
    return out[-12:]


__all__ = ["add_hints", "demote"]
