"""What the index holds after a bulk import (Store.save_many, its rows written a batch at a time by
Index.upsert_many) is what a rebuild from the same files gives, and what saving the same lessons one by one gives:
table by table, with cold records, usage, secrets, unicode, YAML that must be quoted, a family change, a move into
the archive, an unchanged re-save and an id saved twice in one batch."""
from __future__ import annotations

import pytest

from rose.model import Node, Stats, Status
from rose.store import Layers, Store
from rose.store import index as index_module
from tests.support.gen_store import make_nodes
from tests.test_index_bulk_rebuild import _tables

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
ODD = ["- looks like a list", "# looks like a comment", "key: value", "yes", "null", "'quoted' \"twice\"",
       "ünïcödé ✓ 漢字 🦀", "ends with a colon:", "  padded  ", "---", "tab\there", "line\nbreak"]


def _copy(node: Node) -> Node:
    """A fresh node of the same fields: a save redacts the one it is given in place."""
    return Node.from_dict(node.to_dict(), node.body)


def _lessons() -> list[Node]:
    nodes = make_nodes(150)
    for i, node in enumerate(nodes):
        if i % 5 == 0:
            node.title = ODD[i // 5 % len(ODD)]
            node.tags = [*node.tags, ODD[(i // 5 + 1) % len(ODD)].strip() or "x"]
        if i % 7 == 0:
            node.body += f"\n\nexport GITHUB_TOKEN={TOKEN}\n---\nmore after a fence line\n"
        if i % 9 == 0:
            node.stats = Stats(attempts=i % 4 + 1, successes=i % 3)
            node.use_count = i % 5
        if i % 11 == 0:
            node.status = Status.ARCHIVED   # saved straight into the archive
        if i % 13 == 0:
            node.gist = "ñ | pipes | and\nnewlines"
    return nodes


def _second_round(nodes: list[Node]) -> list[list[Node]]:
    """Batches that change what the first saved: a family change (the old file goes), a move into the archive, a
    usage bump, an unchanged re-save, and one id twice in a batch."""
    changed = []
    for i, node in enumerate(nodes[:60]):
        copy = _copy(node)
        if i % 4 == 0:
            copy.family = "moved-" + copy.family
        elif i % 4 == 1 and copy.status is not Status.ARCHIVED:
            copy.status = Status.ARCHIVED
        elif i % 4 == 2:
            copy.stats.attempts += 2
        changed.append(copy)
    twice = _copy(nodes[70])
    twice.title = "saved twice in one batch"
    return [changed[:30] + [twice, _copy(twice)] + changed[30:]]


def _bulk(store: Store, nodes: list[Node], batch: int) -> None:
    for start in range(0, len(nodes), batch):
        store.save_many([_copy(n) for n in nodes[start:start + batch]])


def _without_mtimes(tables: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    """Two stores' files were written at different moments: their mtimes differ, nothing else may."""
    return {**tables, "files": [(p, size, node, problem) for p, _m, size, node, problem in tables["files"]]}


@pytest.fixture
def lessons() -> list[Node]:
    return _lessons()   # made once a test: a node's `created` is the moment it was made


@pytest.fixture
def imported(layers: Layers, lessons: list[Node]) -> Store:
    store = layers.project
    nodes = lessons
    _bulk(store, nodes, 40)
    for batch in _second_round(nodes):
        store.save_many(batch)
    return store


def test_a_bulk_import_indexes_what_a_rebuild_gives(imported: Store) -> None:
    after_import = _tables(imported)
    assert after_import["cold_fts"] and after_import["fts_match"] and after_import["nodes_fts"]
    assert any(row[0].startswith("nodes/moved-") for row in after_import["files"])
    assert TOKEN not in repr(after_import)
    assert "saved twice in one batch" in repr(after_import["nodes"])
    imported.rebuild_index()
    assert _tables(imported) == after_import


def test_a_bulk_import_indexes_what_saving_one_by_one_does(imported: Store, lessons: list[Node], tmp_path) -> None:
    from rose.model import Scope

    one_by_one = Store.create(tmp_path / "single" / ".rose", Scope.PROJECT)
    try:
        nodes = lessons
        for node in nodes:
            one_by_one.save(_copy(node))
        for batch in _second_round(nodes):
            for node in batch:
                one_by_one.save(node)
        assert _without_mtimes(_tables(one_by_one)) == _without_mtimes(_tables(imported))
        assert one_by_one.index_md_path.read_bytes() == imported.index_md_path.read_bytes()
    finally:
        one_by_one.close()


def test_a_batch_writes_its_rows_a_table_at_a_time(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    store = layers.project
    calls: list[int] = []
    real = index_module.Index.upsert_many
    monkeypatch.setattr(index_module.Index, "upsert_many",
                        lambda self, items: (calls.append(len(items)), real(self, items))[1])
    monkeypatch.setattr(index_module.Index, "upsert", lambda *a, **k: pytest.fail("a row written one by one"))
    store.save_many(make_nodes(25))
    assert calls == [25]
    assert store.index.count() == 25


def test_one_id_twice_in_one_call_is_refused(layers: Layers) -> None:
    store = layers.project
    node = make_nodes(1)[0]
    with pytest.raises(ValueError):
        store.index.upsert_many([(node, "nodes/a/x.md", 1, 1, None), (node, "nodes/a/x.md", 1, 1, None)])
