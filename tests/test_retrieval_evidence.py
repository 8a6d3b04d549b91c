"""What counts as evidence without a model: one generic word admits nothing, a phrase or two selective words do,
a cosine under the noise floor is not fused, long lessons are embedded as chunks scored by their best, the hybrid
cut is on real scores, and a prompt nothing bears on gets nothing, with a notice that says so."""
from __future__ import annotations

import hashlib
import math

from rose.config import EmbedProvider, Selector, Settings
from rose.embed import CHUNK_TOKENS, Chunked, chunk_texts, node_text
from rose.model import Node
from rose.recall import candidates as cand
from rose.recall import recall, selectors
from rose.store import Layers
from rose.tokens import estimate

FAMILIES = ("deploy", "database", "testing", "frontend")


def _fill(layers: Layers, n: int = 40) -> None:
    """n lessons; every one holds the generic word "service", a few hold selective ones."""
    store = layers.project
    specific = {0: "Rollback with the deploy repository revert, never kubectl rollout undo.",
                1: "The connection pool leaks when sessions are not closed; pgbouncer shows it first.",
                2: "Snapshot files are updated with pytest --snapshot-update and a reason in the PR.",
                3: "The date picker lives beside the bookings route until a second route needs it."}
    for i in range(n):
        body = specific.get(i, f"Routine note {i} about the service and its configuration value {i}.")
        store.save(Node(id=f"n_ev{i:04d}", family=FAMILIES[i % 4], title=f"Lesson {i} on the service",
                        body=body + " The service is owned by the platform team.", gist=body[:60],
                        tags=[FAMILIES[i % 4]]))


def _settings() -> Settings:
    s = Settings()
    s.embed.provider = EmbedProvider.NONE
    s.recall.selector = Selector.HYBRID
    s.recall.max_pack_tokens = 300
    return s


def test_one_generic_word_admits_nothing_a_phrase_or_two_selective_words_do(layers: Layers) -> None:
    _fill(layers)
    index = layers.project.index
    hits = {h.id: h for h in index.search_evidence("is the service up? just curious, nothing to fix")}
    assert hits and not any(h.admitted for h in hits.values())        # "service" is in every lesson: generic
    two = {h.id: h for h in index.search_evidence("the connection pool leaks again")}
    assert two["n_ev0001"].admitted and two["n_ev0001"].phrase           # "connection pool", side by side
    words = {h.id: h for h in index.search_evidence("pgbouncer says sessions are stuck")}
    assert words["n_ev0001"].admitted and words["n_ev0001"].selective == 2 and not words["n_ev0001"].phrase
    one = {h.id: h for h in index.search_evidence("what is a date on the calendar, for the pgbouncer talk?")}
    assert not one["n_ev0003"].admitted and not one["n_ev0001"].admitted   # one selective word each: not enough
    alone = {h.id: h for h in index.search_evidence("pgbouncer")}
    assert alone["n_ev0001"].admitted                                   # the prompt's only selective word


def test_an_off_topic_prompt_gets_nothing_and_the_notice_says_so(layers: Layers) -> None:
    _fill(layers)
    result = recall(layers, "what time is it in Tokyo? just curious, nothing to fix on the service",
                    settings=_settings())
    assert result.trace["gate"].startswith("store outgrows")
    assert result.block == "" and result.injected == []
    assert result.notice == "⋯ ROSE · nothing relevant among 40 lessons"
    assert result.trace["candidates"] and not any(c["admitted"] for c in result.trace["candidates"])
    served = recall(layers, "the connection pool leaks again", settings=_settings())
    assert [i.id for i in served.injected] == ["n_ev0001"]


def _candidate(store, node_id: str, bm25: float | None, cos: float | None, admitted: bool = True,
               dense_rank: int | None = None) -> cand.Candidate:
    row = store.index.rows_by_id([node_id])[node_id]
    c = cand.Candidate(node_id, store, row, lexical_rank=1 if bm25 is not None else None, bm25=bm25,
                       admitted=admitted, dense_cos=cos, dense_rank=dense_rank)
    return c


def test_the_hybrid_cut_is_on_real_scores_not_ranks(layers: Layers) -> None:
    _fill(layers, 8)
    s = layers.project
    # a clear winner: the others are far below it in BM25 and are not served, whatever their rank
    cut = selectors.hybrid_cut([_candidate(s, "n_ev0000", 12.0, None), _candidate(s, "n_ev0001", 3.0, None),
                                _candidate(s, "n_ev0002", 2.5, None)])
    assert [c.id for c in cut] == ["n_ev0000"]
    # two close ones both serve; a lexical hit without evidence never does, a dense one only at its floor
    cut = selectors.hybrid_cut([_candidate(s, "n_ev0000", 12.0, None), _candidate(s, "n_ev0001", 11.0, None),
                                _candidate(s, "n_ev0002", 30.0, None, admitted=False),
                                _candidate(s, "n_ev0003", None, 0.50, dense_rank=1),
                                _candidate(s, "n_ev0004", None, 0.40, dense_rank=2)])
    assert [c.id for c in cut] == ["n_ev0000", "n_ev0001", "n_ev0003"]
    # one shared word is evidence when the dense model agrees (it ranked the lesson above its noise floor)
    cut = selectors.hybrid_cut([_candidate(s, "n_ev0005", 5.0, 0.3, admitted=False, dense_rank=1)])
    assert [c.id for c in cut] == ["n_ev0005"]
    assert selectors.hybrid_cut([]) == []


