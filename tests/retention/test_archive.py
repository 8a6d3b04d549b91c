"""The cold archive as a store primitive: atomic renames, the catalog, and an index that knows what is cold from the
folder alone (rose.store.archive, Store.archive / restore / move)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from rose.learn.conflicts import resolve
from rose.model import Node, Scope, Status
from rose.store import Layers, Store, archive
from rose.store.frontmatter import render_node

from .helpers import lesson, lineage


def _files(store: Store) -> dict[str, bytes]:
    return {p.relative_to(store.root).as_posix(): p.read_bytes()
            for folder in store.record_dirs if folder.is_dir() for p in folder.rglob("*.md")}


def test_archiving_is_a_pure_rename_and_restoring_returns_the_same_bytes(layers: Layers) -> None:
    store = layers.project
    _top, _low = lineage(store, "n_top001", "n_low001")
    before = _files(store)
    assert store.archive(["n_top001", "n_low001"], "a test") == ["n_top001", "n_low001"]
    after = _files(store)
    assert sorted(after) == ["archive/lesson/n_low001.md", "archive/lesson/n_top001.md"]
    assert after["archive/lesson/n_low001.md"] == before["nodes/fam/n_low001.md"]      # byte-identical: a rename
    cold = store.get("n_low001")
    assert cold.status is Status.ARCHIVED and cold.archived_from is Status.SUPERSEDED
    assert store.restore(["n_top001", "n_low001"]) == ["n_top001", "n_low001"]
    assert _files(store) == before
    assert store.get("n_low001").status is Status.SUPERSEDED and store.get("n_top001").status is Status.ACTIVE


def test_the_catalog_lists_each_move_and_folds_to_what_is_cold(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001", tags=["redis"]), lesson("n_b00001")])
    store.archive(["n_a00001", "n_b00001"], "because")
    store.restore(["n_b00001"])
    lines = [json.loads(x) for x in store.catalog_path.read_text().splitlines()]
    assert [(x["op"], x["id"]) for x in lines] == [("archive", "n_a00001"), ("archive", "n_b00001"),
                                                   ("restore", "n_b00001")]
    assert lines[0]["because"] == "because" and lines[0]["tags"] == ["redis"] and lines[0]["preview"]
    assert lines[0]["path"] == "archive/lesson/n_a00001.md"
    assert list(archive.read(store.catalog_path)) == ["n_a00001"]
    assert archive.GITATTRIBUTES_LINE in (store.root / ".gitattributes").read_text()


def test_cold_records_leave_hot_search_index_md_and_embeddings(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001", "The cache lives in Redis db 2."), lesson("n_b00001", "Other text.")])
    store.index.set_embeddings("m", [("n_a00001", b"\0" * 8, store.index.conn.execute(
        "SELECT text_hash FROM nodes WHERE id='n_a00001'").fetchone()[0])])
    assert store.index.embedded_count("m") == 1
    store.archive(["n_a00001"], "t")
    assert store.index.search("redis") == []
    assert [i for i, _t, _s in store.index.cold_search("redis cache")] == ["n_a00001"]
    assert store.index.embedded_count("m") == 0
    assert [r[0] for r in store.index.missing_embeddings("m")] == ["n_b00001"]
    assert "n_a00001" not in store.index_md_path.read_text()
    assert store.index.servable_totals()[0] == 1


def test_a_rebuilt_index_knows_what_is_cold_from_the_folder_and_repairs_the_catalog(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001"), lesson("n_b00001")])
    store.archive(["n_a00001"], "t")
    store.catalog_path.unlink()                       # as if killed between the rename and the catalog line
    store.index_db_path.unlink()
    fresh = Store(store.root, Scope.PROJECT)
    fresh.rebuild_index()
    rows = {r.id: r for r in fresh.rows()}
    assert rows["n_a00001"].cold and rows["n_a00001"].status == "archived" and not rows["n_b00001"].cold
    assert list(archive.read(fresh.catalog_path)) == ["n_a00001"]
    fresh.close()


def test_a_move_made_outside_rose_is_seen_without_a_duplicate_id(layers: Layers) -> None:
    """A pull that brings a teammate's archive moves (or `git mv`) renames files under the index."""
    store = layers.project
    store.save(lesson("n_a00001"))
    store.sync()
    dest = store.archive_dir / "lesson" / "n_a00001.md"
    dest.parent.mkdir(parents=True)
    os.rename(store.nodes_dir / "fam" / "n_a00001.md", dest)
    report = store.sync()
    assert report.problems == []
    assert store.get("n_a00001").status is Status.ARCHIVED
    archive.reconcile(store)
    assert list(archive.read(store.catalog_path)) == ["n_a00001"]


def test_a_legacy_archived_file_outside_the_archive_moves_in_when_saved(layers: Layers) -> None:
    store = layers.project
    node = lesson("n_old001", status=Status.ARCHIVED)
    path = store.nodes_dir / "fam" / "n_old001.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_node(node), encoding="utf-8")
    store.sync()
    assert store.index.rows_by_id(["n_old001"])["n_old001"].status == "archived"
    assert store.archive(["n_old001"], "legacy") == ["n_old001"]
    assert (store.archive_dir / "lesson" / "n_old001.md").exists() and not path.exists()
    assert store.restore(["n_old001"]) == ["n_old001"] and store.get("n_old001").status is Status.ACTIVE


