"""Repair: a dropped claim that keeps rescuing the same lesson proves the compression cut too deep there, so it is
folded back into the lesson's body for good and leaves the manifest (spec section 5, "the graph heals where it was
over-cut"). The holder below keeps its own text; only the short form changes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rose.compress.graph import base_body, with_trial_section
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.compress.graph import Located
    from rose.model import Node


def repair(found: Located, after_rescues: int) -> list[str]:
    """Fold every claim with at least `after_rescues` rescues into the body. Returns the claims folded."""
    if not any(c.rescues >= after_rescues for c in found.node.dropped):
        return []
    folded: list[str] = []

    def change(n: Node) -> None:
        base = base_body(n.body)
        section = n.body[len(base):]
        keep = []
        for claim in n.dropped:
            if claim.rescues >= after_rescues:
                base = base.rstrip("\n") + "\n- " + claim.claim
                folded.append(claim.claim)
            else:
                keep.append(claim)
        n.dropped = keep
        n.body = base + section if section else with_trial_section(base, [])
    found.store.update(found.node.id, change)
    if folded:
        found.store.event(EventKind.UPDATE, stage="repair", node=found.node.id, folded=folded)
    return folded
