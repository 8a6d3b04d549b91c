"""The rebuild's short cuts each equal what they stand for (branch `rebuild2`):

- the ASCII checks of the frontmatter reader (str methods) and the regex character classes they replace;
- a codec's `absent` value and its read(None), for every field of a Node;
- Node.from_dict's enum and text short cuts and the plain reads, on odd values (str subclasses, enums, numbers);
- the remembered sequence items and string keys of the fast reader, against PyYAML, with the memories emptied;
- a rebuild that drops and re-creates the full-text tables keeps their schema, and a failure rolls it back.
"""
from __future__ import annotations

import random
import sqlite3
from dataclasses import fields

import pytest

from rose.model import MemoryType, Node, Scope, Status
from rose.records import _keys, text_fields
from rose.store import frontmatter
from rose.store.frontmatter import split_frontmatter
from tests.support.frontmatter_check import pyyaml_reading

CHARS = "ab ~\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x7f\x00\t\x85\u2028\u2029\u00e9\ufeff\U0001f600"


def test_ascii_checks_equal_the_character_classes():
    rng = random.Random(1502)
    hits = [0, 0]
    for _ in range(100_000):
        text = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 14)))
        breaks = frontmatter._OTHER_BREAKS.search(text) is not None
        assert frontmatter._other_breaks(text) == breaks, repr(text)
        head = text + "\n"
        awkward = frontmatter._AWKWARD.search(head) is not None
        assert frontmatter._plain_lines(head, text.split("\n")) == (not awkward), repr(text)
        hits[0] += breaks
        hits[1] += awkward
    assert min(hits) > 1000   # both answers are met often, so either check can fail here


def test_absent_equals_read_of_none():
    checked = 0
    for name, key in _keys(Node):
        if key.codec.absent is None:
            continue
        checked += 1
        first, second = key.codec.absent(), key.codec.absent()
        assert first == key.codec.read(None), name
        assert type(first) is type(key.codec.read(None)), name
        if isinstance(first, (list, dict)):
            assert first is not second, name   # a fresh value each time: the node may change it in place
    assert checked >= 30


def _data(**over):
    return {"id": "n_abc", "family": "f", "title": "t", **over}


class _Text(str):
    """A str subclass: the codecs must read it as the plain string it holds."""


@pytest.mark.parametrize("over", [
    {}, {"status": "disputed"}, {"status": ""}, {"status": None}, {"memory_type": "orientation", "scope": "global"},
    {"status": Status.ACTIVE}, {"status": _Text("active")}, {"title": _Text("t2")}, {"title": 12},
    {"gist": 1.5}, {"tags": ["a", 2, None]}, {"tags": "one"}, {"level": "2"}, {"importance": 1},
    {"confidence": None}, {"quotes": {"q": 1}}, {"heldout": {"passed": 1, "total": 2}}, {"unreconciled": 1},
])
def test_from_dict_short_cuts_equal_the_codecs(over):
    data = _data(**over)
    node = Node.from_dict(data, "body")
    for name, key in _keys(Node):
        if name == "body" or name == "created":
            continue
        want = key.codec.read(data.get(key.name or name))
        assert getattr(node, name) == want, name
        assert type(getattr(node, name)) is type(want), name


@pytest.mark.parametrize("over, reason", [({"status": "draft"}, "status"), ({"scope": 3}, "scope"),
                                          ({"parents": ["bad id"]}, "parents")])
def test_bad_values_still_fail(over, reason):
    with pytest.raises(ValueError):
        Node.from_dict(_data(**over), "body")


def test_text_fields_are_the_text_codecs():
    names = text_fields(Node)
    assert names == tuple(f.name for f in fields(Node) if "key" in f.metadata and f.metadata["key"].codec.text)
    assert set(text_fields(Node, lambda k: k in ("gaps", "preserve"))) == {"gaps", "preserve"}
    node = Node(id="n_abc", family="f", title="t", body="b", gaps=["x"], preserve=["y"])
    node.redact_fields(str.upper, ("gaps",))
    assert node.gaps == ["X"] and node.preserve == ["y"]


