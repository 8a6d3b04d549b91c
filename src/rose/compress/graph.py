"""The structure compression and descent walk: lookups across the layered stores, subtrees, the served form of a
lesson, and the body section that carries detail under trial.

Everything here is structure (ids, edges, text layout), never a judgement.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rose.model import SERVED_STATUSES, Claim, Node, Origin, Status

if TYPE_CHECKING:
    from rose.store import Layers, Store

# Detail under trial is carried in the lesson's own body, below this line, so recall serves it with the lesson
# without knowing about descent; base_body() strips it again for everything that must see the lesson alone.
TRIAL_HEADER = "Detail under trial (attached by rose after this lesson failed; kept if it helps):"
# What recall prints above sticky patches (rose.recall.pack.render_item); replays serve the same form.
PATCH_HEADER = "Detail that rescued this lesson before:"
LIVE = (Status.ACTIVE, Status.DISPUTED, Status.SUPERSEDED)  # statuses whose edges still carry the lineage
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def base_body(body: str) -> str:
    """The lesson's own text, without the section of detail under trial."""
    cut = body.find("\n\n" + TRIAL_HEADER)
    if cut < 0:
        cut = 0 if body.startswith(TRIAL_HEADER) else -1
    return body if cut < 0 else body[:cut]


def with_trial_section(base: str, attached: list[str]) -> str:
    """The body to store: the lesson's own text, then every attached piece of detail under TRIAL_HEADER."""
    if not attached:
        return base
    items = []
    for text in attached:
        lines = text.strip().splitlines() or [""]
        items.append("- " + lines[0] + "".join("\n  " + line for line in lines[1:]))
    return base.rstrip("\n") + "\n\n" + TRIAL_HEADER + "\n" + "\n".join(items)


def sentences(text: str) -> list[str]:
    """Sentences of a lesson body, one per line item and sentence end: the units a span observation credits."""
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or line.startswith("#"):
            continue
        out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def sticky(node: Node) -> list[Claim]:
    """Dropped claims that rescued this lesson before: recall re-attaches them (the index's `patches`)."""
    return [c for c in node.dropped if c.rescues > 0]


def served_text(node: Node, body: str | None = None) -> str:
    """What recall serves for this lesson (its body and sticky patches): the form replays must validate."""
    text = base_body(node.body if body is None else body)
    patches = sticky(node)
    if patches:
        text = text.rstrip("\n") + "\n" + PATCH_HEADER + "\n" + "\n".join(f"- {c.claim}" for c in patches)
    return text


@dataclass
class Located:
    store: Store
    node: Node


class Graph:
    """Read access to the DAG across the project and global stores. Reads are fresh (files are the truth)."""

    def __init__(self, layers: Layers):
        self.layers = layers

    def find(self, node_id: str) -> Located | None:
        for store in self.layers.stores():
            if store.has(node_id):
                try:
                    return Located(store, store.get(node_id))
                except Exception:  # noqa: BLE001 - deleted or corrupt since indexed: treated as absent
                    return None
        return None

    def node(self, node_id: str) -> Node | None:
        found = self.find(node_id)
        return found.node if found else None

    def children(self, node: Node) -> list[Node]:
        return [c for c in (self.node(i) for i in node.derived_from) if c is not None]

    def subtree(self, node: Node) -> list[Node]:
        """The node and everything below it (down `derived_from`), each once, nearest first."""
        out, seen, frontier = [node], {node.id}, [node]
        while frontier:
            nxt = []
            for n in frontier:
                for child in self.children(n):
                    if child.id not in seen:
                        seen.add(child.id)
                        out.append(child)
                        nxt.append(child)
            frontier = nxt
        return out

    def level0(self, node: Node) -> list[Node]:
        """The level-0 lessons under a node (itself if it is one): the detail that is never deleted."""
        return [n for n in self.subtree(node) if n.level == 0 or not n.derived_from]

    def compression_parents(self, node: Node) -> list[Node]:
        """Live parents that are compressions of this node (a merge parent is a generalisation, not one)."""
        out = []
        for pid in node.parents:
            parent = self.node(pid)
            if parent is not None and parent.origin is Origin.COMPRESSION and parent.status in LIVE:
                out.append(parent)
        return out

    def is_compression_apex(self, node: Node) -> bool:
        return not self.compression_parents(node)

    def servable_form(self, node_id: str, exclude: set[str] | frozenset[str] = frozenset()) -> list[Node]:
        """What recall serves for a lesson now: itself if servable, else its nearest servable ancestors (up the
        parents). Nodes in `exclude` are what a candidate stands in for: never returned, never climbed past."""
        frontier, seen, found = [node_id], {node_id}, []
        while frontier and not found:
            nxt = []
            for nid in frontier:
                node = self.node(nid)
                if node is None or node.status is Status.ARCHIVED or nid in exclude:
                    continue
                if node.status in SERVED_STATUSES:
                    found.append(node)
                    continue
                nxt += [p for p in node.parents if p not in seen]
                seen.update(node.parents)
            frontier = nxt
        return found

    def companions(self, used: list[str], exclude: set[str]) -> list[Node]:
        """The other lessons an episode used, in the form recall serves them now: a replay serves them beside the
        candidate, so a lesson is judged on its own part of work that needed several. `exclude` holds what the
        candidate stands in for (the node it compresses, or the children a merge parent is served with): a form
        below it leads up to it and is left out; a form that also leads elsewhere (a merge parent) is kept."""
        out: dict[str, Node] = {}
        for node_id in used:
            for form in self.servable_form(node_id, exclude):
                out.setdefault(form.id, form)
        return list(out.values())
