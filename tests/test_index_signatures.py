"""Every command sees a hand edit at once, while a folder whose files are as they were is not compared row by row
(rose.store.index: one signature per node folder). Each change a person (or git) can make to the files is made
here behind rose's back, and the next command, a fresh process's view (a new Store on the same folder), sees it."""
from __future__ import annotations

import os
import shutil
import sqlite3

from rose import report
from rose.model import Node, Scope
from rose.store import Layers, Store
from rose.store.index import SIGNATURES


def _store(layers: Layers) -> Store:
    store = layers.project
    store.save_many([Node(id=f"n_sig{i:03d}", family=("alpha", "beta")[i % 2], title=f"lesson {i}",
                          body=f"Body of lesson {i}.") for i in range(10)])
    store.sync()
    return store


def _fresh(store: Store) -> Store:
    """The next command: another Store (its own connection) on the same files."""
    return Store(store.root, Scope.PROJECT)


def _titles(store: Store) -> dict[str, str]:
    return {r.id: r.title for r in store.rows()}


def test_an_edit_in_place_is_seen_though_no_folder_changed(layers: Layers) -> None:
    store = _store(layers)
    path = store.root / "nodes" / "alpha" / "n_sig002.md"
    folder_mtime = os.stat(path.parent).st_mtime_ns
    before = os.stat(path)
    text = path.read_text(encoding="utf-8").replace("title: lesson 2", "title: edited by hand")
    with open(path, "r+", encoding="utf-8") as handle:   # in place: the same inode, no rename
        handle.write(text)
        handle.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))   # a later write, whatever the clock's tick
    assert os.stat(path.parent).st_mtime_ns == folder_mtime and os.stat(path).st_ino == before.st_ino
    fresh = _fresh(store)
    report_ = fresh.sync()
    assert report_.updated == 1 and _titles(fresh)["n_sig002"] == "edited by hand"


def test_a_new_a_deleted_and_a_renamed_file_are_each_seen_by_the_next_command(layers: Layers) -> None:
    store = _store(layers)
    nodes = store.root / "nodes"
    shutil.copy(nodes / "alpha" / "n_sig000.md", nodes / "beta" / "n_sig100.md")
    text = (nodes / "beta" / "n_sig100.md").read_text(encoding="utf-8").replace("n_sig000", "n_sig100").replace(
        "family: alpha", "family: delta")
    (nodes / "beta" / "n_sig100.md").write_text(text, encoding="utf-8")
    os.unlink(nodes / "alpha" / "n_sig004.md")
    (nodes / "gamma").mkdir()
    os.rename(nodes / "beta" / "n_sig003.md", nodes / "gamma" / "n_sig003.md")
    fresh = _fresh(store)
    fresh.sync()
    rows = {r.id: r.path for r in fresh.rows()}
    assert "n_sig100" in rows and "n_sig004" not in rows
    assert rows["n_sig003"] == "nodes/gamma/n_sig003.md" and len(rows) == 10
    assert not fresh.index.problems()
    # and what a command prints says so: status counts by family
    assert report.status(Layers.discover(store.root.parent)).families == {"alpha": 4, "beta": 5, "delta": 1}


def test_a_folder_removed_whole_and_rows_no_folder_holds_are_dropped(layers: Layers) -> None:
    store = _store(layers)
    shutil.rmtree(store.root / "nodes" / "beta")
    fresh = _fresh(store)
    assert fresh.sync().removed == 5 and sorted(_titles(fresh)) == [f"n_sig{i:03d}" for i in range(0, 10, 2)]
    # an index written before signatures (or by hand): a row for a file that no folder lists is still found
    conn = sqlite3.connect(store.index_db_path)
    conn.execute("INSERT INTO files(path, mtime_ns, size, node_id, problem) VALUES ('nodes/zeta/n_x.md', 1, 1, NULL,"
                 " 'stale')")
    conn.commit()
    conn.close()
    again = _fresh(store)
    assert again.sync().removed == 1 and not again.index.problems()


def test_unchanged_folders_are_not_compared_row_by_row(layers: Layers, monkeypatch) -> None:
    store = _store(layers)
    (store.root / "nodes" / "alpha" / "n_sig006.md").write_text(
        (store.root / "nodes" / "alpha" / "n_sig006.md").read_text(encoding="utf-8").replace("lesson 6", "six"),
        encoding="utf-8")
    fresh = _fresh(store)
    asked: list[list[str] | None] = []
    known = fresh.index._known
    monkeypatch.setattr(fresh.index, "_known", lambda prefixes: asked.append(
        None if prefixes is None else list(prefixes)) or known(asked[-1]))
    assert fresh.sync().updated == 1
    assert asked == [["nodes/alpha/"]] and _titles(fresh)["n_sig006"] == "six"
    signatures = fresh.index.conn.execute("SELECT value FROM meta WHERE key = ?", (SIGNATURES,)).fetchone()[0]
    assert "nodes/alpha/" in signatures and "nodes/beta/" in signatures


