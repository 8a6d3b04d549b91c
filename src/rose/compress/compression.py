"""One compression attempt (spec section 5): ask for a shorter form that declares what it dropped, check it in
code, replay it on a sample of the subtree's regression set, and on success add it as a new level above the old.

    outcome = attempt(graph, found, judge, settings, eligibility)
    outcome.accepted    the new node (None when rejected)
    outcome.reason      why it was rejected, or what was accepted

The compressor is given the sentences observed doing work (rose.compress.observe, judged on the accepted work of
the validation episodes); where that evidence is absent it is told so and compresses conservatively.

Checks in code, in order: the candidate is not empty; it declares its losses (a candidate that shrank below
`under_report_ratio` of the original while declaring nothing is under-reported); it is at most `max_token_ratio`
of the original's tokens. Then replay: every sampled episode must pass, and a failing one becomes a preserve hint
for the next attempt. Accepted: the new node is `level + 1`, origin compression, `derived_from=[old]`, and carries
the old manifest plus its own (deltas are inherited); the old node gains it as a parent and becomes superseded,
never deleted. Held-out episodes are replayed after acceptance (rose.compress.heldout).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rose.compress import episodes as corpus
from rose.compress import heldout, payback
from rose.compress.graph import base_body, served_text
from rose.compress.observe import observe_spans
from rose.compress.replay import Replay, add_hints, replay
from rose.model import Claim, Node, Origin, Status, now_iso
from rose.store.events import EventKind
from rose.tokens import estimate

if TYPE_CHECKING:
    from rose.compress.eligibility import Eligibility
    from rose.compress.graph import Graph, Located
    from rose.config import Settings
    from rose.judge import Judge


@dataclass
class Outcome:
    node: str                                  # the lesson that was compressed (or not)
    accepted: Node | None
    reason: str
    replays: list[Replay] = field(default_factory=list)
    heldout: heldout.HeldOut | None = None
    under_reported: bool = False

    def describe(self) -> str:
        if self.accepted is None:
            return f"compression of {self.node} rejected: {self.reason}"
        text = f"compressed {self.node} -> {self.accepted.id} L{self.accepted.level} ({self.reason})"
        if self.heldout is not None:
            text += ", " + self.heldout.describe()
        return text


def attempt(graph: Graph, found: Located, judge: Judge, settings: Settings, elig: Eligibility) -> Outcome:
    from rose.judge import JudgeFailure, Stage, calls

    cs = settings.compression
    store, node = found.store, found.node
    stamp = now_iso()
    spans = observe_spans(judge, node, elig.validation)   # None: no evidence, the compressor is told so

    def start(n: Node) -> None:
        n.last_attempt, n.last_attempt_successes = stamp, n.stats.successes
        n.spans = spans if spans is not None else n.spans
    node = store.update(node.id, start)
    original = base_body(node.body)
    below = [n.id for n in graph.subtree(node)[1:]]
    request = calls.CompressRequest(lesson=calls.Lesson(node.id, node.title, original), preserve=list(node.preserve),
                                    working_spans=spans, target_ratio=cs.max_token_ratio, holders=below)
    try:
        answer = judge.ask(calls.COMPRESS, request, stage=Stage.COMPRESSION)
    except JudgeFailure as failure:
        from rose.judge.errors import OUTAGE

        # an answer out of schema was paid for; a backend that is down says nothing about this lesson's odds
        return _rejected(store, node, f"compress did not answer ({failure.kind.value})",
                         counted=failure.kind not in OUTAGE)

    before, after = estimate(original), estimate(answer.body)
    claims = [Claim(c.claim, c.kind, holder=c.holder) for c in answer.dropped]
    if not answer.body.strip():
        return _rejected(store, node, "the candidate is empty", backoff=True)
    if not claims and after < cs.under_report_ratio * before:
        return _rejected(store, node, f"under-reported: {after}/{before} tokens with no dropped claim declared",
                         under_reported=True)
    if after > cs.max_token_ratio * before:
        return _rejected(store, node, f"not small enough: {after}/{before} tokens > {cs.max_token_ratio:.0%}",
                         backoff=True)

    inherited = [replace(c) for c in node.dropped]   # deltas are inherited, holders and counts unchanged
    manifest = list(inherited)
    for claim in claims:
        if all(claim.claim != c.claim for c in manifest):
            manifest.append(claim)
    new = Node(id=store.new_id(taken=graph.layers.id_taken), family=node.family, title=answer.title or node.title,
               body=answer.body, gist=answer.gist or node.gist, level=node.level + 1, origin=Origin.COMPRESSION,
               derived_from=[node.id], dropped=manifest, memory_type=node.memory_type, scope=node.scope,
               importance=node.importance, confidence=node.confidence, tags=list(node.tags),
               outcome=node.outcome, last_attempt=stamp)

    sample = corpus.sample(elig.validation, cs.replay_k, salt=node.id + "|" + str(len(node.preserve)))
    replays = replay(judge, new.title, served_text(new), sample, graph, {node.id})
    failed = [r for r in replays if not r.passed]
    if failed:
        store.update(node.id, lambda n: setattr(n, "preserve", add_hints(n.preserve, failed)))
        payback.record_failure(store, node)   # paid for in full, saved nothing: the odds count it
        store.event(EventKind.UPDATE, stage="compression", action="rejected", node=node.id,
                    reason="replay failed", failed=[r.episode.id for r in failed])
        return Outcome(node.id, None, f"{len(failed)} of {len(replays)} replays failed", replays)

    store.save(new)

    def supersede(old: Node) -> None:
        if new.id not in old.parents:
            old.parents.append(new.id)
        old.status = Status.SUPERSEDED
        old.rejections = 0
    store.update(node.id, supersede)
    reason = (f"{after}/{before} tokens ({after / max(before, 1):.0%}), {len(claims)} claims dropped, "
              f"{len(inherited)} inherited, {len(replays)}/{len(replays)} replays passed")
    store.event(EventKind.UPDATE, stage="compression", action="accepted", node=node.id, new=new.id,
                level=new.level, tokens=[before, after], dropped=len(claims), replays=len(replays))
    held = heldout.evaluate(graph, store, new, judge, settings, elig.heldout)
    accepted = store.get(new.id)
    return Outcome(node.id, accepted, reason, replays, held)


def _rejected(store, node: Node, reason: str, under_reported: bool = False, backoff: bool = False,
              counted: bool = True) -> Outcome:
    """`backoff`: the rejection taught nothing new (no hint, no declared loss), so the next attempt waits longer.
    `counted`: a failed attempt in the payback odds (rose.compress.payback.odds); every rejection is one but an
    outage's."""
    if backoff:
        store.update(node.id, lambda n: setattr(n, "rejections", n.rejections + 1))
    if counted:
        payback.record_failure(store, node)
    store.event(EventKind.UPDATE, stage="compression", action="rejected", node=node.id, reason=reason)
    return Outcome(node.id, None, reason, under_reported=under_reported)
