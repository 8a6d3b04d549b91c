"""The descent score: which dropped claim most likely explains a failure (spec section 6).

    score = w_judge * usefulness + w_prior * (rescues + 1) / (attempts + 2) - w_cost * tokens / max_tokens

`usefulness` is a judgement, so the model makes it: one `rank_repairs` call scores every candidate 0-1. The prior
is an observed outcome (the claim's Laplace-smoothed rescue rate), so it stays in code and makes descent a
contextual bandit over the graph. Cost is a measurement. With no judge (or a call that fails) the first term is
absent, not replaced: ranking falls back to "what has worked, cheapest first".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rose.compress.graph import served_text
from rose.model import Claim
from rose.tokens import estimate

if TYPE_CHECKING:
    from rose.config import DescentSettings
    from rose.judge import Judge
    from rose.model import Episode, Node


@dataclass
class Ranked:
    index: int
    claim: Claim
    score: float
    usefulness: float | None
    prior: float
    cost: float


def prior(claim: Claim) -> float:
    """Laplace-smoothed rescue rate: an observed outcome, so it stays in code."""
    return (claim.rescues + 1) / (claim.attempts + 2)


def rank(claims: list[Claim], usefulness: dict[int, float] | None, ds: DescentSettings) -> list[Ranked]:
    """Best first. `usefulness` None = no judgement: the judge term is absent, the other two still rank."""
    costs = [estimate(c.claim) for c in claims]
    top = max(costs, default=1) or 1
    out = []
    for i, c in enumerate(claims):
        u = usefulness.get(i) if usefulness is not None else None
        cost = costs[i] / top
        score = (ds.w_judge * u if u is not None else 0.0) + ds.w_prior * prior(c) - ds.w_cost * cost
        out.append(Ranked(i, c, score, u, prior(c), cost))
    return sorted(out, key=lambda r: (-r.score, r.cost, r.index))


def failure_text(episode: Episode) -> str:
    return f"Task: {episode.prompt}\nWhat happened: {episode.accepted_summary or '(no summary recorded)'}"


def judge_usefulness(judge: Judge | None, node: Node, episode: Episode, claims: list[Claim]) -> dict[int, float] | None:
    """One rank_repairs call scoring every candidate; None when there is no judgement to be had."""
    if judge is None or not judge.available or not claims:
        return None
    from rose.judge import JudgeFailure, Stage, calls

    request = calls.RankRepairsRequest(
        lesson=calls.Lesson(node.id, node.title, served_text(node)), failure=failure_text(episode),
        claims=[calls.ClaimRef(f"c{i + 1}", c.claim, c.kind.value) for i, c in enumerate(claims)])
    try:
        answer = judge.ask(calls.RANK_REPAIRS, request, stage=Stage.DESCENT)
    except JudgeFailure:
        return None
    return {i: answer.score(f"c{i + 1}") for i in range(len(claims))}
