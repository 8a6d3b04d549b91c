"""The learner's cost against what memory saves: every call's tokens per stage, `rose status` weighing pack tokens
saved against learner tokens spent, and a compression attempt made only where it would pay for itself."""
from __future__ import annotations

import json
import math
from pathlib import Path

from rose.compress import payback
from rose.judge import BackendReply, Judge, Scripted, Stage, calls
from rose.model import Node, Origin
from rose.report import status
from rose.store import Layers
from rose.store.events import EventKind
from tests.judge.samples import samples


def test_an_attempt_on_a_rarely_served_lesson_does_not_pay() -> None:
    often = payback.judge(250, 5, 0.75, serve_rate=0.8)
    rarely = payback.judge(250, 5, 0.75, serve_rate=0.02)
    assert often.worth and not rarely.worth and often.cost == rarely.cost == 12 * (450 + 250)
    assert "would not pay for itself" in rarely.reason and "2% of recent sessions" in rarely.reason
    # every failed attempt on the lineage lowers the odds an attempt pays (tests/compress/test_payback.py)
    assert payback.judge(250, 5, 0.75, serve_rate=0.8, odds=payback.chance(0, 3)).worth is False
    young = payback.judge(250, 5, 0.75, serve_rate=None)    # too few episodes to say: allowed
    assert young.worth and math.isnan(young.saving)


def test_the_serve_rate_counts_served_and_withheld_episodes(tmp_path: Path) -> None:
    folder = tmp_path / "episodes"
    folder.mkdir()
    for i in range(payback.MIN_EPISODES - 1):
        (folder / f"e{i}.json").write_text(json.dumps({"id": f"e{i}", "served": ["n_a"] if i < 3 else []}))
    assert payback.serve_rate([folder], "n_a") is None
    (folder / "e_w.json").write_text(json.dumps({"id": "e_w", "served": [], "arms": {"n_a": "withheld"}}))
    (folder / "junk.json").write_text("{not json")
    assert payback.serve_rate([folder], "n_a") == 4 / 10


def test_status_weighs_pack_tokens_saved_against_learner_tokens(layers: Layers) -> None:
    store = layers.project
    base = Node(id=store.new_id(), family="deploy", title="Deploy", body="word " * 400, origin=Origin.MANUAL)
    store.save(base)
    short = Node(id=store.new_id(), family="deploy", title="Deploy", body="word " * 100, origin=Origin.COMPRESSION,
                 level=1, derived_from=[base.id])
    store.save(short)
    store.sync()
    rows = {r.id: r for r in store.rows()}
    store.event(EventKind.INJECT, session="s1", served=[short.id], withheld=[], tokens=rows[short.id].tokens)
    sample = next(s for s in samples() if s.call is calls.SCOPE)
    backend = Scripted(BackendReply(sample.good, "{}", input_tokens=900, output_tokens=60, cost_usd=0.002),
                       BackendReply(sample.good, "{}", input_tokens=40, output_tokens=5))
    judge = Judge(backend, events_path=store.events_path, timeout_s=5)
    judge.ask(calls.SCOPE, sample.request, stage=Stage.CONSOLIDATION)
    judge.ask(calls.SCOPE, sample.request, stage=Stage.RECALL)     # the prompt path's calls are not the learner's
    report = status(layers)
    cost = report.cost
    assert report.stages["consolidation"].input_tokens == 900 and report.stages["consolidation"].output_tokens == 60
    assert cost.prompts == 1 and cost.pack_tokens == rows[short.id].tokens
    assert cost.saved_by_compression == rows[base.id].tokens - rows[short.id].tokens
    assert (cost.learner_tokens, cost.learner_calls, cost.recall_tokens) == (960, 1, 45)
    assert cost.learner_cost_usd == 0.002
    from rose import render

    line = next(x for x in render.status(report).splitlines() if "the learner spent" in x)
    assert "960" in line and ("saves more than it spends" if cost.saved > 960 else "spends more than it saves") in line
