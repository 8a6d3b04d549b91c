"""`rose search` lists the hits with evidence first, then, up to the limit, the weaker matches, marked: the rest of
the fused ranking, then the lessons nearest in meaning under the noise floor. Recall serves none of the weaker ones."""
from __future__ import annotations

import json

import pytest

from rose import render
from rose.config import EmbedProvider, Selector, Settings
from rose.mcp import tools
from rose.model import Node
from rose.recall import candidates as cand
from rose.recall import recall
from rose.search import search
from rose.store import Layers

MODEL = "wordllama-l2_supercat-256"          # its floors: noise 0.25, serve at candidates.DENSE_FLOOR


def _fill(layers: Layers) -> None:
    store = layers.project
    bodies = {"n_pool01": "The connection pool leaks when sessions are not closed; pgbouncer shows it first.",
              "n_snap01": "Snapshot files are updated with pytest --snapshot-update and a reason in the PR."}
    for i in range(30):
        bodies.setdefault(f"n_svc{i:03d}", f"Routine note {i} about the service and its configuration value {i}.")
    for node_id, body in bodies.items():
        store.save(Node(id=node_id, family="ops", title=f"Note {node_id}", body=body + " The service is ours.",
                        gist=body[:60], tags=["ops"]))


@pytest.fixture
def dense(monkeypatch: pytest.MonkeyPatch):
    """Stands in for the embedder: the dense list search is given, (id, cosine) best first."""
    given: list[tuple[str, float]] = []

    def rank_lists(stores, query, *_args, **_kw):
        hits = cand.lexical_hits(stores, query)
        [store] = stores
        return cand.RankLists([(s, h.id, h.score) for s, h in hits], [(store, i, c) for i, c in given],
                              cand.DenseStatus.ON, cand.evidence_of(hits), MODEL)

    monkeypatch.setattr("rose.recall.pipeline.rank_lists", rank_lists)
    return given


def test_evidence_first_then_the_rest_of_the_fused_list_then_dense_under_noise(layers: Layers, dense) -> None:
    _fill(layers)
    floors = cand.floors_for(MODEL)
    dense += [("n_snap01", floors.noise + 0.05),      # fused (above noise), under the serving floor: weak
              ("n_svc007", floors.noise - 0.02),      # under noise: not fused, listed last
              ("n_svc009", floors.noise - 0.05)]
    hits = search(layers, "pgbouncer connection pool", limit=40)
    assert hits[0].id == "n_pool01" and hits[0].evidence            # a phrase and selective words
    weak = [h for h in hits if not h.evidence]
    assert weak and all(not h.evidence for h in hits[len(hits) - len(weak):])    # every weak one after the evidence
    ids = [h.id for h in weak]
    assert "n_snap01" in ids and ids[-2:] == ["n_svc007", "n_svc009"]          # under-noise ones last, best first
    assert hits[-1].dense_rank == 3 and hits[-1].lexical_rank is None


def test_the_limit_holds_and_under_noise_comes_only_when_the_list_is_short(layers: Layers, dense) -> None:
    _fill(layers)
    dense += [(f"n_svc{i:03d}", 0.1) for i in range(20)]            # all under noise
    short = search(layers, "pgbouncer connection pool", limit=5)
    assert len(short) == 5 and short[0].id == "n_pool01"
    assert search(layers, "pgbouncer connection pool", limit=1) == short[:1]
    # a query whose lexical hits fill the limit gets no under-noise tail
    generic = search(layers, "routine note about the service", limit=5)
    assert len(generic) == 5 and all(h.lexical_rank is not None for h in generic)


def test_a_query_nothing_bears_on_lists_only_weaker_matches_and_says_so(layers: Layers, dense) -> None:
    _fill(layers)
    dense += [("n_snap01", 0.12), ("n_pool01", 0.10)]
    query = "what time is it in Tokyo? just curious"
    hits = search(layers, query, limit=5)
    assert [h.id for h in hits] == ["n_snap01", "n_pool01"] and not any(h.evidence for h in hits)
    text = render.hits(hits)
    assert text.splitlines()[0] == render.NONE_WELL and render.WEAKER not in text
    assert json.loads(json.dumps([h.to_dict() for h in hits]))[0]["evidence"] is False
    # and recall, which serves by evidence, serves none of them
    settings = Settings()
    settings.embed.provider = EmbedProvider.NONE
    settings.recall.selector = Selector.HYBRID
    settings.recall.max_pack_tokens = 300       # the store outgrows one pack: recall selects
    assert recall(layers, query, settings=settings).injected == []


def test_text_marks_where_the_weaker_matches_begin(layers: Layers, dense) -> None:
    _fill(layers)
    dense += [("n_svc003", 0.1)]
    hits = search(layers, "pgbouncer connection pool", limit=10)
    lines = render.hits(hits).splitlines()
    assert lines[0].split()[1] == "n_pool01"
    assert lines.count(render.WEAKER) == 1 and lines.index(render.WEAKER) == 3    # after the one evidence hit
    assert render.hits(hits[:1]).count(render.WEAKER) == 0


def test_the_mcp_tool_marks_weaker_lessons(layers: Layers, dense) -> None:
    _fill(layers)
    dense += [("n_svc003", 0.1), ("n_svc004", 0.09)]
    answer = tools.search(layers, "pgbouncer connection pool", limit=3)
    lessons = answer.data["lessons"]
    assert [x["evidence"] for x in lessons] == [True, False, False]
    assert answer.text.count('evidence="weak"') == 2 and "(2 of them weaker matches" in answer.text
    strong = tools.search(layers, "pgbouncer connection pool", limit=1)
    assert "evidence=\"weak\"" not in strong.text
    assert "weaker matches" not in strong.text
