"""Teaching by hand: turn a user's text into a stored lesson (title, gist and family derived when not given)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from rose.model import MemoryType, Node, Origin, Outcome, Scope
from rose.store import Layers, Store, family_slug

TITLE_MAX_CHARS = 80
GIST_MAX_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(",;:-") + "…"


def derive_title(text: str) -> str:
    first = next((line.strip(" #*-\t") for line in text.splitlines() if line.strip(" #*-\t")), "")
    return _clip(first, TITLE_MAX_CHARS) or "Untitled lesson"


def derive_gist(text: str) -> str:
    flat = " ".join(text.split())
    first_sentence = _SENTENCE_END.split(flat, 1)[0]
    return _clip(first_sentence, GIST_MAX_CHARS)


@dataclass
class Added:
    node: Node
    store: Store


def add_lesson(layers: Layers, text: str, *, title: str = "", family: str = "", tags: list[str] | None = None,
               scope: Scope = Scope.PROJECT, gist: str = "", origin: Origin = Origin.MANUAL,
               memory_type: MemoryType = MemoryType.LESSON, importance: float = 0.6,
               confidence: float = 0.5, evidence: list[str] | None = None,
               outcome: Outcome = Outcome.UNKNOWN) -> Added:
    text = text.strip("\n")
    if not text.strip():
        raise ValueError("a lesson needs some text")
    tags = [t.strip().lower() for t in (tags or []) if t.strip()]
    store = layers.writable(scope)
    node = Node(
        id=store.new_id(taken=layers.id_taken),
        family=family_slug(family or (tags[0] if tags else "general")),
        title=title.strip() or derive_title(text),
        body=text,
        gist=gist.strip() or derive_gist(text),
        origin=origin, memory_type=memory_type, scope=scope, tags=tags, importance=importance,
        confidence=confidence, evidence=list(evidence or []), outcome=outcome,
    )
    store.save(node)
    from rose.store.events import EventKind

    store.event(EventKind.ADD, id=node.id, family=node.family, origin=origin.value, scope=scope.value)
    return Added(node=node, store=store)
