"""The labelled retrieval set in bench/recall_quality/ is well-formed (fast: no embedder, no store).

It is what bench/bench_retrieval.py measures recall's candidate search against, so a broken label or an
"unnamed" prompt that does share a word with its lesson would silently skew every number it prints.
"""
from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import pytest

from rose.store.index import fts_query
from rose.redact import redact

DATA = Path(__file__).resolve().parent.parent / "bench" / "recall_quality"


def _jsonl(name: str) -> list[dict]:
    with open(DATA / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def lessons() -> list[dict]:
    return _jsonl("lessons.jsonl")


@pytest.fixture(scope="module")
def prompts() -> list[dict]:
    return _jsonl("prompts.jsonl")


def test_sizes_and_families(lessons: list[dict], prompts: list[dict]) -> None:
    assert len(lessons) >= 300
    assert len(prompts) >= 100
    families = Counter(x["family"] for x in lessons)
    assert 12 <= len(families) <= 15, families
    assert min(families.values()) >= 10, families   # every family has near-misses to rank against
    assert sum(p["unnamed"] for p in prompts) >= 25


def test_lessons_are_complete_with_unique_ids(lessons: list[dict]) -> None:
    ids = [x["id"] for x in lessons]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    for x in lessons:
        assert re.fullmatch(r"n_[0-9a-f]{6}", x["id"]), x["id"]
        assert x["title"].strip() and x["gist"].strip() and x["body"].strip(), x["id"]
        assert "\n" not in x["gist"], x["id"]
        assert x["tags"] and all(t.strip() for t in x["tags"]), x["id"]
        if x["key"].startswith("long-"):   # a multi-section runbook: several sections, past one chunk
            assert x["body"].count("## ") >= 4 and len(x["body"]) > 900, x["id"]   # several chunks
        else:
            assert 1 <= len(re.findall(r"[.!?](\s|$)", x["body"])) <= 6, x["id"]


def test_labels_point_at_existing_lessons(lessons: list[dict], prompts: list[dict]) -> None:
    known = {x["id"] for x in lessons}
    assert len({p["id"] for p in prompts}) == len(prompts)
    for p in prompts:
        assert p["prompt"].strip()
        assert 1 <= len(p["needs"]) <= 3 or (p["needs"] == [] and not p["unnamed"]), p["id"]
        assert len(set(p["needs"])) == len(p["needs"]), p["id"]
        assert set(p["needs"]) <= known, (p["id"], set(p["needs"]) - known)


def test_the_set_has_off_topic_prompts_and_long_lessons_that_prompts_need(lessons: list[dict],
                                                                          prompts: list[dict]) -> None:
    """Prompts that should retrieve nothing, and long multi-section lessons needed for one section's fact."""
    assert sum(1 for p in prompts if not p["needs"]) >= 25
    long_ids = {x["id"] for x in lessons if x["key"].startswith("long-")}
    assert len(long_ids) >= 6
    needing = [p for p in prompts if set(p["needs"]) & long_ids]
    assert len(needing) >= 3 * len(long_ids) - 1
    assert long_ids <= {i for p in needing for i in p["needs"]}   # every long lesson is needed by some prompt


def test_held_out_rounds_are_blocks_after_the_set_in_order(prompts: list[dict]) -> None:
    """Rounds 1-7 (round 1 marked `true`) follow the development set one block each, in the order they were written,
    and each has on-topic and off-topic prompts: a round in the wrong place would be mixed into the set's tables."""
    first = next(i for i, p in enumerate(prompts) if "heldout" in p)
    assert all("heldout" in p for p in prompts[first:])
    rounds = [1 if p["heldout"] is True else p["heldout"] for p in prompts[first:]]
    assert rounds == sorted(rounds)
    assert sorted(set(rounds)) == [1, 2, 3, 4, 5, 6, 7]
    for r in range(1, 8):
        block = [p for p, n in zip(prompts[first:], rounds) if n == r]
        assert sum(bool(p["needs"]) for p in block) >= 25 and sum(not p["needs"] for p in block) >= 25, r


def test_round_7_is_the_last_block_with_its_counts(prompts: list[dict]) -> None:
    """Round 7, written blind after the criteria it checks were registered: 45 on-topic (q755-q799: 6 unnamed, 6 on
    two or three lessons), then 45 off-topic (q800-q844); appended after round 6, so no earlier id moved."""
    block = [p for p in prompts if p.get("heldout") == 7]
    assert [p["id"] for p in block] == [f"q{n:03d}" for n in range(755, 845)]
    assert prompts[-len(block):] == block
    on = [p for p in block if p["needs"]]
    assert block[:len(on)] == on and len(on) == 45 and len(block) - len(on) == 45
    assert sum(p["unnamed"] for p in on) == 6 and sum(len(p["needs"]) > 1 for p in on) == 6
    earlier = {p["prompt"].lower() for p in prompts if p.get("heldout") != 7}
    assert not [p["prompt"] for p in block if p["prompt"].lower() in earlier]   # nothing reused from earlier rounds


def test_unnamed_prompts_share_no_content_word_with_what_they_need(lessons: list[dict],
                                                                  prompts: list[dict]) -> None:
    """As lexical search sees words: rose's stopwords removed, porter-stemmed by FTS5 (title, gist and tags)."""
    by_id = {x["id"]: x for x in lessons}
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, title, gist, tags, tokenize='porter unicode61')")
        conn.executemany("INSERT INTO t VALUES (?,?,?,?)",
                         [(x["id"], x["title"], x["gist"], " ".join(x["tags"])) for x in lessons])
        shared = []
        for p in (p for p in prompts if p["unnamed"]):
            for term in (t for t in fts_query(p["prompt"]).split(" OR ") if t):
                hits = {r[0] for r in conn.execute("SELECT id FROM t WHERE t MATCH ?", (term,))}
                shared += [(p["id"], term, by_id[n]["title"]) for n in p["needs"] if n in hits]
    finally:
        conn.close()
    assert not shared, shared


def test_redaction_leaves_the_lessons_intact(lessons: list[dict]) -> None:
    """The bench stores lessons through save_many, which redacts: a mangled lesson is not what was labelled."""
    changed = [(x["id"], f) for x in lessons for f in ("title", "gist", "body") if redact(x[f]) != x[f]]
    assert not changed, changed


def test_jsonl_matches_the_authoring_sources(lessons: list[dict], prompts: list[dict]) -> None:
    import importlib.util

    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("rose_retrieval_set_build", DATA / "build.py")
        assert spec and spec.loader
        build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build)
        built = build.lessons()
        built_prompts = build.prompts({x["key"]: x for x in built})
    finally:
        sys.path[:] = saved
        for name in [m for m in sys.modules if m == "authoring" or m.startswith("authoring.")]:
            del sys.modules[name]
    assert built == lessons, "lessons.jsonl is stale: run bench/recall_quality/build.py"
    assert built_prompts == prompts, "prompts.jsonl is stale: run bench/recall_quality/build.py"
