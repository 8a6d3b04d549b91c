"""A just-started helper never blocks a request on loading: it says `Warming` at once and loads in the background."""
from __future__ import annotations

import threading

import pytest

from rose.model import Node
from rose.store import Layers
from rose.warm import server
from tests.support.waits import wait_until


class _Fixed:
    """A stand-in embedder: every text on one axis (cosine 1 with any query), so a ranking is easy to check."""

    name = "fixed-3"

    def embed(self, texts):
        return [[1.0, 0.0, 0.0] for _ in texts]


def test_a_request_is_told_warming_while_the_model_and_vectors_load(layers: Layers, monkeypatch) -> None:
    store = layers.project
    store.save(Node(id=store.new_id(), family="f", title="Retry policy", body="Back off and retry."))
    store.embed_missing(_Fixed())
    db = str(store.index_db_path)
    release = threading.Event()
    loads = []

    def slow_load(self, embed):
        loads.append(1)
        release.wait(120)   # the model "loads" until the test lets it
        self.embedders[self._key(embed)] = _Fixed()
        return self.embedders[self._key(embed)]

    monkeypatch.setattr(server.Warm, "load_embedder", slow_load)
    warm = server.Warm()
    embed = {"provider": "auto"}
    with pytest.raises(server.Warming):
        warm.rank(embed, "retry", [db], 5)      # returns at once: the model is loading, not this request's job
    with pytest.raises(server.Warming):
        warm.rank(embed, "retry", [db], 5)      # still loading: told again, and no second load started
    assert len(loads) == 1
    release.set()

    def ranked():
        try:
            return warm.rank(embed, "retry", [db], 5)
        except server.Warming:
            return None

    wait_until(lambda: ranked() is not None, "the model and the vector table to load in the background")
    [(node_id, cosine)] = ranked()[db]
    assert store.index.rows()[0].id == node_id and cosine == pytest.approx(1.0)


def test_a_warming_helper_answers_a_dense_request_with_no_ranks(monkeypatch) -> None:
    release = threading.Event()
    monkeypatch.setattr(server.Warm, "load_embedder", lambda self, embed: release.wait(120))
    monkeypatch.setattr(server, "WARM", server.Warm())
    try:
        assert server.local_dense({"provider": "auto"}, "retry", ["/nonexistent/index.db"], 5) is None
    finally:
        release.set()


def test_a_changed_vector_table_is_reloaded_in_the_background_never_inside_a_request(layers: Layers) -> None:
    """A write to the index: the request that notices it ranks with the vectors already loaded (no reload while it
    waits), the new table is read off the request and swapped in whole; a write that touched no vector of the
    space reloads nothing."""
    import sqlite3

    store = layers.project
    store.save(Node(id=store.new_id(), family="f", title="Retry policy", body="Back off and retry."))
    store.embed_missing(_Fixed())
    db = str(store.index_db_path)
    warm = server.Warm()
    warm.embedders[warm._key({"provider": "auto"})] = _Fixed()

    def ranked() -> list | None:
        try:
            return warm.rank({"provider": "auto"}, "retry", [db], 5)[db]
        except server.Warming:
            return None

    wait_until(lambda: ranked() is not None, "the vector table to load")
    key = (db, _Fixed.name)
    table = warm.tables[key]
    # a commit that changes no vector (another connection writes a meta row): checked off the request, kept
    other = sqlite3.connect(db)
    other.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('bench', 'x')")
    other.commit()
    assert len(ranked()) == 1
    wait_until(lambda: not table.changed(), "the background check of the write")
    assert warm.tables[key] is table
    # a new lesson with a vector: the next request is answered from the loaded table, then the new one serves
    store.save(Node(id=store.new_id(), family="f", title="Jitter", body="Add jitter to the backoff."))
    store.embed_missing(_Fixed())
    assert len(ranked()) == 1   # the reload cannot start before this request lets go of the tables
    wait_until(lambda: len(ranked() or []) == 2, "the reloaded table to be swapped in")
    assert warm.tables[key] is not table
    other.close()
