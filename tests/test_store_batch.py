"""Bulk saves: Store.save_many lands a batch whole (one transaction, one flush) or not at all, exactly as saves."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.model import Node, Stats
from rose.store import Layers, Store
from rose.store.atomic import TEMP_SUFFIX, FileBatch


def _nodes(store: Store, n: int, family: str = "bulk") -> list[Node]:
    return [Node(id=store.new_id(), family=family, title=f"lesson {i}", body=f"Body of lesson {i}.", gist=f"g{i}")
            for i in range(n)]


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def test_a_batch_reads_back_exactly_like_single_saves(layers: Layers) -> None:
    store = layers.project
    batch = _nodes(store, 30)
    store.save_many(batch)
    for node in batch:
        got = store.get(node.id)
        assert (got.title, got.body, got.gist, got.family) == (node.title, node.body, node.gist, node.family)
    assert store.index.count() == 30
    assert not _temps(store.root)
    assert all(n.id in store.index_md_path.read_text() for n in batch)
    store.close()
    fresh = Store(store.root, store.scope)
    assert fresh.sync().changed is False   # the index holds each file's real mtime and size: nothing to catch up
    fresh.close()


def test_a_failing_batch_writes_nothing(layers: Layers) -> None:
    store = layers.project
    batch = _nodes(store, 5)
    bad = Node(id="../escape", family="bulk", title="bad", body="x")
    with pytest.raises(ValueError):
        store.save_many(batch[:3] + [bad] + batch[3:])
    assert store.index.count() == 0
    assert not list(store.nodes_dir.rglob("*.md"))
    assert not _temps(store.root)


def test_the_same_id_twice_in_a_batch_ends_as_two_saves_would(layers: Layers) -> None:
    store = layers.project
    [node] = _nodes(store, 1)
    store.save(node)
    first = Node(id=node.id, family="bulk", title="first", body="one", stats=Stats(successes=2))
    second = Node(id=node.id, family="moved", title="second", body="two", stats=Stats(successes=5))
    store.save_many([first, second])
    got = store.get(node.id)
    assert (got.title, got.body, got.family, got.stats.successes) == ("second", "two", "moved", 5)
    assert [p.parent.name for p in store.nodes_dir.rglob("*.md")] == ["moved"]   # the old family's file went


def test_a_moved_lesson_keeps_its_old_file_until_the_new_one_is_in_place(tmp_path: Path) -> None:
    old = tmp_path / "a" / "x.md"
    old.parent.mkdir()
    old.write_text("old")
    batch = FileBatch()
    batch.write_text(tmp_path / "b" / "x.md", "new")
    batch.unlink_after(old)
    assert old.read_text() == "old" and not (tmp_path / "b" / "x.md").exists()
    batch.commit()
    assert not old.exists() and (tmp_path / "b" / "x.md").read_text() == "new"
    assert not _temps(tmp_path)


def test_an_aborted_batch_leaves_every_target_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "t.md"
    target.write_text("before")
    batch = FileBatch()
    st = batch.write_text(target, "after, longer")
    assert target.read_text() == "before"
    assert st.st_size == len("after, longer")
    batch.abort()
    assert target.read_text() == "before" and not _temps(tmp_path)


def test_single_saves_keep_index_md_exactly_as_a_full_rewrite_would(layers: Layers) -> None:
    import random

    store = layers.project
    rng = random.Random(3)
    nodes = [Node(id=store.new_id(), family=rng.choice(["b", "a", "zz", "a b"]), title=f"t|{i}\nx",
                  body=f"body {i}", gist=f"g | {i}", tags=["x", "y"], level=rng.choice([0, 1, 2]))
             for i in range(40)]
    for node in nodes:
        store.save(node)
    moved = nodes[5]
    moved.family, moved.level = "a", 2
    store.save(moved)
    store.update(nodes[7].id, lambda n: setattr(n, "title", "retitled"))
    incremental = store.index_md_path.read_text(encoding="utf-8")
    with store.lock():
        store._write_index_md()
    assert incremental == store.index_md_path.read_text(encoding="utf-8")
    assert sum(ln.startswith(moved.id) for ln in incremental.splitlines()) == 1 and "retitled" in incremental


def test_a_hand_edited_index_md_is_written_whole_again(layers: Layers) -> None:
    store = layers.project
    store.save_many(_nodes(store, 3))
    store.index_md_path.write_text("my own notes\n", encoding="utf-8")
    [extra] = _nodes(store, 1)
    store.save(extra)
    text = store.index_md_path.read_text(encoding="utf-8")
    assert "my own notes" not in text and text.count("\nn_") + text.startswith("n_") == 4


def test_index_md_with_crlf_is_written_whole_again_not_spliced(layers: Layers) -> None:
    store = layers.project
    store.save_many(_nodes(store, 20))
    crlf = store.index_md_path.read_text(encoding="utf-8").replace("\n", "\r\n")
    store.index_md_path.write_text(crlf, encoding="utf-8", newline="")
    [extra] = _nodes(store, 1)
    extra.title = "naïve café ünïcode"
    store.save(extra)
    spliced = store.index_md_path.read_bytes()
    with store.lock():
        store._write_index_md()
    assert spliced == store.index_md_path.read_bytes()
    assert b"\r" not in spliced and "café".encode() in spliced and spliced.count(b"\nn_") == 21
