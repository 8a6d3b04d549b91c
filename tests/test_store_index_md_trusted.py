"""index.md spliced without being read: a save or update whose index.md is still the file rose last wrote (its
stamp in the index) finds the old line and the new place by bisection over a few blocks and writes the new file
as kernel-copied ranges of the old one. Always exactly the full rewrite's text; any other file is read (or written
whole) as before."""
from __future__ import annotations

import errno
import os
import random

import pytest

from rose.model import Node, Status
from rose.store import Layers, Store
from rose.store import splice
from rose.store import store as store_module
from tests.support.index_md import full_rewrite

FAMILIES = ["b", "a", "zz", "a b", "ünï", "a-b", "a-b-c"]




def _reads(monkeypatch) -> list[int]:
    """Counts every whole read of index.md (the path a splice of a file rose did not write takes)."""
    reads: list[int] = []
    orig = store_module._read_fd
    monkeypatch.setattr(store_module, "_read_fd", lambda fd: (reads.append(1), orig(fd))[1])
    return reads


def _node(store: Store, rng: random.Random, i: int) -> Node:
    return Node(id=store.new_id(), family=rng.choice(FAMILIES), title=f"t|{i}\nx" + "é" * rng.randint(0, 3),
                body=f"body {i}", gist=f"g | {i} " + "y" * rng.randint(0, 300), tags=["x", "y"],
                level=rng.choice([0, 1, 2]))


def _restamp(store: Store) -> None:
    """index.md put back as rose wrote it, with its stamp recorded (what full_rewrite's write_bytes undid)."""
    with store.lock():
        store._write_index_md()


def test_random_saves_updates_archives_and_moves_splice_to_exactly_the_full_rewrite(layers: Layers,
                                                                                     monkeypatch) -> None:
    store = layers.project
    rng = random.Random(15)
    nodes = [_node(store, rng, i) for i in range(120)]
    store.save_many(nodes)
    whole: list[int] = []
    orig_whole = Store._write_index_md
    monkeypatch.setattr(Store, "_write_index_md", lambda self: (whole.append(1), orig_whole(self))[1])
    reads = _reads(monkeypatch)
    for step in range(160):
        op = rng.random()
        if op < 0.35:
            node = _node(store, rng, 1000 + step)
            store.save(node)
            nodes.append(node)
        else:
            target = rng.choice(nodes)

            def change(n: Node, op: float = op, step: int = step) -> None:
                if op < 0.5:
                    n.title = f"retitled {step} " + "ü" * rng.randint(0, 2)
                elif op < 0.65:
                    n.family = rng.choice(FAMILIES)    # a move to another family's folder and block
                elif op < 0.8:
                    n.level = rng.choice([0, 1, 2])
                elif op < 0.9:
                    n.status = Status.ARCHIVED if n.status is not Status.ARCHIVED else Status.ACTIVE
                else:
                    n.gist = f"new gist {step}"

            store.update(target.id, change)
        if step % 20 == 19:
            assert whole == [] and reads == [], f"by step {step}"   # every write a trusted splice
            assert store.index_md_path.read_bytes() == full_rewrite(store), f"after step {step}"
            _restamp(store)
            whole.clear()


def test_a_file_edited_by_hand_is_read_even_with_its_size_and_mtime_kept(layers: Layers, monkeypatch) -> None:
    store = layers.project
    rng = random.Random(3)
    nodes = [_node(store, rng, i) for i in range(30)]
    store.save_many(nodes)
    store.save(_node(store, rng, 50))        # stamps the file it writes
    path = store.index_md_path
    data = path.read_bytes()
    st = os.stat(path)
    victim = nodes[4]
    at = data.index(f"\n{victim.id} | ".encode()) + 1
    stray = f"{victim.id} | stale".encode()
    edited = data[:at] + stray + data[at + len(stray):]      # same size, the victim's line overwritten
    with open(path, "r+b") as handle:                        # in place: the same inode
        handle.write(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))      # the mtime put back: only the ctime tells
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns
    reads = _reads(monkeypatch)
    store.update(victim.id, lambda n: setattr(n, "title", "fixed"))
    assert reads == [1]                                       # not trusted: read as any file is
    text = path.read_bytes()
    assert b"stale" not in text and text == full_rewrite(store)


