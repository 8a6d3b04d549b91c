"""Stage 6, descent: when a served compressed lesson fails, recover the detail it dropped.

Descent is a ranking problem over the lesson's delta manifest (inherited claims included), not a search of the
graph (the score is in rose.compress.rank).

How a descent crosses sessions. A failure is known only when a session ends, and the agent that failed is gone,
so the chosen candidate cannot be retried in place. It is attached to the lesson instead, as *detail under trial*
(a section of the lesson's body, so recall serves it with the lesson and nothing else needs to know), and the
episodes that next use the lesson decide it. rose.compress.observe asks whether the attached detail itself was
used:

    used, work succeeded    a rescue: each claim tried is credited (rescues, attempts) and becomes a sticky patch;
                            the trial closes
    used, work failed       it did not suffice: attempts counted; what was used stays attached (another missing
                            piece may be what failed) and the next candidate joins it; with none left the lesson
                            escalates to its level-0 text; if that fails too, the failure is recorded as a
                            knowledge gap (not a compression bug) and the trial closes
    not used                says nothing about the candidate (the work did not need it): the trial waits

Escalation that *succeeds* means the manifest did not name what mattered: a compression cut too deep without
saying so, and any form above level 0 may lack it, so they are all demoted, level 0 is served again, and what the
rescued work used becomes a preserve hint for the next compression. A failure for which the judge scores
every candidate below MATCH_FLOOR escalates at once (nothing dropped explains it); if level 0 is already
attached and the work still fails, it is a knowledge gap.

Strategies (`recall.strategy`): delta-patch attaches the best claim; delta-jump attaches the whole node holding it
(costlier, robust to a badly stated claim; the claim is credited); stepwise ignores the manifest and walks the
children nearest first (the ablation baseline: a rescue there demotes the levels above the rescuer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rose.compress.graph import base_body, with_trial_section
from rose.compress.rank import Ranked, judge_usefulness, rank
from rose.config import DescentStrategy
from rose.model import Claim, Node, Trial
from rose.store.events import EventKind
from rose.tokens import estimate

if TYPE_CHECKING:
    from rose.compress.graph import Graph, Located
    from rose.config import DescentSettings, Settings
    from rose.judge import Judge
    from rose.model import Episode

MATCH_FLOOR = 0.3        # usefulness below this: the judge says the claim's absence cannot explain the failure
MAX_CANDIDATES = 5       # candidates one descent tries before escalating to level 0
MAX_OPEN_TRIALS = 3      # per lesson: what waits for a verdict is served, so it is bounded; the idlest gives way
MAX_GAPS = 20            # knowledge gaps remembered per lesson (newest kept)
LEVEL0_PATIENCE = 5      # uses of the lesson a level-0 attachment (costly) may go unused before it is detached
NOTE_CHARS = 60


# -- what a trial attaches ------------------------------------------------------------------------------------

def _item(kind: str, item: list[str]) -> tuple[list[str], list[str]]:
    """(attached, claims) of a queue item: [claim] for claim trials, [node, *claims] for node trials."""
    if kind == "claim":
        return list(item), list(item)
    return item[:1], list(item[1:])


def node_texts(graph: Graph, ids: set[str]) -> dict[str, tuple[int, str]]:
    out = {}
    for node_id in ids:
        n = graph.node(node_id)
        if n is not None:
            out[node_id] = (n.level, base_body(n.body))
    return out


def referenced(trials: list[Trial]) -> set[str]:
    ids: set[str] = set()
    for t in trials:
        if t.kind != "claim":
            ids.update(t.attached)
            ids.update(q[0] for q in t.queue if q)
    return ids


def attached_texts(trial: Trial, texts: dict[str, tuple[int, str]]) -> list[str]:
    if trial.kind == "claim":
        return list(trial.attached)
    out = []
    for node_id in trial.attached:
        level, body = texts.get(node_id, (-1, ""))
        out.append(f"From {node_id} (level {level}):\n{body}" if body else f"From {node_id}")
    return out


def refresh_body(node: Node, texts: dict[str, tuple[int, str]]) -> None:
    node.body = with_trial_section(base_body(node.body),
                                   [t for trial in node.trials for t in attached_texts(trial, texts)])


def short(text: str) -> str:
    text = " ".join(text.split()).replace("; ", ", ")
    return text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 1] + "\u2026"


# -- opening a descent ---------------------------------------------------------------------------------------

@dataclass
class Effects:
    """What a change to one node implies for others, applied after its own update (never under its lock)."""

    notes: list[str] = field(default_factory=list)
    credit: list[str] = field(default_factory=list)                      # holders whose detail rescued
    demote: list[tuple[str, str, str, list[str]]] = field(default_factory=list)  # (apex, rescuer, why, hints)
    rescues: int = 0
    events: list[dict] = field(default_factory=list)


def open_descent(graph: Graph, found: Located, episode: Episode, judge: Judge | None, settings: Settings) -> Effects:
    """The lesson was used on work that failed and no detail under trial was used: start a descent (or record a
    knowledge gap when there is nothing left below)."""
    node = found.node
    fx = Effects()
    strategy = settings.recall.strategy
    level0 = [n.id for n in graph.level0(node) if n.id != node.id]
    on_trial = {c for t in node.trials for c in (t.claims or t.attached)}
    has_level0 = any(t.kind == "level0" for t in node.trials)
    trial: Trial | None = None
    if not node.dropped and not node.derived_from:
        return fx   # a level-0 lesson has nothing below it; whether the failure is a gap is not established here
    if strategy is DescentStrategy.STEPWISE:
        queue = [[n.id] for n in graph.subtree(node)[1:] if n.id not in on_trial]
        if not queue:
            return _gap(found, episode, fx, "every level below was tried")
        trial = Trial(episode.id, strategy.value, "node", queue[0][:1], [], [q for q in queue[1:MAX_CANDIDATES]])
        fx.notes.append(f"descent on {node.id}: stepwise, attached {queue[0][0]}")
    else:
        pool = [c for c in node.dropped if c.rescues == 0 and c.claim not in on_trial]
        use = judge_usefulness(judge, node, episode, pool)
        ranked = rank(pool, use, settings.descent)
        matched = [r for r in ranked if use is None or (r.usefulness or 0.0) >= MATCH_FLOOR][:MAX_CANDIDATES]
        if matched:
            queue = _queue(graph, strategy, matched, settings.descent)
            kind = "claim" if strategy is DescentStrategy.DELTA_PATCH else "node"
            attached, claims = _item(kind, queue[0])
            trial = Trial(episode.id, strategy.value, kind, attached, claims, queue[1:])
            how = "judge + prior - cost" if use is not None else "no judgement: prior - cost"
            fx.notes.append(f"descent on {node.id} ({how}): attached "
                            + (f"\u201c{short(claims[0])}\u201d" if kind == "claim" else f"{attached[0]}"))
        elif has_level0 or not level0:
            return _gap(found, episode, fx, "level 0 was attached and the work still failed" if has_level0
                        else "no dropped claim explains it and there is no level 0 below")
        else:
            # escalation is one more candidate: the level-0 text itself, scored against the failure like a claim
            texts0 = node_texts(graph, set(level0))
            full = [Claim(f"(the level-{lvl} text of {i})\n{body}") for i, (lvl, body) in sorted(texts0.items())]
            u0 = judge_usefulness(judge, node, episode, full)
            if u0 is not None and max(u0.values(), default=0.0) < MATCH_FLOOR:
                return _gap(found, episode, fx, "no dropped claim explains it, and level 0 does not state it either")
            trial = Trial(episode.id, strategy.value, "level0", level0, [], [])
            why = "no dropped claim explains it" if pool else "no untried claim left"
            fx.notes.append(f"descent on {node.id}: {why}: escalated to level 0 ({', '.join(level0)})")

    texts = node_texts(graph, referenced([*node.trials, trial]))

    def change(n: Node) -> None:
        n.trials.append(trial)
        while len(n.trials) > MAX_OPEN_TRIALS:  # the idlest older trial gives way (the oldest on a tie)
            del n.trials[max(range(len(n.trials) - 1), key=lambda i: (n.trials[i].idle, -i))]
        n.stats.expansions += 1
        refresh_body(n, texts)
    found.store.update(node.id, change)
    fx.events.append({"action": "opened", "node": node.id, "episode": episode.id, "trial": trial.kind,
                      "strategy": trial.strategy})
    return fx


def _queue(graph: Graph, strategy: DescentStrategy, matched: list[Ranked], ds: DescentSettings) -> list[list[str]]:
    if strategy is DescentStrategy.DELTA_PATCH:
        return [[r.claim.claim] for r in matched]
    # delta-jump: swap in the node holding the claim; a holder scores as its best claim, costed at its own size
    by_holder: dict[str, list[Ranked]] = {}
    for r in matched:
        by_holder.setdefault(r.claim.holder, []).append(r)
    sizes = {h: estimate(base_body(n.body)) if (n := graph.node(h)) else 1 for h in by_holder}
    top = max(sizes.values(), default=1) or 1

    def score(h: str) -> float:
        best = max(ds.w_judge * (r.usefulness or 0.0) + ds.w_prior * r.prior for r in by_holder[h])
        return best - ds.w_cost * sizes[h] / top
    holders = sorted(by_holder, key=lambda h: -score(h))
    return [[h, *[r.claim.claim for r in by_holder[h]]] for h in holders if h]


def _gap(found: Located, episode: Episode, fx: Effects, why: str) -> Effects:
    def change(n: Node) -> None:
        if episode.id not in n.gaps:
            n.gaps = [*n.gaps, episode.id][-MAX_GAPS:]
    found.store.update(found.node.id, change)
    fx.notes.append(f"knowledge gap on {found.node.id}: {why}")
    fx.events.append({"action": "gap", "node": found.node.id, "episode": episode.id, "reason": why})
    return fx


# -- settling what was attached ------------------------------------------------------------------------------

def piece_id(node_id: str, trial: int, part: int) -> str:
    return f"{node_id}~t{trial}c{part}"


def settle(graph: Graph, found: Located, used: dict[str, bool], success: bool, episode: Episode) -> Effects:
    """Credit sticky patches and decide trials from one episode that used the lesson (see the module docstring).
    `used` holds the observation of each attached part (`piece_id`) and sticky patch (`<node>~p<j>`)."""
    node = found.node
    fx = Effects()
    level0 = [n.id for n in graph.level0(node) if n.id != node.id]
    texts = node_texts(graph, referenced(node.trials) | set(level0))

    def change(n: Node) -> None:
        for j, claim in enumerate(n.dropped):
            if claim.rescues > 0 and used.get(f"{n.id}~p{j}"):
                claim.attempts += 1
                if success:
                    claim.rescues += 1
                    fx.rescues += 1
                    fx.credit.append(claim.holder)
                    fx.notes.append(f"sticky patch rescued {n.id} again ({claim.rescues}): "
                                    f"\u201c{short(claim.claim)}\u201d")
                    fx.events.append({"action": "rescued", "node": n.id, "trial": "patch", "episode": episode.id,
                                      "claims": [claim.claim]})
        keep: list[Trial] = []
        for i, t in enumerate(n.trials):
            judged = [j for j in range(len(t.attached)) if piece_id(n.id, i, j) in used]
            parts = [j for j in judged if used[piece_id(n.id, i, j)]]
            if not judged:
                keep.append(t)
            elif not parts:
                t.idle += 1
                if t.kind == "level0" and t.idle >= LEVEL0_PATIENCE:
                    fx.notes.append(f"descent on {n.id}: level 0 stayed unused for {t.idle} uses: detached")
                    fx.events.append({"action": "expired", "node": n.id, "episode": t.episode})
                else:
                    keep.append(t)
            elif success:
                _rescue(n, t, parts, fx, episode)
            elif _advance(n, t, parts, level0, episode, fx):
                keep.append(t)
        n.trials = keep
        refresh_body(n, texts)
    found.store.update(node.id, change)
    return fx


def _count(n: Node, claims: list[str], rescued: bool) -> list[Claim]:
    out = []
    for c in n.dropped:
        if c.claim in claims:
            c.attempts += 1
            c.rescues += 1 if rescued else 0
            out.append(c)
    return out


def rescue_hint(episode: Episode) -> str:
    from rose.compress.replay import HINT_CHARS, PROMPT_IN_HINT

    prompt = " ".join(episode.prompt.split())[:PROMPT_IN_HINT]
    return f"Needed for \u201c{prompt}\u201d (only level 0 had it): {' '.join(episode.accepted_summary.split())}"[
        :HINT_CHARS]


def _rescue(n: Node, t: Trial, parts: list[int], fx: Effects, episode: Episode) -> None:
    """The attached detail was used and the work succeeded: credit what was used, close the trial."""
    used_parts = [t.attached[j] for j in parts]
    if t.kind == "claim":
        claims = _count(n, used_parts, rescued=True)
        fx.credit += [c.holder for c in claims]
        fx.notes.append(f"rescue: \u201c{short(used_parts[0])}\u201d fixed {n.id}, now a sticky patch")
    elif t.kind == "node" and t.claims:
        claims = _count(n, t.claims, rescued=True)
        fx.credit += used_parts
        fx.notes.append(f"rescue: {used_parts[0]} (jumped to) fixed {n.id}, its claims are now sticky patches")
    elif t.kind == "node":
        claims = []
        fx.credit += used_parts
        fx.demote.append((n.id, used_parts[-1], f"stepwise descent: {used_parts[-1]} rescued it", []))
        fx.notes.append(f"rescue: stepwise, {used_parts[-1]} fixed {n.id}, the levels above it are demoted")
    else:
        # the manifest never named what level 0 supplied, so every form above level 0 may lack it: they are all
        # demoted, and what the rescued work used becomes a preserve hint for the next compression
        claims = []
        fx.credit += used_parts
        fx.demote.append((n.id, used_parts[0], "level 0 rescued a failure its manifest could not explain",
                          [rescue_hint(episode)]))
        fx.notes.append(f"rescue by level 0 on {n.id}: the manifest missed it, so the forms above "
                        f"{used_parts[0]} are demoted")
    fx.rescues += 1
    fx.events.append({"action": "rescued", "node": n.id, "trial": t.kind, "strategy": t.strategy,
                      "episode": t.episode, "claims": [c.claim for c in claims], "attached": used_parts})


def _advance(n: Node, t: Trial, parts: list[int], level0: list[str], episode: Episode, fx: Effects) -> bool:
    """Attached detail was used and the work still failed: it did not suffice. What was used stays attached (it was
    applied, and another missing piece may be what failed) and the next candidate joins it; stepwise moves one
    level down instead. True if the trial goes on."""
    used_parts = [t.attached[j] for j in parts]
    _count(n, used_parts if t.kind == "claim" else t.claims, rescued=False)
    if t.queue:
        attached, claims = _item(t.kind, t.queue.pop(0))
        if t.kind == "claim" or (t.kind == "node" and t.claims):
            t.attached = [*used_parts, *[a for a in attached if a not in used_parts]]
            t.claims = [*t.claims, *[c for c in claims if c not in t.claims]] if t.kind != "claim" else t.attached
        else:
            t.attached, t.claims = attached, claims
        t.tries += 1
        t.idle = 0
        fx.notes.append(f"descent on {n.id}: not enough yet, adding "
                        + (f"\u201c{short(attached[0])}\u201d" if t.kind == "claim" else attached[0]))
        fx.events.append({"action": "advanced", "node": n.id, "episode": episode.id, "tries": t.tries})
        return True
    if t.kind != "level0" and t.strategy != DescentStrategy.STEPWISE.value and level0:
        t.kind, t.attached, t.claims, t.tries, t.idle = "level0", list(level0), [], t.tries + 1, 0
        fx.notes.append(f"descent on {n.id}: candidates exhausted, escalated to level 0 ({', '.join(level0)})")
        fx.events.append({"action": "escalated", "node": n.id, "episode": episode.id})
        return True
    for gap in (t.episode, episode.id):
        if gap not in n.gaps:
            n.gaps = [*n.gaps, gap][-MAX_GAPS:]
    fx.notes.append(f"knowledge gap on {n.id}: even level 0 did not fix it")
    fx.events.append({"action": "gap", "node": n.id, "episode": episode.id, "reason": "level 0 failed too"})
    return False


def apply_effects(graph: Graph, fx: Effects) -> None:
    """Credit holders, demote what the trials proved over-cut, and log one event per descent step."""
    for holder in fx.credit:
        found = graph.find(holder)
        if found is not None:
            found.store.update(holder, lambda h: setattr(h.stats, "rescues", h.stats.rescues + 1))
    for apex, rescuer, reason, hints in fx.demote:
        demote_down_to(graph, apex, rescuer, reason, hints)
    owner = graph.layers.stores()[0] if graph.layers.stores() else None
    if owner is not None:
        for event in fx.events:
            owner.event(EventKind.UPDATE, stage="descent", **event)


def demote_down_to(graph: Graph, apex: str, rescuer: str, reason: str, hints: list[str]) -> None:
    """Demote every level between the apex and the node that rescued it, so the rescuer is served again; the
    hints go to the rescuer (the form the next compression starts from)."""
    from rose.compress.demote import demote

    frontier = [apex]
    while frontier:
        node_id = frontier.pop()
        node = graph.node(node_id)
        if node is None or node_id == rescuer:
            continue
        if rescuer in {n.id for n in graph.subtree(node)}:
            restored = demote(graph, node_id, reason, hints if rescuer in node.derived_from else None)
            frontier += [r for r in restored if r != rescuer]
