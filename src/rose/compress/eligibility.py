"""When a lesson has earned a compression attempt (spec section 5): an active apex, below `max_level`, with at least
`min_successes` recalls attributed as used on work that succeeded, past its cooldown, and with recorded episodes to
validate against. A lesson with no episodes is left alone: compressing with no way to check is worse than not.
"At least min_successes" counts successes since the lesson's last attempt, so every attempt (accepted or not)
is earned by new usage, and a rejected lesson is not asked again until it has new evidence; each candidate in a row
that came back too long doubles the successes the next attempt needs.

Two conditions beyond the spec's list, both structural: the apex is judged among *compression* parents (a merge
parent generalises a lesson, it does not compress it, so it does not freeze it), and a lesson with a descent in
progress waits until the descent resolves, so a compression never races a repair of its own over-cut.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from rose.compress import episodes as corpus
from rose.model import Episode, Node, Status

MAX_DOUBLINGS = 4   # after 4 rejections in a row an attempt needs 16x min_successes new successful uses

if TYPE_CHECKING:
    from rose.compress.graph import Graph
    from rose.config import CompressionSettings


@dataclass
class Eligibility:
    ok: bool
    reason: str
    validation: list[Episode] = field(default_factory=list)
    heldout: list[Episode] = field(default_factory=list)


def seconds_since(stamp: str, now: datetime | None = None) -> float:
    if not stamp:
        return float("inf")
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return float("inf")
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return ((now or datetime.now(timezone.utc)) - when).total_seconds()


def successes_since_attempt(node: Node) -> int:
    """Successful uses since the last compression or merge attempt: every attempt is earned by new usage, so a
    rejected candidate is not retried until the lesson has been used successfully again."""
    return node.stats.successes - node.last_attempt_successes


def successes_needed(node: Node, cs: CompressionSettings) -> int:
    """`min_successes`, doubled for each attempt in a row whose candidate came back no smaller than the ratio allows
    (at most MAX_DOUBLINGS times): a lesson already as short as its evidence allows stops costing calls, and an
    accepted compression starts afresh. Rejections that teach something (a failed replay leaves a preserve hint)
    do not back off."""
    return cs.min_successes * 2 ** min(node.rejections, MAX_DOUBLINGS)


def check(graph: Graph, node: Node, cs: CompressionSettings, now: datetime | None = None) -> Eligibility:
    if not cs.enabled:
        return Eligibility(False, "compression.enabled is false")
    if node.status is not Status.ACTIVE:
        return Eligibility(False, f"status {node.status.value}")
    if node.level >= cs.max_level:
        return Eligibility(False, f"already at max_level {cs.max_level}")
    if not graph.is_compression_apex(node):
        return Eligibility(False, "not an apex: a compression of it exists")
    earned, needed = successes_since_attempt(node), successes_needed(node, cs)
    if earned < needed:
        return Eligibility(False, f"{earned} of {needed} successful uses"
                           + (" since the last attempt" if node.last_attempt or node.last_attempt_successes else ""))
    if node.trials:
        return Eligibility(False, "a descent is in progress")
    waited = seconds_since(node.last_attempt, now)
    if waited < cs.cooldown_s:
        return Eligibility(False, f"cooldown: {waited:.0f}s of {cs.cooldown_s:.0f}s")
    validation, heldout = corpus.split(corpus.regression_set(graph, [node]), cs.heldout_fraction)
    if not validation:
        why = "no recorded episodes to validate against" if not heldout else \
            "only held-out episodes so far (they never accept a compression)"
        return Eligibility(False, why, [], heldout)
    from rose.compress import payback   # the attempt's calls against what the shorter form would save
    from rose.tokens import estimate

    pays = payback.judge(estimate(node.body), min(cs.replay_k, len(validation)), cs.max_token_ratio,
                         payback.serve_rate([s.episodes_dir for s in graph.layers.stores()], node.id),
                         heldout=min(cs.replay_k, len(heldout)), odds=payback.odds(graph, node))
    if not pays.worth:
        return Eligibility(False, pays.reason, [], heldout)
    return Eligibility(True, "eligible", validation, heldout)