def test_a_cosine_under_the_noise_floor_is_not_fused(layers: Layers) -> None:
    _fill(layers, 4)
    s = layers.project
    model = "wordllama-l2_supercat-256+c128"
    floor = cand.floors_for(model).noise
    lists = cand.RankLists([], [(s, "n_ev0000", floor + 0.2), (s, "n_ev0001", floor - 0.01)], cand.DenseStatus.ON,
                           {}, model)
    fused = cand.fuse([s], lists, _settings().recall, map_up=False)
    assert [c.id for c in fused] == ["n_ev0000"]
    assert cand.floors_for("openai:some-model@http://x+c128") == cand.DEFAULT_FLOORS


def test_long_lessons_are_chunked_with_title_and_tags_on_each_and_short_ones_stay_whole() -> None:
    assert chunk_texts("Short", ["a"], "gist", "A short body.") == [node_text("Short", ["a"], "gist", "A short body.")]
    body = "\n\n".join(f"## Part {i}\n" + f"Sentence {i} about topic {i} with enough words in it. " * 6
                       for i in range(8))
    chunks = chunk_texts("Runbook", ["ops", "oncall"], "the gist", body)
    assert len(chunks) >= 8
    assert all(c.startswith("Runbook\nops oncall\n") for c in chunks)
    assert all(estimate(c) <= CHUNK_TOKENS + 8 for c in chunks)
    assert "the gist" in chunks[0] and "the gist" not in chunks[1]
    assert all(f"## Part {i}" in "".join(chunks) for i in range(8))


class _Toy:
    """A deterministic bag-of-words embedder: each word a fixed random direction, the text their normalised sum."""

    name = "toy"

    def embed(self, texts):
        out = []
        for text in texts:
            vec = [0.0] * 64
            for w in text.lower().split():
                h = hashlib.sha256(w.strip(".,:#").encode()).digest()
                for k in range(64):
                    vec[k] += (h[k % 32] / 255.0 - 0.5) * (1 if k < 32 else -1)
            norm = math.sqrt(sum(x * x for x in vec)) or 1.0
            out.append([x / norm for x in vec])
        return out


def test_a_long_lesson_scores_as_its_best_chunk(layers: Layers) -> None:
    from rose.embed.dense import VectorTable

    store = layers.project
    sections = [f"## Section {i}\n" + " ".join(f"filler{i}x{j}" for j in range(60)) for i in range(6)]
    sections[4] = "## Alerts\nthe latency alert means the slot cache was evicted warm it"
    store.save(Node(id="n_longone1", family="ops", title="Service guide", body="\n\n".join(sections), gist="guide",
                    tags=["guide"]))
    store.save(Node(id="n_short001", family="ops", title="Slot cache", body="the slot cache holds availability",
                    gist="slot cache", tags=["cache"]))
    chunked = Chunked(_Toy())
    assert store.embed_missing(chunked) == 2
    table = VectorTable(store.index_db_path, chunked.name)
    try:
        [q] = chunked.embed(["latency alert slot cache evicted warm"])
        ranked = dict(table.rank(q, 5))
        assert set(ranked) == {"n_longone1", "n_short001"}
        whole = _Toy().embed([node_text("Service guide", ["guide"], "guide", "\n\n".join(sections))])[0]
        assert ranked["n_longone1"] > sum(a * b for a, b in zip(q, whole)) + 0.2   # the chunk, not the average
        assert table.matrix.shape[0] > 2                                          # one row per chunk
    finally:
        table.close()


def test_a_lone_digit_is_a_word_a_prompt_can_name(layers: Layers) -> None:
    """Lessons told apart only by a number ("step 3", "port 8"): the digit selects, the shared words do not."""
    for i in range(12):
        layers.project.save(Node(id=f"n_st{i:04d}", family="deploy", title=f"Deploy step {i}",
                                 body=f"Deploy step {i}: run check {i} before shipping."))
    hits = {h.id: h for h in layers.project.index.search_evidence("how do I deploy step 3?")}
    assert hits["n_st0003"].admitted and hits["n_st0003"].selective == 1
    assert [h.id for h in hits.values() if h.admitted] == ["n_st0003"]
    result = recall(layers, "how do I deploy step 3?", settings=_settings(), record_session=False)
    assert [i.id for i in result.injected] == ["n_st0003"]


def test_a_number_no_lesson_holds_raises_no_bar_an_unknown_word_does(layers: Layers) -> None:
    """A ticket number is new in every prompt and says nothing about the topic: it must not make one real selective
    word insufficient. A word the store has never seen does raise the bar: such prompts are mostly about other
    things."""
    _fill(layers)
    hits = {h.id: h for h in layers.project.index.search_evidence("pgbouncer 48213")}
    assert hits["n_ev0001"].admitted and hits["n_ev0001"].selective == 1
    unknown = {h.id: h for h in layers.project.index.search_evidence("pgbouncer at the opera tonight")}
    assert not unknown["n_ev0001"].admitted
