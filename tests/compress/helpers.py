"""Small helpers shared by the compression tests."""
from __future__ import annotations

from rose.compress.graph import base_body
from rose.model import Node, Status
from rose.sim import Simulation


def task(sim: Simulation, family: str, *keys: str, kind: str = "family"):
    fam = sim.world.family(family)
    return sim.world.task(family, [fam.core.key, *keys], 1000 + sim.n, kind)


def key(sim: Simulation, family: str, i: int) -> str:
    return sim.world.family(family).facts[i].key


def apex(sim: Simulation, family: str) -> Node:
    """The one servable lesson of a family."""
    [node] = [n for n in sim.nodes() if n.family == family and n.status in (Status.ACTIVE, Status.DISPUTED)
              and n.origin.value != "merge"]
    return node


def lineage(sim: Simulation, family: str) -> list[Node]:
    return sorted([n for n in sim.nodes() if n.family == family and n.origin.value != "merge"],
                  key=lambda n: n.level)


def dropped_fact(sim: Simulation, node: Node) -> str:
    """A fact key the node's manifest declares dropped (its text is absent from the node's own body)."""
    for c in node.dropped:
        k = sim.world.keys_in(c.claim)
        if k and k[0] not in base_body(node.body):
            return k[0]
    raise AssertionError("no fact was dropped")


def run(sim: Simulation, *tasks):
    return [sim.run(t) for t in tasks]
