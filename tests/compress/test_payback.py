"""Where a stage does not pay for itself on a store, it backs off (rose.compress.payback): a compression lineage
whose attempts keep failing stops being asked, and is asked again once its saving grows; a merge is not attempted
while recall serves the whole store, and is once the store outgrows the budget."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rose.compress import after_episode, eligibility, payback
from rose.compress.graph import Graph
from rose.config import CompressionSettings
from rose.judge import Judge
from rose.model import Episode, EpisodeOutcome, Node, Origin
from rose.tokens import estimate

from .conftest import make_sim
from .helpers import apex, key, task
from .test_merge import _cross


def test_every_failed_attempt_lowers_the_odds_an_attempt_pays() -> None:
    assert payback.chance(0, 0) == 1.0                   # no record: judged on the saving alone
    assert payback.chance(0, 1) == 0.5 and payback.chance(0, 3) == 0.25
    assert payback.chance(1, 1) == 2 / 3                 # an accepted form in the lineage raises them again
    fresh = payback.judge(250, 2, 0.75, serve_rate=1.0)
    failing = payback.judge(250, 2, 0.75, serve_rate=1.0, odds=payback.chance(0, 2))
    assert fresh.worth and not failing.worth and fresh.cost == failing.cost == 6 * (450 + 250)
    assert "would not pay for itself" in failing.reason and "33% odds" in failing.reason
    # held-out replays are paid once a candidate is accepted: they come off the saving
    assert payback.judge(250, 2, 0.75, 0.6).worth and not payback.judge(250, 2, 0.75, 0.6, heldout=5).worth
    assert payback.judge(250, 2, 0.75, serve_rate=None, odds=0.1).worth   # a store too young to say: allowed


def test_a_lesson_whose_attempts_keep_failing_stops_being_attempted(tmp_path: Path) -> None:
    with make_sim(tmp_path) as sim:
        sim.backend.schedule("compress", *["under_report"] * 40)   # this store's compressor never declares a loss
        f0 = key(sim, "retry", 0)
        calls = []
        for _ in range(24):
            sim.run(task(sim, "retry", f0))
            calls.append(sim.backend.calls.counts.get("compress", 0))
        node = apex(sim, "retry")
        assert node.level == 0 and calls[-1] >= 2
        assert payback.failures(sim.store, node.id) == calls[-1]            # every failed attempt is in the log
        stopped = calls.index(calls[-1])
        assert stopped < 12 and calls[stopped:] == [calls[-1]] * (24 - stopped)   # and then no more calls
        elig = eligibility.check(Graph(sim.layers), node, sim.layers.settings().compression)
        assert not elig.ok and "would not pay for itself" in elig.reason and "odds" in elig.reason


def _episode(store, served: list[str], session: str) -> Episode:
    ep = Episode(id=store.new_episode_id(), session=session, prompt="p", outcome=EpisodeOutcome.SUCCESS,
                 used=served, served=served, accepted_summary="ok")
    store.save_episode(ep)
    return ep


def test_a_backed_off_lesson_is_attempted_again_once_it_is_served_more_often(layers) -> None:
    store = layers.project
    graph = Graph(layers)
    cs = CompressionSettings(heldout_fraction=0.0)
    body = "\n".join(f"- Step {i}: check the retry budget before the call number {i}." for i in range(30))
    node = Node(id=store.new_id(), family="f", title="t", body=body, origin=Origin.MANUAL)
    node.stats.successes = 2
    store.save(node)
    covers = [_episode(store, [node.id], f"s{i}").id for i in range(2)]      # its two validation episodes
    for i in range(18):                                                      # half the sessions serve it
        _episode(store, [node.id] if i < 8 else [], f"o{i}")
    node = store.update(node.id, lambda n: n.covers_tasks.extend(covers))
    tokens, replays = estimate(node.body), 2
    cost = payback.attempt_cost(tokens, replays)
    assert payback.expected_saving(tokens, cs.max_token_ratio, 0.5) / 3 < cost   # the numbers the test rests on
    assert payback.expected_saving(tokens, cs.max_token_ratio, 0.9) / 3 >= cost
    assert eligibility.check(graph, node, cs).ok                              # no failures yet: it pays at 50%
    for attempt in range(2):                                                 # two attempts that saved nothing
        node = store.update(node.id, lambda n, a=attempt: setattr(n, "last_attempt_successes", a))
        payback.record_failure(store, node)
        payback.record_failure(store, node)                                  # the same attempt logged twice: once
    node = store.update(node.id, lambda n: setattr(n, "last_attempt_successes", 0))
    assert payback.failures(store, node.id) == 2
    held = eligibility.check(graph, node, cs)
    assert not held.ok and "33% odds" in held.reason and "served in 50%" in held.reason
    for i in range(80):                                                      # the work turns to it
        _episode(store, [node.id], f"n{i}")
    again = eligibility.check(graph, node, cs)
    assert again.ok, again.reason


def test_no_merge_while_the_whole_store_is_served_and_one_once_it_outgrows_the_budget(tmp_path: Path) -> None:
    with make_sim(tmp_path, families=("testing", "database"), config={"compression": {"max_level": 1}}) as sim:
        results = [sim.run(_cross(sim)) for _ in range(4)]
        assert all(r.success for r in results)
        assert "not attempted: the whole store is served" in results[3].learner[0]
        assert "merge" not in sim.backend.calls.counts and not [n for n in sim.nodes() if n.origin is Origin.MERGE]
        # the same episode, judged for a store that outgrew the budget: the parent now has a selection to serve
        state = sim.layers.settings()
        grown = replace(state, recall=replace(state.recall, max_pack_tokens=100))
        assert not payback.merge_pays(sim.layers.stores(), state.recall).worth
        assert payback.merge_pays(sim.layers.stores(), grown.recall).worth
        episode = max(sim.store.episodes()[0], key=lambda e: e.created)
        note = after_episode(sim.layers, sim.store, episode, Judge(sim.backend), grown)
        assert "merged" in note and sim.backend.calls.counts.get("merge") == 1
        assert [n for n in sim.nodes() if n.origin is Origin.MERGE]