def test_resolve_drop_moves_the_wrong_lesson_to_the_cold_archive(layers: Layers) -> None:
    store = layers.project
    a = lesson("n_a00001", status=Status.DISPUTED, disputes=["n_b00001"], conflict="5433 or 5434?")
    b = lesson("n_b00001", status=Status.DISPUTED, disputes=["n_a00001"], conflict="5433 or 5434?")
    store.save_many([a, b])
    resolve(layers, "n_a00001", drop=True)
    assert (store.archive_dir / "lesson" / "n_a00001.md").exists()
    dropped = store.get("n_a00001")
    assert dropped.status is Status.ARCHIVED and dropped.archived_from is Status.ACTIVE and not dropped.disputes
    assert store.get("n_b00001").status is Status.ACTIVE
    assert "resolve --drop" in archive.read(store.catalog_path)["n_a00001"].because
    store.restore(["n_a00001"])
    assert store.get("n_a00001").status is Status.ACTIVE


def test_a_meaning_change_while_cold_is_written_in_the_archive_and_kept_on_restore(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_a00001"))
    store.archive(["n_a00001"], "t")
    store.update("n_a00001", lambda n: setattr(n, "title", "Renamed while cold"))
    assert (store.archive_dir / "lesson" / "n_a00001.md").read_text().count("status: active") == 1
    store.restore(["n_a00001"])
    assert store.get("n_a00001").title == "Renamed while cold"


def test_the_archive_merges_in_git_by_union(layers: Layers, tmp_path: Path) -> None:
    """Two clones archive different lessons; git merges the moves and the catalog without a conflict."""
    repo = layers.project.root.parent
    git = lambda *a, cwd=repo: subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "root")
    layers.project.save_many([lesson("n_a00001"), lesson("n_b00001"), lesson("n_c00001")])
    git("add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "lessons")
    clone = tmp_path / "clone"
    git("clone", "-q", str(repo), str(clone), cwd=tmp_path)
    layers.project.archive(["n_a00001"], "here")
    git("add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "archive a")
    other = Store(clone / ".rose", Scope.PROJECT)
    other.sync()
    other.archive(["n_b00001"], "there")
    other.close()
    git("add", "-A", cwd=clone)
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "archive b", cwd=clone)
    git("-c", "user.email=a@b", "-c", "user.name=a", "pull", "-q", "--no-rebase", str(clone), "HEAD")
    merged = Store(layers.project.root, Scope.PROJECT)
    assert merged.sync().problems == []
    assert {r.id for r in merged.rows() if r.cold} == {"n_a00001", "n_b00001"}
    assert set(archive.read(merged.catalog_path)) == {"n_a00001", "n_b00001"}
    merged.close()


def test_node_files_never_hold_the_in_memory_archived_status_of_a_move(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_a00001"))
    store.archive(["n_a00001"], "t")
    data = (store.archive_dir / "lesson" / "n_a00001.md").read_text()
    assert "status: active" in data and "archived_from" not in data
    assert isinstance(store.get("n_a00001"), Node)


def test_rose_init_moves_a_personal_stores_archive_with_its_lessons(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    layers = Layers.discover(repo)
    personal = layers.writable(Scope.PROJECT)              # the user's own store for a repository without .rose/
    personal.save_many([lesson("n_hot0001"), lesson("n_cold001")])
    personal.archive(["n_cold001"], "budget")
    store, _moved = layers.init_project()
    store.sync()
    assert store.root == repo / ".rose"
    assert store.get("n_cold001").status is Status.ARCHIVED and store.get("n_hot0001").status is Status.ACTIVE
    assert list(archive.read(store.catalog_path)) == ["n_cold001"]
    assert not personal.root.exists()                      # nothing of the personal store was left behind
    layers.close()


def test_rose_init_unions_the_personal_catalog_with_one_already_in_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    layers = Layers.discover(repo)
    personal = layers.writable(Scope.PROJECT)
    personal.save_many([lesson("n_cold001")])
    personal.archive(["n_cold001"], "budget")
    theirs = Store.create(repo / ".rose", Scope.PROJECT)   # a .rose/ that appeared meanwhile, with its own archive
    theirs.save_many([lesson("n_cold002")])
    theirs.archive(["n_cold002"], "budget")
    theirs.close()
    store, _moved = layers.init_project()
    store.sync()
    assert sorted(archive.read(store.catalog_path)) == ["n_cold001", "n_cold002"]
    assert store.get("n_cold001").status is Status.ARCHIVED
    assert not personal.root.exists()
    layers.close()


def test_a_move_onto_a_second_copy_of_the_id_keeps_both_and_logs_a_skip(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001"), lesson("n_b00001")])
    stray = store.root / "archive" / "lesson" / "n_a00001.md"     # what a merge gone wrong can leave
    stray.parent.mkdir(parents=True)
    stray.write_text("not the lesson\n", encoding="utf-8")
    hot = (store.root / "nodes" / "fam" / "n_a00001.md").read_bytes()
    assert store.archive(["n_a00001", "n_b00001"], "budget") == ["n_b00001"]   # the other record still moves
    assert (store.root / "nodes" / "fam" / "n_a00001.md").read_bytes() == hot
    assert stray.read_text(encoding="utf-8") == "not the lesson\n"
    from rose.store import events

    assert [e["id"] for e in events.read(store.events_path, kind="skip")
            if e.get("what") == "move"] == ["n_a00001"]
