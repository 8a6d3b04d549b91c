"""A project store and a global one past the bounds of `rose tree` and `rose list`, with everything that can make
a bounded view differ from the whole one cut short: several families, lineage (compressions, a lesson under two
parents, links across families and stores, cycles, a parent that is gone, one-sided links, repeated children),
levels that tie with linked apexes, cold records, every memory type, and importances that tie after rounding."""
from __future__ import annotations

from rose.model import MemoryType, Scope
from rose.store import Layers
from tests.support.gen_store import make_nodes

PROJECT_SIZE = 700
GLOBAL_SIZE = 260
LOOP_FAMILY = "aa-loop"   # sorts first, yet every tree of it hangs off a cycle: drawn after every other family


def _link(parent, *children) -> None:
    parent.derived_from = [*parent.derived_from, *(c.id for c in children)]
    for child in children:
        child.parents = [*child.parents, parent.id]


def build(layers: Layers) -> dict[str, list[str]]:
    """Fill both stores; returns the ids of some records by role, for the tests to check against."""
    nodes = make_nodes(PROJECT_SIZE)
    glob = make_nodes(GLOBAL_SIZE, seed=11)
    for i, node in enumerate(glob):
        node.id, node.scope = f"n_g{i:05x}", Scope.GLOBAL
    types = [MemoryType.LESSON, MemoryType.LESSON, MemoryType.ORIENTATION, MemoryType.EXPERIENCE]
    for i, node in enumerate(nodes + glob):
        node.memory_type = types[i % len(types)]
        if i % 7 == 0:   # equal once rounded to 3 places (told apart by utility, then id), around list's 100th
            node.importance = 0.9 + (i % 5 - 2) * 0.0002
    for i in range(0, 160, 4):           # compressions: a parent a level above two or three children
        nodes[i].level = 1 + i % 3
        _link(nodes[i], *nodes[i + 1:i + 2 + (i // 4) % 3])
    _link(nodes[200], nodes[203])         # one lesson under two parents
    _link(nodes[201], nodes[203])
    _link(nodes[210], nodes[213], nodes[219])   # across families (families go by i % 8)
    _link(nodes[220], nodes[221])         # a cycle of two, and one of three
    _link(nodes[221], nodes[220])
    _link(nodes[230], nodes[231])
    _link(nodes[231], nodes[232])
    _link(nodes[232], nodes[230])
    for k in (240, 241, 242):             # a family that is only a cycle
        nodes[k].family = LOOP_FAMILY
    _link(nodes[240], nodes[241])
    _link(nodes[241], nodes[242])
    _link(nodes[242], nodes[240])
    nodes[250].parents = ["n_gone01"]     # its parent was deleted: an apex still
    nodes[260].derived_from = [nodes[261].id]   # a one-sided link down: 261 is an apex and drawn under 260
    nodes[270].parents = [nodes[271].id]  # a one-sided link up: 270 is no apex, 271 has no lineage of its own
    nodes[270].level = 4                  # ... and would be its family's first tree if it were one
    nodes[280].derived_from = [nodes[281].id, nodes[281].id]   # a child named twice
    nodes[281].parents = [nodes[280].id]
    nodes[290].level = 3                  # a lone lesson at the level of the highest linked apexes
    nodes[261].level = nodes[271].level = 4   # named, no lineage of their own, and first of their families by level
    _link(glob[0], nodes[300], glob[1])   # a global lesson over a project one
    _link(glob[2], glob[3])
    layers.project.save_many(nodes)
    layers.writable(Scope.GLOBAL).save_many(glob)
    cold = [n.id for n in nodes[400:560]] + [nodes[4].id, nodes[5].id] + [n.id for n in glob[100:230]]
    layers.project.archive([i for i in cold if not i.startswith("n_g")], "test: cold")
    layers.writable(Scope.GLOBAL).archive([i for i in cold if i.startswith("n_g")], "test: cold")
    return {"cold": cold, "cycle": [nodes[k].id for k in (220, 221, 230, 231, 232, 240, 241, 242)]}
