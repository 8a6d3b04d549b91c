"""The warm helper's inotify watch (rose.warm.watch): with no event under a store since its last full scan, a sync
stats no lesson file; every change made just before a sync is seen (an edit in place, a new file, a deleted one,
a rename, a new family folder); an overflow, a watch that failed to add or a filesystem not known to be local
means the full stat path; the watch's descriptor is closed with it."""
from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from rose.model import Node
from rose.store import Layers, Store, index
from rose.warm import watch as watch_mod
from rose.warm.watch import IN_Q_OVERFLOW, Watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch):
    w = Watch.open()
    if w.closed:
        pytest.skip("no inotify here")
    monkeypatch.setattr(w._libc, "fs_type", lambda path: 0xEF53)   # the test's tmp may be any filesystem
    monkeypatch.setattr(index, "WATCH", w)
    yield w
    w.close()


class _Counting:
    """Counts the full scans (Index._sync) a sync does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.scans = 0
        real = index.Index._sync

        def counted(inner, *args, **kwargs):
            self.scans += 1
            return real(inner, *args, **kwargs)

        monkeypatch.setattr(index.Index, "_sync", counted)


def _store(layers: Layers) -> tuple[Store, Node]:
    store = layers.project
    node = Node(id=store.new_id(), family="f", title="Retry policy", body="Back off and retry the upload.")
    store.save(node)
    store.sync()   # a full scan under the watch: armed
    return store, node


def _fresh_search(store: Store, word: str) -> list:
    """What a served command's own Store sees: a sync, then the index."""
    fresh = Store(store.root, store.scope)
    try:
        fresh.sync()
        return fresh.index.search(word)
    finally:
        fresh.close()


def test_a_quiet_store_is_not_scanned(layers: Layers, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    store, _node = _store(layers)
    count = _Counting(monkeypatch)
    assert _fresh_search(store, "upload")
    report = store.sync()
    assert count.scans == 0 and report.files == 1
    assert store.sync(quick=True).files == 1   # the prompt's sync too


def test_an_edit_in_place_is_seen(layers: Layers, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    store, node = _store(layers)
    path = store.root / str(store.index.path_of(node.id))
    st = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("Back off", "Zeppelin: back off"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))   # even an edit that keeps the mtime: the event says so
    count = _Counting(monkeypatch)
    assert _fresh_search(store, "zeppelin")
    assert count.scans == 1


def test_a_new_file_a_deleted_one_and_a_rename_are_seen(layers: Layers, watch: Watch) -> None:
    store, _node = _store(layers)
    other = Node(id=store.new_id(), family="f", title="Zeppelin mooring", body="Tie the zeppelin to the mast.")
    store.save(other)
    assert _fresh_search(store, "zeppelin")
    path = store.root / str(store.index.path_of(other.id))
    renamed = path.with_name("renamed-" + path.name)
    os.rename(path, renamed)
    fresh = Store(store.root, store.scope)
    fresh.sync()
    assert fresh.index.path_of(other.id) == str(renamed.relative_to(store.root))
    fresh.close()
    renamed.unlink()
    assert _fresh_search(store, "zeppelin") == []
    assert _fresh_search(store, "upload")


def test_a_new_family_folder_is_seen_and_watched(layers: Layers, watch: Watch) -> None:
    store, _node = _store(layers)
    family = store.nodes_dir / "newfam"
    family.mkdir()
    donor = Node(id=store.new_id(), family="f", title="Zeppelin hangar", body="The hangar holds the zeppelin.")
    text_path = store.root / "donor.tmp"
    other = Store(store.root, store.scope)
    other.save(donor)
    saved = store.root / str(other.index.path_of(donor.id))
    other.close()
    text_path.write_bytes(saved.read_bytes())
    saved.unlink()
    assert _fresh_search(store, "zeppelin") == []
    os.rename(text_path, family / saved.name)   # a file made in the folder after the scan that added its watch
    assert _fresh_search(store, "zeppelin")
    assert str(family) in watch._stores[os.path.realpath(store.root)].folders


def test_an_overflow_falls_back_to_the_stat_path(layers: Layers, watch: Watch,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    store, _node = _store(layers)
    watch._apply(watch_mod._EVENT.pack(-1, IN_Q_OVERFLOW, 0, 0))   # what the kernel queues when events were lost
    count = _Counting(monkeypatch)
    store.sync()
    store.sync()
    assert count.scans == 2 and not watch.healthy


def test_a_watch_that_fails_to_add_falls_back(layers: Layers, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, path: str, mask: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(watch._libc, "add_watch", full)
    store, _node = _store(layers)
    count = _Counting(monkeypatch)
    store.sync()
    store.sync()
    assert count.scans == 2


def test_a_filesystem_not_known_local_is_not_trusted(layers: Layers, watch: Watch,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch._libc, "fs_type", lambda path: 0x6969)   # NFS
    store, _node = _store(layers)
    count = _Counting(monkeypatch)
    store.sync()
    assert count.scans == 1


def test_another_process_scan_or_a_new_index_is_not_vouched_for(layers: Layers, watch: Watch,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    store, _node = _store(layers)
    store.index.conn.execute("UPDATE meta SET value = '1' WHERE key = 'full_scan'")
    count = _Counting(monkeypatch)
    store.sync()
    assert count.scans == 1
    store.sync()
    assert count.scans == 1   # re-armed by that scan


def test_off_linux_or_without_libc_there_is_no_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch_mod, "load", lambda: None)
    w = Watch.open()
    assert w.closed and not w.healthy
    assert w.arm(Path("/"), []) is None and not w.quiet(Path("/"), "0")


def _inotify_fds() -> int:
    fds = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            fds += os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify"
        except OSError:
            pass
    return fds


def test_the_watch_is_closed_with_it() -> None:
    before = _inotify_fds()
    w = Watch.open()
    if w.closed:
        pytest.skip("no inotify here")
    assert _inotify_fds() == before + 1
    w.close()
    assert _inotify_fds() == before and w.closed and not w.quiet(Path("/"), "0")