def test_a_problem_in_an_unchanged_folder_is_still_reported(layers: Layers) -> None:
    store = _store(layers)
    (store.root / "nodes" / "beta" / "broken.md").write_text("no frontmatter here\n", encoding="utf-8")
    assert [rel for rel, _why in _fresh(store).sync().problems] == ["nodes/beta/broken.md"]
    assert [rel for rel, _why in _fresh(store).sync().problems] == ["nodes/beta/broken.md"]   # skipped, still said


def test_an_edit_in_place_of_the_same_size_one_nanosecond_later_is_seen(layers: Layers) -> None:
    """The least a hand edit can change: the same number of bytes, the mtime moved by 1 ns, no folder touched."""
    store = _store(layers)
    path = store.root / "nodes" / "beta" / "n_sig005.md"
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    assert "title: lesson 5" in text
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("title: lesson 5", "title: lesson 9"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    after = os.stat(path)
    assert after.st_size == before.st_size and after.st_mtime_ns == before.st_mtime_ns + 1
    fresh = _fresh(store)
    assert fresh.sync().updated == 1 and _titles(fresh)["n_sig005"] == "lesson 9"


def test_a_file_of_the_same_size_and_mtime_under_another_name_changes_the_signature(layers: Layers) -> None:
    """A rename within a folder (git checkout of another branch can do it) keeps every mtime and size."""
    store = _store(layers)
    alpha = store.root / "nodes" / "alpha"
    os.rename(alpha / "n_sig000.md", alpha / "n_sig000x.md")
    text = (alpha / "n_sig000x.md").read_text(encoding="utf-8").replace("title: lesson 0", "title: lesson Z")
    st = os.stat(alpha / "n_sig000x.md")
    (alpha / "n_sig000x.md").write_text(text, encoding="utf-8")
    os.utime(alpha / "n_sig000x.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(alpha / "n_sig000x.md").st_size == st.st_size
    fresh = _fresh(store)
    fresh.sync()
    assert {r.id: r.path for r in fresh.rows()}["n_sig000"] == "nodes/alpha/n_sig000x.md"
    assert _titles(fresh)["n_sig000"] == "lesson Z"


def test_a_file_deleted_between_the_listing_and_its_stat_is_skipped(tmp_path) -> None:
    """A lesson removed while a folder is read (a checkout, another process's delete) is left out of this scan, as
    the next listing would leave it out, and the others are still stat-ed."""
    from rose.store.index import _still_there

    folder = tmp_path / "alpha"
    folder.mkdir()
    for name in ("n_a.md", "n_b.md", "n_c.md"):
        (folder / name).write_text(name, encoding="utf-8")
    with os.scandir(folder) as listed:
        entries = sorted(listed, key=lambda e: e.name)
    os.unlink(folder / "n_b.md")
    kept, stats = _still_there(entries)
    assert [e.name for e in kept] == ["n_a.md", "n_c.md"]
    assert [st.st_size for st in stats] == [6, 6]


def test_an_edit_in_place_is_seen_when_rows_outside_the_folders_send_the_sync_to_compare_everything(
        layers: Layers) -> None:
    """A folder as it was keeps no stats past its signature; when the index holds a row no folder lists, the sync
    lists the folders again and compares them whole: the edit in place is seen, the folder as it was keeps every row,
    and only the stray row is dropped."""
    store = _store(layers)
    conn = sqlite3.connect(store.index_db_path)
    conn.execute("INSERT INTO files(path, mtime_ns, size, node_id, problem) VALUES ('nodes/zeta/n_y.md', 1, 1, NULL,"
                 " 'stale')")
    conn.commit()
    conn.close()
    path = store.root / "nodes" / "alpha" / "n_sig002.md"
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as handle:   # in place: no folder changes
        handle.write(text.replace("title: lesson 2", "title: two by hand"))
        handle.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    fresh = _fresh(store)
    report_ = fresh.sync()
    assert (report_.updated, report_.removed, report_.added, report_.files) == (1, 1, 0, 10)
    titles = _titles(fresh)
    assert titles["n_sig002"] == "two by hand" and len(titles) == 10   # beta's five rows are all still there
    assert not fresh.index.problems() and _fresh(store).sync().changed is False
