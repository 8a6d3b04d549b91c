"""FileBatch.write_later: a batch's temp files written by its writer thread land exactly as write_text's would, a
write that fails is raised to the caller and leaves nothing behind, and the thread never outlives the batch."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from rose.model import Node
from rose.store import Layers
from rose.store import atomic
from rose.store.atomic import TEMP_SUFFIX, FileBatch


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def _writers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rose-file-batch"]


def test_files_written_later_land_whole_with_the_stat_the_index_records(tmp_path: Path) -> None:
    batch = FileBatch()
    texts = {tmp_path / f"f{i % 3}" / f"x{i}.md": f"lesson {i} ünïcode\n" * (i + 1) for i in range(60)}
    for path, text in texts.items():
        batch.write_later(path, text.encode())
    stats = {path: batch.stat(path) for path in texts}
    assert not any(path.exists() for path in texts)   # nothing in place before the commit
    batch.commit()
    assert not _writers() and not _temps(tmp_path)
    for path, text in texts.items():
        assert path.read_text() == text
        st = os.stat(path)
        assert (st.st_mtime_ns, st.st_size, st.st_ino) == (stats[path].st_mtime_ns, stats[path].st_size,
                                                           stats[path].st_ino)


def test_a_failed_write_is_raised_and_the_abort_leaves_every_target_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = tmp_path / "d" / "kept.md"
    kept.parent.mkdir()
    kept.write_text("before")
    real = atomic._temp_beside

    def failing(path: Path) -> tuple[int, str]:
        if path.name == "x7.md":
            raise OSError(28, "No space left on device")
        return real(path)

    monkeypatch.setattr(atomic, "_temp_beside", failing)
    batch = FileBatch()
    batch.write_later(kept, b"after")
    for i in range(20):
        batch.write_later(tmp_path / "d" / f"x{i}.md", b"new")
    with pytest.raises(OSError, match="No space left"):
        batch.commit()
    batch.abort()
    assert kept.read_text() == "before"
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["kept.md"]   # no target, no temp
    assert not _writers()


def test_a_save_many_whose_writer_fails_writes_nothing(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    store = layers.project
    nodes = [Node(id=store.new_id(), family="bulk", title=f"t{i}", body=f"b{i}") for i in range(30)]
    real = atomic._temp_beside
    bad = nodes[17].id

    def failing(path: Path) -> tuple[int, str]:
        if path.stem == bad:
            raise OSError(5, "Input/output error")
        return real(path)

    monkeypatch.setattr(atomic, "_temp_beside", failing)
    with pytest.raises(OSError, match="Input/output"):
        store.save_many(nodes)
    assert store.index.count() == 0
    assert not list(store.nodes_dir.rglob("*.md")) and not _temps(store.root)
    assert not _writers()
    monkeypatch.setattr(atomic, "_temp_beside", real)
    store.save_many(nodes)   # the same batch again, the disk healthy: all of it
    assert store.index.count() == 30 and not _writers()
