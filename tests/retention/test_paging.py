"""Cold records in recall (rule 4): never in dense or hot lexical search; an exact lexical match pages at most two
into consideration per recall; a paged record that is used comes back to the hot store."""
from __future__ import annotations

from rose.config import Settings
from rose.model import EpisodeOutcome, Status
from rose.recall import recall
from rose.retention import rules
from rose.store import Layers

from .helpers import credit, lesson


def _settings(max_pack: int = 2000) -> Settings:
    s = Settings()
    s.embed.provider = s.embed.provider.NONE
    s.recall.selector = s.recall.selector.HYBRID
    s.recall.max_pack_tokens = max_pack
    return s


def _store(layers: Layers) -> None:
    store = layers.project
    store.save_many([
        lesson("n_redis01", "The cache lives in Redis db 2; db 0 belongs to the job queue.", title="Redis db 2",
               tags=["redis", "cache"]),
        lesson("n_redis02", "Redis keys carry the tenant id; a cache key without it leaks data.", title="Tenant keys",
               tags=["redis", "cache"]),
        lesson("n_redis03", "Redis cache values over 1 MB are compressed first.", title="Large values",
               tags=["redis", "cache"]),
        lesson("n_other01", "Deploys go through Argo Rollouts.", title="Deploys")])
    store.archive(["n_redis01", "n_redis02", "n_redis03"], "budget")


def test_an_exact_lexical_match_pages_at_most_two_cold_records(layers: Layers) -> None:
    _store(layers)
    result = recall(layers, "why does flushing the redis cache wipe the job queue?", settings=_settings())
    paged = [c["id"] for c in result.trace["cold"]]
    assert len(paged) == rules.COLD_PAGE_MAX and paged[0] == "n_redis01"
    assert {i.id for i in result.items} >= set(paged)
    assert "n_redis01" in result.block


def test_one_generic_word_pages_nothing(layers: Layers) -> None:
    _store(layers)
    result = recall(layers, "the cache seems slow today", settings=_settings())
    assert result.trace["cold"] == [] and "n_redis" not in result.block


def test_paging_works_when_the_store_outgrows_the_budget_too(layers: Layers) -> None:
    _store(layers)
    layers.project.save_many([lesson(f"n_fill{i:03d}", words=80) for i in range(40)])
    result = recall(layers, "redis cache job queue flush", settings=_settings(max_pack=600))
    assert result.trace["gate"].startswith("store outgrows")
    assert "n_redis01" in [c["id"] for c in result.trace["candidates"]]
    assert "n_redis01" in [i.id for i in result.items]


def test_a_paged_record_that_is_used_is_promoted_and_credited(layers: Layers) -> None:
    _store(layers)
    recall(layers, "flushing the redis cache wiped the job queue", session_id="s1", settings=_settings())
    credit(layers, ["n_redis01"], EpisodeOutcome.SUCCESS, "s1")
    node = layers.project.get("n_redis01")
    assert node.status is Status.ACTIVE and node.use_count == 1
    assert layers.project.index.search("redis db")[0][0] == "n_redis01"     # hot search finds it again


def test_rose_search_finds_cold_exact_matches_after_the_hot_hits(layers: Layers) -> None:
    from rose.search import search

    _store(layers)
    layers.project.config_path.write_text("embed: {provider: none}\n", encoding="utf-8")
    hits = search(layers, "flushing the redis cache wiped the job queue")
    cold = [h for h in hits if h.status == "archived"]
    assert [h.id for h in cold][:1] == ["n_redis01"] and cold[0].path.endswith("archive/lesson/n_redis01.md")
    from rose import render

    assert "    cold  n_redis01" in render.hits(cold)            # no fused score: printed as what it is


def test_archiving_the_noise_does_not_make_the_words_of_a_topic_generic(layers: Layers) -> None:
    store = layers.project
    topic = [lesson(f"n_db{i:05d}", f"The database keeps rule {i} here." + (" Reports read the replica." if i == 0
                                                                           else ""), tags=["database"])
             for i in range(8)]
    noise = [lesson(f"n_no{i:05d}", f"A note about nothing in particular, number {i}.") for i in range(192)]
    store.save_many(topic + noise)

    def admitted() -> bool:
        hits = store.index.search_evidence("Change the database reports (#60)")
        return next(h for h in hits if h.id == "n_db00000").admitted
    assert admitted()                                   # "database" is in 8 of 200 lessons: selective
    store.archive([n.id for n in noise], "budget")
    assert admitted()                                   # still: the share is of every record, cold ones included
