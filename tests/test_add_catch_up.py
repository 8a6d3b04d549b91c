"""`rose add` names the lesson it stored to the warm helper, which embeds that one by id instead of scanning every
row of the index for what lacks a vector (145 ms of the helper's CPU at 50,000 lessons, for one lesson); anything
else still missing is the periodic catch-up's, which scans as before."""
from __future__ import annotations

from rose.learn import teach as teach_module
from rose.model import Node, Status
from rose.store import Layers
from rose.warm import client, server
from tests.support.waits import wait_until


class _Fixed:
    name = "fixed-3"

    def embed(self, texts):
        return [[1.0, 0.0, 0.0] for _ in texts]


def _nodes(store, n: int) -> list[Node]:
    nodes = [Node(id=f"n_c{i:05x}", family="f", title=f"lesson {i}", body=f"body {i}") for i in range(n)]
    store.save_many(nodes)
    return nodes


def test_missing_embeddings_among_ids_skips_the_embedded_the_cold_and_the_unnamed(layers: Layers) -> None:
    store = layers.project
    nodes = _nodes(store, 6)
    store.embed_missing(_Fixed(), ids=[nodes[0].id])
    store.update(nodes[1].id, lambda n: setattr(n, "status", Status.ARCHIVED))
    ids = [n.id for n in nodes[:4]] + ["n_absent"]
    assert sorted(r[0] for r in store.index.missing_embeddings("fixed-3", ids=ids)) == [nodes[2].id, nodes[3].id]
    assert [r[0] for r in store.index.missing_embeddings("fixed-3", limit=1, ids=ids)] in ([nodes[2].id],
                                                                                           [nodes[3].id])
    everything = sorted(r[0] for r in store.index.missing_embeddings("fixed-3"))
    assert everything == sorted(n.id for n in nodes[2:])                     # without ids: every hot one missing
    many = [f"n_x{i:05x}" for i in range(1200)] + [nodes[5].id]             # past one query's bound parameters
    assert [r[0] for r in store.index.missing_embeddings("fixed-3", ids=many)] == [nodes[5].id]


def test_a_named_catch_up_embeds_only_those_lessons(layers: Layers) -> None:
    store = layers.project
    nodes = _nodes(store, 4)
    db = str(store.index_db_path)
    warm = server.Warm()
    embed = {"provider": "auto"}
    warm.embedders[warm._key(embed)] = _Fixed()
    assert warm.catch_up_now(embed, [db], {db: [nodes[2].id]})

    def done() -> bool:
        return db not in warm.catching_up and not store.index.missing_embeddings("fixed-3", ids=[nodes[2].id])

    wait_until(done, "the named lesson to be embedded")
    wait_until(lambda: db not in warm.catching_up, "the catch-up thread to end")
    left = sorted(r[0] for r in store.index.missing_embeddings("fixed-3"))
    assert left == sorted(n.id for n in nodes if n is not nodes[2])          # the others: the periodic scan's
    assert warm.catch_up_now(embed, [db], {db: []})                          # nothing named here: nothing started
    assert db not in warm.catching_up
    assert warm.catch_up_now(embed, [db])                                    # no ids: everything missing
    wait_until(lambda: db not in warm.catching_up and not store.index.missing_embeddings("fixed-3"),
               "every lesson to be embedded")


def test_a_catch_up_message_ids_of_another_shape_mean_all() -> None:
    assert server._ids_of({"op": "catch_up"}) is None
    assert server._ids_of({"ids": ["n_1"]}) is None
    assert server._ids_of({"ids": {"a.db": "n_1"}}) is None
    assert server._ids_of({"ids": {"a.db": [1]}}) is None
    assert server._ids_of({"ids": {"a.db": ["n_1"], "b.db": []}}) == {"a.db": ["n_1"], "b.db": []}


def test_add_names_its_new_lesson_and_nothing_for_a_duplicate(layers: Layers, monkeypatch) -> None:
    asked: list[dict | None] = []
    monkeypatch.setattr(client, "catch_up", lambda embed, dbs, timeout=0, ids=None: asked.append(ids) or True)
    text = "Always pin the linter version in the nightly job."
    result = teach_module.teach(layers, text)
    assert result.node is not None and result.store is not None
    db = str(result.store.index_db_path)
    assert asked[-1] is not None and asked[-1][db] == [result.node.id]
    assert all(v == [] for k, v in asked[-1].items() if k != db)
    again = teach_module.teach(layers, text)
    assert again.action.value == "duplicate" and asked[-1] is None   # not a new lesson: the whole catch-up


def test_a_periodic_catch_up_skips_its_scan_while_the_index_tags_are_those_it_found_complete_at(
        layers: Layers, monkeypatch) -> None:
    from rose.store.index import Index

    store = layers.project
    nodes = _nodes(store, 4)
    db = str(store.index_db_path)
    warm = server.Warm()
    embedder = _Fixed()
    scans: list[None] = []
    scan = Index.missing_embeddings

    def counted(self, model, limit=10_000, ids=None):
        if ids is None:
            scans.append(None)
        return scan(self, model, limit=limit, ids=ids)

    monkeypatch.setattr(Index, "missing_embeddings", counted)

    def periodic() -> int:
        before = len(scans)
        warm.catch_up(db, embedder)
        wait_until(lambda: db not in warm.catching_up, "the catch-up thread to end")
        return len(scans) - before

    assert periodic() == 1 and not store.index.missing_embeddings("fixed-3")   # embedded: not yet known complete
    assert periodic() == 1                        # a scan that finds nothing lacking: its tags are kept
    assert periodic() == 0                        # nothing written since: no scan
    assert periodic() == 0
    store.save_many([Node(id="n_c99999", family="f", title="a new lesson", body="new body")])
    assert periodic() == 1 and not store.index.missing_embeddings("fixed-3", ids=["n_c99999"])
    assert periodic() == 1 and periodic() == 0
    store.update(nodes[1].id, lambda n: setattr(n, "body", "an edited body"))     # its vector is stale now
    assert store.index.missing_embeddings("fixed-3", ids=[nodes[1].id])
    assert periodic() == 1 and not store.index.missing_embeddings("fixed-3")
    assert periodic() == 1 and periodic() == 0
    store.index.conn.execute("DELETE FROM embeddings WHERE node_id = ?", (nodes[2].id,))   # a vector lost
    store.index.conn.commit()
    assert periodic() == 1 and not store.index.missing_embeddings("fixed-3")
