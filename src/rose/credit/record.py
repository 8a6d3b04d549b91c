"""The learner's side of credit: a session's arms and outcome become samples; a harmful lesson is withdrawn.

    note = record_session(layers, owner, session_id, episode, settings)

Each lesson the session put in an arm (rose.credit.withhold) gets one sample of that arm when the episode ended in
a success or a failure (an unknown or partial outcome is no sample). The sample is a usage record of counters
(`credit:<arm>:n`, `credit:<arm>:pass`) appended to the log of the store that holds the lesson, with a rid derived
from the episode and the lesson: a learner job killed and run again counts each sample once. A withheld lesson the
session served after all (withholding switched off mid-session) is no clean sample and is skipped.

After the sample the verdict is read again (rose.credit.decide). A lesson found harmful stops being served: a
compressed form is demoted (the level below is served again and measured afresh), anything else is archived with
its reason; either way its importance drops to HARMFUL_IMPORTANCE. The user is told once on the next notice line
(rose.credit.announce.take_announcements) and in `rose status` and `rose credit`.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from rose.credit.decide import ARMS, WITHHELD, Judged, Verdict, advance
from rose.credit.withhold import SUSPECT, counter, credit_of, rules_of, suspect_of
from rose.model import EpisodeOutcome, Origin, Status, valid_node_id
from rose.store.events import EventKind
from rose.store.sessions import read_session

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.model import Episode, Node
    from rose.store import Layers, Store

HARMFUL_IMPORTANCE = 0.1      # a withdrawn lesson's importance: the floor retention reads as "evidence against it"
WITHDRAWN_PREFIX = "withdrawn by credit"


def arms_of(owner: Store, session_id: str) -> dict[str, str]:
    """The session's arms that are clean samples: withheld ones never served in it, served ones really shown."""
    state = read_session(owner, session_id)
    shown = set(state.served_ever)
    out = {}
    for node_id, arm in state.arms.items():
        if not valid_node_id(node_id) or arm not in ARMS:
            continue
        if (arm == WITHHELD) == (node_id in shown):
            continue   # withheld but shown after all, or put in the served arm but never shown: not a clean sample
        out[node_id] = arm
    return out


def sample_rid(episode_id: str, node_id: str) -> str:
    return "c" + hashlib.sha256(f"credit|{episode_id}|{node_id}".encode("utf-8", "surrogatepass")).hexdigest()[:19]


def record_session(layers: Layers, owner: Store, session_id: str, episode: Episode, settings: Settings) -> str:
    """Samples for every clean arm of the session; returns a one-line note for the learner's log ("" if none)."""
    from rose.errors import CorruptFile, NodeNotFound

    arms = arms_of(owner, session_id)
    if not arms:
        return ""
    if episode.outcome not in (EpisodeOutcome.SUCCESS, EpisodeOutcome.FAILURE):
        return f"credit: {len(arms)} lesson(s) in an arm, outcome {episode.outcome.value}: no sample"
    success = episode.outcome is EpisodeOutcome.SUCCESS
    rules = rules_of(settings)
    counted, withdrawn = 0, []
    for node_id, arm in sorted(arms.items()):
        try:
            store, node = layers.locate(node_id)
        except (NodeNotFound, CorruptFile):
            continue   # deleted since: nothing to credit
        if store.log_counts(node_id, {counter(arm, "n"): 1, counter(arm, "pass"): int(success)},
                            rid=sample_rid(episode.id, node_id)):
            counted += 1
        state = store.index.usage_state(node_id)
        before = suspect_of(state)
        judged, after = advance(credit_of(state), rules, before)
        if after != before:   # a suspicion starts (withheld more often from now on) or is cleared
            store.log_counts(node_id, {}, registers={SUSPECT: -1 if after is None else after},
                             rid=sample_rid(episode.id, node_id + "|suspect"))
        if judged.verdict is Verdict.HARMFUL and settings.credit.withdraw_harmful \
                and node.status in (Status.ACTIVE, Status.DISPUTED):
            withdraw(layers, store, owner, node, judged)
            withdrawn.append(node_id)
    note = f"credit: {counted} sample(s) ({'success' if success else 'failure'}; " \
           f"{sum(a == WITHHELD for a in arms.values())} withheld)"
    if withdrawn:
        note += f"; withdrew {', '.join(withdrawn)} as harmful"
    return note


def withdraw(layers: Layers, store: Store, owner: Store, node: Node, judged: Judged) -> None:
    """Stop serving a harmful lesson, say why in its file, and queue the one-time notice."""
    from rose.credit.report import announce

    reason = f"{WITHDRAWN_PREFIX}: {judged.reason}"

    from rose.retention.rules import effective_importance

    def lower(n: Node) -> None:   # the evidence-moved importance (the minted one stays as the file says)
        n.learned_importance = min(effective_importance(n.importance, n.learned_importance), HARMFUL_IMPORTANCE)
        n.extra["archived_because"] = reason
        if n.origin is not Origin.COMPRESSION:
            n.status = Status.ARCHIVED
    store.update(node.id, lower)
    restored: list[str] = []
    if node.origin is Origin.COMPRESSION:
        from rose.compress.demote import demote
        from rose.compress.graph import Graph

        restored = demote(Graph(layers), node.id, reason)
    store.event(EventKind.UPDATE, stage="credit", action="withdrawn", node=node.id, verdict=judged.verdict.value,
                reason=judged.reason, restored=restored)
    announce(owner, node.id, node.title, judged.reason)



