"""The replay corpus of a lesson: its regression set over the whole subtree, split into episodes that may accept a
compression (validation) and episodes that never do (held-out), and the sample a replay runs on.

The split is a pure function of the episode's session, so an episode is held out for every lesson and for ever:
it can never have helped accept the compression it later measures. Span evidence is not recorded from held-out
episodes either (rose.compress.observe), so the compressor is not told what they needed.
"""
from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING

from rose.errors import CorruptFile, NodeNotFound
from rose.model import Episode, EpisodeOutcome

if TYPE_CHECKING:
    from rose.compress.graph import Graph
    from rose.model import Node

_SCALE = 2 ** 32


def _unit(text: str) -> float:
    """A stable number in [0, 1) for a text (not Python's salted hash)."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / _SCALE


def is_heldout(episode: Episode, fraction: float) -> bool:
    return _unit("heldout:" + (episode.session or episode.id)) < fraction


def load(graph: Graph, episode_ids: list[str]) -> list[Episode]:
    """Episodes by id from any layer; ids whose file is gone are skipped."""
    out: list[Episode] = []
    for episode_id in dict.fromkeys(episode_ids):
        for store in graph.layers.stores():
            try:
                out.append(store.get_episode(episode_id))
                break
            except (NodeNotFound, CorruptFile):  # not in this store (or unreadable, which doctor shows): try the next
                continue
    return out


def regression_set(graph: Graph, nodes: list[Node]) -> list[Episode]:
    """Accepted work (successful episodes) recorded on any of these lessons' subtrees, oldest first."""
    ids: list[str] = []
    for node in nodes:
        for n in graph.subtree(node):
            ids += n.covers_tasks
    found = [e for e in load(graph, ids) if e.outcome is EpisodeOutcome.SUCCESS]
    return sorted(found, key=lambda e: (e.created, e.session, e.id))


def split(episodes: list[Episode], fraction: float) -> tuple[list[Episode], list[Episode]]:
    """(validation, held-out)."""
    validation = [e for e in episodes if not is_heldout(e, fraction)]
    heldout = [e for e in episodes if is_heldout(e, fraction)]
    return validation, heldout


def sample(episodes: list[Episode], k: int, salt: str) -> list[Episode]:
    """k episodes (all of them when there are no more), chosen reproducibly for the same corpus and salt."""
    if len(episodes) <= k:
        return list(episodes)
    rng = random.Random(_unit(salt + "|" + "|".join(sorted(e.session or e.id for e in episodes))))
    chosen = rng.sample(range(len(episodes)), k)
    return [episodes[i] for i in sorted(chosen)]
