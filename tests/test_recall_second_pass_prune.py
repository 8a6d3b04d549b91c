"""The prompt path skips the second pass's dense query and fusion only when they could serve nothing: what it
serves is exactly what the full second pass serves."""
from __future__ import annotations

from rose.config import EmbedProvider, Selector, Settings
from rose.recall import recall
from rose.store import Layers
from tests.support.gen_store import make_nodes

PROMPTS = ["the staging deploy with argo rollout is stuck", "pytest fixture flaky on the integration db",
           "why is the redis cache ttl ignored", "add retries with backoff to the http client",
           "postgres migration deadlock on the connection pool", "vite bundle size grew after the react upgrade",
           "inspect the logs of helm canary", "rebase onto main with signed commits", "asyncio typing in uv venv",
           "clear the cache of redis eviction stampede"]


def _settings() -> Settings:
    s = Settings()
    s.recall.selector = Selector.HYBRID
    s.recall.max_pack_tokens = 400
    s.embed.provider = EmbedProvider.NONE   # lexical only: the same lists on both paths
    return s


def test_the_prompt_path_serves_what_the_full_second_pass_serves(layers: Layers) -> None:
    layers.project.save_many(make_nodes(400))
    skipped = 0
    for prompt in PROMPTS:
        full = recall(layers, prompt, settings=_settings(), hot=False, record_session=False)
        fast = recall(layers, prompt, settings=_settings(), hot=True, record_session=False)
        assert [(i.id, i.reason) for i in fast.items] == [(i.id, i.reason) for i in full.items], prompt
        assert fast.block == full.block and fast.notice == full.notice
        second = fast.trace.get("second_pass", {})
        skipped += "skipped" in second
        assert "skipped" not in full.trace.get("second_pass", {})   # `rose trace` always shows the whole pass
    assert skipped   # the shortcut was taken on these prompts


def test_a_second_pass_that_can_serve_still_runs_whole_on_the_prompt_path(layers: Layers) -> None:
    from tests.test_recall import fill, settings

    ids = fill(layers)
    prompt = "the deploy is stuck: nothing happens after kubectl apply, is the controller asleep?"
    fast = recall(layers, prompt, settings=settings(disclosure=True, candidates=1), hot=True, record_session=False)
    assert "skipped" not in fast.trace["second_pass"]
    assert ids["Argo dedupe key"] in [i.id for i in fast.injected]
    assert "second pass" in next(i.reason for i in fast.items if i.id == ids["Argo dedupe key"])
