"""Whether the lexical ranking leaves lessons out (rose.store.bm25) or scores every matching one, a prompt gets the
same recall: the same block, the same notice line, the same rank lists, scores and second pass, on many prompts
(the bench's, and random ones of the generated store's words and everyday words) over a generated store."""
from __future__ import annotations

import random

import pytest

from rose.config import EmbedProvider, Selector, Settings
from rose.recall import recall
from rose.store import Layers, bm25
from tests.support.gen_store import ACTIONS, TOPICS, VERBS, make_nodes

FIXED = ["the staging deploy with argo rollout is stuck", "pytest fixture flaky on the integration db",
         "why is the redis cache ttl ignored", "add retries with backoff to the http client",
         "postgres migration deadlock on the connection pool", "vite bundle size grew after the react upgrade",
         "fix the deploy cache retries for the tests and the build", "always check the config before you run it",
         "a healthy breakfast that takes five minutes"]
EVERYDAY = ["the", "with", "fix", "slow", "again", "after", "why", "how", "build", "run", "test", "when", "on", "is"]


def _prompts(n: int = 60) -> list[str]:
    rng = random.Random(15)
    vocab = sorted({w.lower() for words in TOPICS.values() for t in words for w in t.split()}
                   | {w.lower() for phrase in VERBS + ACTIONS for w in phrase.split()} | set(EVERYDAY))
    return FIXED + [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 14))) for _ in range(n)]


def _settings() -> Settings:
    s = Settings()
    s.recall.selector = Selector.HYBRID
    s.recall.max_pack_tokens = 400
    s.embed.provider = EmbedProvider.NONE   # lexical only: the lists compared are the ones pruning touches
    return s


def _served(layers: Layers, prompt: str) -> tuple:
    r = recall(layers, prompt, settings=_settings(), hot=True, record_session=False)
    return r.block, r.notice, r.trace.get("lexical_list"), r.trace.get("second_pass"), r.trace.get("candidates")


def test_pruned_and_whole_rankings_serve_the_same(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    layers.project.save_many(make_nodes(2400))
    conn = layers.project.index.conn
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        pruned = [_served(layers, p) for p in _prompts()]
    finally:
        conn.set_trace_callback(None)
    ranked = [s for s in statements if "bm25(nodes_fts" in s]
    filtered = sum("+rowid IN" in s for s in ranked)
    assert 0 < filtered < len(ranked)   # some rankings left lessons out, others (where it would not pay) did not
    monkeypatch.setattr(bm25, "split", lambda *_a: ([], []))   # every ranking scores every matching lesson
    whole = [_served(layers, p) for p in _prompts()]
    assert sum(1 for s in pruned if s[0]) >= 5   # lessons were served, not only nothing compared with nothing
    for prompt, a, b in zip(_prompts(), pruned, whole):
        assert a == b, prompt
