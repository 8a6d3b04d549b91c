"""Store.save_many against one-by-one saves, file by file, and when something fails in the middle of a batch: a disk
error while the batch's files are written, or a lesson that cannot be saved. Every batch saved before stays saved,
indexed and listed; the failing one is reported and leaves nothing behind; saved again, it lands whole. And what a
batch reads once for all its lessons (their index paths and usage folds) is read again when a usage catch-up in the
middle of the batch changes it."""
from __future__ import annotations

import errno
import os
import types
from pathlib import Path

import pytest

from rose.model import Node, Scope
from rose.store import Layers, Store, usage
from rose.store import atomic as atomic_module
from rose.store import store as store_module
from rose.store.atomic import TEMP_SUFFIX
from tests.support.gen_store import make_nodes
from tests.test_store_save_many_index import _bulk, _copy, _lessons, _second_round


def _record_files(store: Store) -> dict[str, bytes]:
    """Every lesson file of the store (hot and cold), by its path in the store."""
    return {p.relative_to(store.root).as_posix(): p.read_bytes()
            for folder in store.record_dirs if folder.is_dir() for p in sorted(folder.rglob("*.md"))}


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def test_bulk_saved_files_are_the_bytes_single_saves_write(layers: Layers, tmp_path: Path) -> None:
    lessons = _lessons()
    bulk = layers.project
    _bulk(bulk, lessons, 40)
    for batch in _second_round(lessons):
        bulk.save_many(batch)
    single = Store.create(tmp_path / "single" / ".rose", Scope.PROJECT)
    try:
        for node in lessons:
            single.save(_copy(node))
        for batch in _second_round(lessons):
            for node in batch:
                single.save(node)
        files = _record_files(bulk)
        assert len(files) == 150 and any(rel.startswith("archive/") for rel in files)
        assert files == _record_files(single)
    finally:
        single.close()


class _FailingWrites:
    """rose.store.atomic's `os`, but its `write` raises ENOSPC from the `after`-th call on (a full disk)."""

    def __init__(self, after: int) -> None:
        self.calls = 0
        self.after = after

    def bind(self) -> types.SimpleNamespace:
        def write(fd: int, data: bytes | memoryview) -> int:
            self.calls += 1
            if self.calls >= self.after:
                raise OSError(errno.ENOSPC, "No space left on device (injected)")
            return os.write(fd, data)

        proxy = types.SimpleNamespace(**{name: getattr(os, name) for name in dir(os) if not name.startswith("__")})
        proxy.write = write
        return proxy


def _assert_only(store: Store, saved: dict[str, bytes], ids: set[str]) -> None:
    """The store holds exactly the files of `saved` (byte for byte), its index and index.md exactly `ids`, no temp
    file, and a fresh process's sync finds nothing to catch up."""
    assert _record_files(store) == saved
    assert {row.id for row in store.rows()} == ids
    listed = store.index_md_path.read_text(encoding="utf-8")
    assert all(node_id in listed for node_id in ids)
    assert not _temps(store.root)
    store.close()
    fresh = Store(store.root, store.scope)
    try:
        assert fresh.sync().changed is False
    finally:
        fresh.close()