SEQUENCES = ["tags:\n- a\n- b\n", "tags:\n- 'x: y'\n- a\n", "tags:\n- a: 1\n  b: 2\n- a\n", "tags:\n- 1\n- true\n",
             "tags:\n- '- a'\n", "tags:\n- []\n- a\n", "t:\n  tags:\n  - a\n  - b\n", "tags:\n-  a\n",
             "tags:\n- a\n - b\n", "null:\n- a\n", "tags:\n- a\nnull: 1\n", "tags:\n- ~\n- null\n"]


def test_remembered_items_and_keys_agree_with_pyyaml(monkeypatch):
    rng = random.Random(1503)
    accepted = 0
    for round_ in range(300):
        if round_ % 7 == 0:   # the memories emptied now and then: a first reading and a remembered one
            frontmatter._LINES.clear()
            frontmatter._ITEMS.clear()
            frontmatter._STR_KEYS.clear()
        head = "".join(rng.choice(SEQUENCES) for _ in range(rng.randint(1, 3)))
        fast = frontmatter._load_layout(head)
        if fast is None:
            continue
        slow = pyyaml_reading(head)
        assert fast == slow, head
        assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()], head
        accepted += 1
    assert accepted > 30   # the fast reader took many of them (else this compared nothing)


def test_a_lesson_reads_the_same_remembered_or_not():
    text = "---\nid: n_abc\nfamily: f\ntitle: t\ntags:\n- database\n- postgres\nstatus: active\n---\nbody\n"
    first = split_frontmatter(text)
    again = split_frontmatter(text)
    frontmatter._LINES.clear()
    frontmatter._ITEMS.clear()
    frontmatter._STR_KEYS.clear()
    assert first == again == split_frontmatter(text)
    assert first[0]["tags"] == ["database", "postgres"]
    assert Node.from_dict(*first).memory_type is MemoryType.LESSON and Node.from_dict(*first).scope is Scope.PROJECT


def _fts_schema(db) -> list[tuple]:
    return sorted(sqlite3.connect(db).execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'nodes_fts%' OR name LIKE 'cold_fts%'"))


def test_rebuild_keeps_the_full_text_schema_and_rolls_back(tmp_path, monkeypatch):
    from rose.store.store import Store

    store = Store.create(tmp_path / ".rose", Scope.PROJECT)
    store.save(Node(id="n_abc", family="f", title="pin the tool", body="pin it"))
    before = _fts_schema(store.index_db_path)
    store.rebuild_index()
    assert _fts_schema(store.index_db_path) == before
    assert store.index.search("pin")   # the re-created table answers

    from rose.store import index as index_mod

    def boom(self, bulk):
        raise RuntimeError("flush failed")

    monkeypatch.setattr(index_mod.Index, "_bulk_flush", boom)
    with pytest.raises(RuntimeError):
        store.rebuild_index()
    assert _fts_schema(store.index_db_path) == before
    assert store.index.search("pin")   # rolled back: the table and its rows are as they were


def test_a_file_parsed_by_its_path_as_text_reads_as_by_its_path(tmp_path):
    # the index hands the parse each file's path joined as text (a pathlib join costs ~9 us a file): the node, its
    # usage and the reason a bad file gives are the same as for the Path, cold or hot, clean or redacted
    from rose.store.store import Store

    store = Store.create(tmp_path / ".rose", Scope.PROJECT)
    store.save_many([Node(id=f"n_t{i}", family="f", title=f"pin the tool {i}", body="pin it") for i in range(3)])
    store.archive(["n_t1"], "old")
    hot = store.root / store.index.path_of("n_t2")
    hot.write_text(hot.read_text().replace("pin it", "token = ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"))
    (store.nodes_dir / "f" / "n_bad.md").write_text("no frontmatter here\n")
    for rel in [store.index.path_of(f"n_t{i}") for i in range(3)] + ["nodes/f/n_bad.md"]:
        got = []
        for path in (store.root / rel, str(store.root / rel)):
            store.index.mark_clean(rel, None)   # each reading redacts afresh
            try:
                node, base = store._parse_for_index(path)
                got.append((node.to_dict(), node.body, base))
            except ValueError as exc:
                got.append(str(exc))
        assert got[0] == got[1], rel
        assert "ghp_a1B2" not in repr(got)
