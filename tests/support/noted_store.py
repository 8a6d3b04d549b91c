"""A small project store for the retrieval-rule tests: the lessons a test is about, among routine filler notes, so
the store is large enough for its word statistics to mean something and the rule's lessons stand out."""
from __future__ import annotations

from rose.model import Node
from rose.store import Layers

Lesson = tuple[str, str, str, list[str]]   # id, title, body, tags


def fill(layers: Layers, lessons: list[Lesson], filler: int = 40) -> None:
    nodes = [Node(id=i, family="notes", title=t, body=b, gist=b[:60], tags=tags) for i, t, b, tags in lessons]
    nodes += [Node(id=f"n_fill{i:04d}", family="notes", title=f"Note {i} on the service",
                   body=f"Routine note {i} about the service configuration.", gist="routine note", tags=["notes"])
              for i in range(filler)]
    layers.project.save_many(nodes)