def test_a_line_not_where_the_index_says_means_the_file_is_read(layers: Layers, monkeypatch) -> None:
    store = layers.project
    rng = random.Random(8)
    nodes = [_node(store, rng, i) for i in range(20)]
    store.save_many(nodes)
    _restamp(store)
    reads = _reads(monkeypatch)
    wrong = {nodes[3].id: (b"no-such-family", 0, nodes[3].id.encode())}
    with store.lock():
        store._update_index_md(wrong)
    assert reads == [1] and store.index_md_path.read_bytes() == full_rewrite(store)


@pytest.mark.parametrize("way", ["copy_file_range", "sendfile", "read"])
def test_every_way_of_copying_writes_the_same_file(layers: Layers, monkeypatch, way: str) -> None:
    store = layers.project
    rng = random.Random(21)
    store.save_many([_node(store, rng, i) for i in range(60)])
    _restamp(store)
    ways = {"copy_file_range": splice._by_copy_file_range, "sendfile": splice._by_sendfile, "read": splice._by_read}
    if not hasattr(os, way) and way != "read":
        pytest.skip(f"no os.{way} here")
    used: list[str] = []

    def counted(src: int, dst: int, offset: int, length: int) -> int:
        used.append(way)
        return ways[way](src, dst, offset, length)

    monkeypatch.setattr(splice, "_WAYS", [counted, splice._by_read])   # the last resort stays behind it
    reads = _reads(monkeypatch)
    for i in range(5):
        store.save(_node(store, rng, 100 + i))
    assert reads == [] and store.index_md_path.read_bytes() == full_rewrite(store)
    assert used and (counted in splice._WAYS or way != "read")   # it copied (or said "not here" and gave way)


def test_a_way_of_copying_that_is_not_supported_gives_way_to_the_next(monkeypatch, tmp_path) -> None:
    calls: list[str] = []

    def unsupported(src: int, dst: int, offset: int, length: int) -> int:
        calls.append("first")
        raise OSError(errno.ENOSYS, "not here")

    monkeypatch.setattr(splice, "_WAYS", [unsupported, splice._by_read])
    source = tmp_path / "source"
    source.write_bytes(b"0123456789" * 1000)
    fd = os.open(source, os.O_RDONLY)
    try:
        splice.write_spliced(tmp_path / "out", [(5, 20), b"--", (9990, 10)], fd)
    finally:
        os.close(fd)
    assert (tmp_path / "out").read_bytes() == b"56789012345678901234--0123456789"
    assert calls == ["first"] and [splice._by_read] == splice._WAYS   # dropped, not tried again


def test_a_source_written_meanwhile_replaces_nothing(tmp_path) -> None:
    tmp_path = tmp_path / "folder"
    tmp_path.mkdir()
    source = tmp_path / "source"
    source.write_bytes(b"abc\n" * 100)
    target = tmp_path / "target"
    target.write_bytes(b"kept\n")
    fd = os.open(source, os.O_RDONLY)
    try:
        before = splice.stamp(os.fstat(fd))
        with open(source, "ab") as handle:
            handle.write(b"more\n")
        with pytest.raises(splice.SourceChanged):
            splice.write_spliced(target, [(0, 8)], fd, before)
    finally:
        os.close(fd)
    assert target.read_bytes() == b"kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source", "target"]   # no temp left behind


def test_the_file_view_reads_as_the_bytes_do(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(splice, "BLOCK", 7)   # many block edges in a small file
    rng = random.Random(4)
    data = bytes(rng.choice(b"ab\n") for _ in range(300))
    path = tmp_path / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        view = splice.FileView(fd, len(data))
        for _ in range(400):
            lo, hi = sorted(rng.randrange(0, len(data) + 1) for _ in range(2))
            assert view.find(b"\n", lo, hi) == data.find(b"\n", lo, hi)
            assert view.rfind(b"\n", lo, hi) == data.rfind(b"\n", lo, hi)
            assert view[lo:hi] == data[lo:hi]
        short = splice.FileView(fd, len(data) + 50)               # says longer than the file is
        with pytest.raises(splice.SourceChanged):
            short[len(data):len(data) + 50]
    finally:
        os.close(fd)