def test_a_disk_error_in_the_middle_of_a_batch_keeps_every_earlier_batch(layers: Layers,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    store = layers.project
    nodes = make_nodes(120)
    store.save_many(nodes[:40])
    store.save_many(nodes[40:80])
    saved, ids = _record_files(store), {n.id for n in nodes[:80]}
    failing = _FailingWrites(after=17)
    with monkeypatch.context() as patched, pytest.raises(OSError) as raised:   # (the test's isolation stays)
        patched.setattr(atomic_module, "os", failing.bind())
        store.save_many([_copy(n) for n in nodes[80:]])
    assert raised.value.errno == errno.ENOSPC and failing.calls == 17   # reported at the lesson that failed
    _assert_only(store, saved, ids)
    again = Store(store.root, store.scope)
    try:
        again.save_many([_copy(n) for n in nodes[80:]])   # the failed batch, saved again, lands whole
        assert {row.id for row in again.rows()} == {n.id for n in nodes}
        assert not _temps(again.root)
    finally:
        again.close()


def test_a_bad_lesson_in_the_middle_of_a_batch_keeps_every_earlier_batch(layers: Layers) -> None:
    store = layers.project
    nodes = make_nodes(60)
    store.save_many(nodes[:30])
    saved, ids = _record_files(store), {n.id for n in nodes[:30]}
    bad = Node(id="../escape", family="bulk", title="bad", body="x")
    with pytest.raises(ValueError, match="id grammar"):
        store.save_many(nodes[30:45] + [bad] + nodes[45:])
    assert not (store.root.parent / "escape.md").exists()
    _assert_only(store, saved, ids)


def _bump(node_id: str) -> dict:
    return {"rid": "u" + os.urandom(8).hex(), "id": node_id, "at": usage.now_at(), "sum": {"use_count": 3}}


@pytest.mark.parametrize("bulk", [True, False], ids=["save_many", "one_by_one"])
def test_usage_caught_up_in_the_middle_of_a_batch_is_what_the_next_lessons_are_saved_against(
        layers: Layers, monkeypatch: pytest.MonkeyPatch, bulk: bool) -> None:
    """Another writer's usage record of a lesson appears while the batch is being saved (before the lesson's
    turn): the lesson is saved against the fold that holds it, not the one the batch read at its start. Both
    ways of saving end alike: the save sets the lesson's use_count to the value it carries (5), so the bump is
    written off by a record of -3; a save against the stale fold would leave 8."""
    store = layers.project
    first, later, other = make_nodes(3)
    later.use_count = 5
    store.save(_copy(later))
    assert store.index.usage_state(later.id)["sum"]["use_count"] == 5
    real = store_module.redact_node

    def redact_and_bump(node: Node) -> Node:
        if node.id == first.id:   # the batch's first lesson: its fold was read already
            usage.append(store.usage_path, [_bump(later.id)])
        return real(node)

    monkeypatch.setattr(store_module, "redact_node", redact_and_bump)
    batch = [_copy(first), _copy(later), _copy(other)]
    if bulk:
        store.save_many(batch)
    else:
        for node in batch:
            store.save(node)
    assert store.index.usage_state(later.id)["sum"]["use_count"] == 5
    assert store.get(later.id).use_count == 5


def test_batches_splice_a_trusted_index_md_in_memory_to_exactly_the_full_rewrite(
        layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    """index.md still the file rose last wrote: each batch finds its lines' places by bisections over the bytes
    read once (Store._index_md_places) and writes the result in one piece; never the whole rewrite, never the
    read path that drops a hand-edited file's lines one by one (_without_lines_of). Lessons new and listed, moved
    between families, retitled, archived and restored, an id twice, in batches of every size around _FIND_EACH."""
    import random

    from rose.model import Status
    from rose.store.store import _FIND_EACH
    from tests.support.index_md import full_rewrite

    store = layers.project
    rng = random.Random(21)
    families = ["b", "a", "zz", "a b", "ünï", "a-b"]

    def lesson(i: int) -> Node:
        return Node(id=store.new_id(), family=rng.choice(families), title=f"t|{i}\nx", body=f"body {i}",
                    gist=f"g | {i}", tags=["x"], level=rng.choice([0, 1, 2]))

    saved = [lesson(i) for i in range(200)]
    store.save_many(saved)
    whole: list[int] = []
    untrusted: list[int] = []
    real_whole, real_drop = Store._write_index_md, store_module._without_lines_of
    monkeypatch.setattr(Store, "_write_index_md", lambda self: (whole.append(1), real_whole(self))[1])
    monkeypatch.setattr(store_module, "_without_lines_of", lambda *a: (untrusted.append(1), real_drop(*a))[1])
    for step, size in enumerate([_FIND_EACH + 1, 40, 150, _FIND_EACH + 3, 90]):
        batch = [lesson(1000 * step + i) for i in range(size // 2)]
        for node in rng.sample(saved, size - len(batch)):
            node.title = f"retitled {step} {node.id}"
            if rng.random() < 0.3:
                node.family = rng.choice(families)
            if rng.random() < 0.2:
                node.status = Status.ACTIVE if node.status is Status.ARCHIVED else Status.ARCHIVED
            batch.append(node)
        batch.append(batch[0])   # one id twice: the batch lands its first save, index.md is spliced once
        rng.shuffle(batch)
        store.save_many(batch)
        saved += batch[:size // 2]
        assert whole == [] and untrusted == [], f"batch {step}"
        assert store.index_md_path.read_bytes() == full_rewrite(store), f"batch {step}"
        with store.lock():   # put back as rose wrote it, with its stamp (full_rewrite's own write undid it)
            real_whole(store)
        whole.clear()   # full_rewrite's own


def test_the_batch_bisection_finds_each_place_one_bisection_would() -> None:
    import random

    from rose.store.store import _index_md_key, _index_md_place, _index_md_places

    rng = random.Random(4)
    for trial in range(40):
        keys = sorted({(rng.choice([b"a", b"b", b"zz"]), -rng.randint(0, 2), b"n_%06x" % rng.randrange(5000))
                       for _ in range(rng.randint(0, 300))})
        taken = rng.sample(keys, len(keys) // 2)
        listed = sorted(taken)
        data = b"head\n\n" + b"".join(b"%s | %s | L%d | t | x | g | p\n" % (k[2], k[0], -k[1]) for k in listed)
        assert [_index_md_key(line) for line in data.split(b"\n")[2:-1]] == listed
        wanted = sorted(set(keys) - set(taken)) if trial % 2 else sorted(taken)
        assert _index_md_places(data, 6, len(data), wanted) == [_index_md_place(data, 6, len(data), k) for k in wanted]


def test_a_batch_names_its_temps_as_every_writer_does(tmp_path: Path) -> None:
    """`.<name>.<pid>.<random>.tmp`, each distinct: a killed batch's temps are recognised as stray by their pid."""
    from rose.store.atomic import FileBatch, _writer_pid, clean_stray_temps

    batch = FileBatch()
    for i in range(20):
        batch.write_text(tmp_path / "f" / f"n{i % 3}.md" if i % 2 else str(tmp_path / "f" / f"m{i}.md"), "x")
    temps = _temps(tmp_path)
    assert len(temps) == 20 and len({t.name for t in temps}) == 20
    assert all(t.name.startswith(".") and _writer_pid(t.name) == os.getpid() for t in temps)
    assert clean_stray_temps(tmp_path) == 0   # this process is alive: its temps are not stray
    batch.abort()
    assert not _temps(tmp_path)
