"""A fresh clone with lessons and no index: the prompt serves what it could index inside its share of the deadline,
says so on the notice, and a detached job (one per store, locked) builds the rest."""
from __future__ import annotations

import os
from pathlib import Path

from rose.config import EmbedProvider, Selector, Settings
from rose.recall import pipeline, recall
from rose.store import Layers, build
from tests.support.gen_store import make_nodes
from tests.support.waits import wait_until


def _settings() -> Settings:
    s = Settings()
    s.recall.selector = Selector.HYBRID
    s.recall.max_pack_tokens = 300
    s.embed.provider = EmbedProvider.NONE
    return s


def _clone(layers: Layers, n: int) -> Path:
    store = layers.project
    store.save_many(make_nodes(n))
    store.close()
    for name in os.listdir(store.local):
        if name.startswith("index.db"):
            os.unlink(store.local / name)
    return store.root


def test_the_prompt_serves_what_is_indexed_and_names_the_rest(layers: Layers, monkeypatch) -> None:
    root = _clone(layers, 60)
    started = []
    monkeypatch.setattr(build, "start", lambda r, scope: started.append((r, scope)) or True)
    monkeypatch.setattr(pipeline, "_parse_until", lambda deadline: 0.0)   # no time at all to parse here
    first = recall(layers, "the staging deploy with argo rollout is stuck", settings=_settings(), hot=True,
                   record_session=False)
    assert "project index building in the background: 0 of 60 lessons searchable" in first.notice
    assert started == [(root, "project")]
    assert build.build(root, "project") == 60   # what the detached job does
    again = recall(layers, "the staging deploy with argo rollout is stuck", settings=_settings(), hot=True,
                   record_session=False)
    assert "index building" not in again.notice and again.trace["store"]["servable"] == 60
    assert layers.project.index.count() == 60 and (root / "index.md").read_text().count("\nn_") == 60


def test_one_build_at_a_time(layers: Layers) -> None:
    root = _clone(layers, 5)
    held = build._try_lock(root)
    assert held is not None
    try:
        assert build.running(root)
        assert build.start(root, "project") is False   # none started while one runs
        assert build.build(root, "project") == 0       # and one started anyway steps aside
    finally:
        os.close(held)
    assert not build.running(root)


def test_the_detached_job_builds_the_index(layers: Layers) -> None:
    root = _clone(layers, 40)
    assert build.start(root, "project")

    def indexed() -> int:
        from rose.model import Scope
        from rose.store import Store

        store = Store(root, Scope.PROJECT)
        try:
            return store.index.count() if (root / "index.md").exists() else 0
        finally:
            store.close()

    wait_until(lambda: indexed() == 40 and not build.running(root), "the background build to finish")
    assert (layers.project.logs_dir / "index-build.log").exists()
