"""A rebuild does not redact again what it has seen clean (rose.store.store._parse_for_index): only the same bytes
under the same redactor skip it; a secret written into a lesson by hand never reaches the index, however often it
is rebuilt, and text the usage log lends a node is redacted every time."""
from __future__ import annotations

import sqlite3

import pytest

import rose.redact
from rose.model import Node
from rose.store import Layers, Store
from rose.store import store as store_module

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _store(layers: Layers) -> Store:
    store = layers.project
    store.save_many([Node(id=f"n_cln{i:03d}", family="clean", title=f"lesson {i}", body=f"Body {i}.")
                     for i in range(6)])
    return store


def _indexed(store: Store) -> list[tuple]:
    conn = sqlite3.connect(store.index_db_path)
    try:
        return conn.execute("SELECT id, title, gist, tags, body, path FROM nodes ORDER BY id").fetchall()
    finally:
        conn.close()


def _count_redactions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = rose.redact.redact

    def spy(text, *a, **k):
        seen.append(text)
        return real(text, *a, **k)

    monkeypatch.setattr(rose.redact, "redact", spy)
    return seen


def test_a_rebuild_skips_redaction_of_files_rose_wrote_or_saw_clean_and_indexes_the_same(
        layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    first = _indexed(store)
    seen = _count_redactions(monkeypatch)
    store.rebuild_index()   # rose wrote these files from redacted fields: known clean at once
    assert _indexed(store) == first and not [t for t in seen if t.startswith("Body")]
    store.index.conn.execute("DELETE FROM clean_files")
    store.rebuild_index()   # nothing known: every file redacted, and found clean
    assert _indexed(store) == first and len([t for t in seen if t.startswith("Body")]) == 6
    seen.clear()
    store.rebuild_index()
    assert _indexed(store) == first and not [t for t in seen if t.startswith("Body")]


def test_a_secret_written_by_hand_is_redacted_on_every_rebuild(layers: Layers,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    store.rebuild_index()
    path = store.root / "nodes" / "clean" / "n_cln003.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Body 3.", f"Body 3 with {TOKEN}."), encoding="utf-8")
    for _ in range(3):
        store.rebuild_index()
        assert TOKEN not in str(_indexed(store)) and "[REDACTED:" in dict(
            (r[0], r[4]) for r in _indexed(store))["n_cln003"]
    store.sync()
    assert TOKEN not in store.index_md_path.read_text(encoding="utf-8") and TOKEN not in str(_indexed(store))


def test_the_same_bytes_under_another_redactor_are_redacted_again(layers: Layers,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    store.rebuild_index()
    monkeypatch.setattr(store_module, "_CLEAN_STAMP", [b"another redactor"])
    seen = _count_redactions(monkeypatch)
    store.rebuild_index()
    assert len([t for t in seen if t.startswith("Body")]) == 6
    seen.clear()
    store.rebuild_index()   # now known clean under that stamp too
    assert not [t for t in seen if t.startswith("Body")]


def test_text_from_the_usage_log_is_redacted_even_for_a_clean_file(layers: Layers,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layers)
    store.rebuild_index()
    path = store.root / "nodes" / "clean" / "n_cln001.md"
    load = store._load

    def with_logged_gap(*args, **kwargs):   # what a fold of a hand-merged usage.jsonl would lend the node
        node, disk = load(*args, **kwargs)
        node.gaps = [f"failed with {TOKEN}"]
        return node, disk

    monkeypatch.setattr(store, "_load", with_logged_gap)
    seen = _count_redactions(monkeypatch)
    node, _base = store._parse_for_index(path)
    assert not [t for t in seen if t.startswith("Body")]   # the file itself is known clean
    assert TOKEN not in str(node.gaps) and "[REDACTED:" in node.gaps[0]


def test_without_the_redactors_sources_nothing_is_known_clean_across_processes(tmp_path, monkeypatch) -> None:
    """An installation without .py files cannot name its redactor: each process gets a stamp of its own."""
    monkeypatch.setattr(rose.redact, "__file__", str(tmp_path / "__init__.pyc"))
    stamps = []
    for _ in range(2):   # two processes' first calls
        monkeypatch.setattr(rose.redact, "_STAMP", [])
        stamps.append(rose.redact.rules_stamp())
    assert stamps[0] != stamps[1]
    monkeypatch.undo()
    monkeypatch.setattr(rose.redact, "_STAMP", [])
    assert rose.redact.rules_stamp() == rose.redact.rules_stamp()   # with its sources: the same every time
