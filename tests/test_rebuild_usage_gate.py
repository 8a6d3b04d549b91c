"""The index's parse makes no usage view for a lesson file that holds no usage of its own and has none logged
(rose.store.store._holds_usage, Store._load's `for_index`), and Node.from_dict sets a node's fields as one dict
(records._readers): each gives what it stands for.

- the index a rebuild and a sync leave is the one they leave with every lesson parsed the full way (generated
  lessons, cold records, old files holding usage, claim and trial counters, a duplicate count, logged usage, a
  hand edit with a secret, corrupt files, odd YAML), table by table;
- a file _holds_usage calls usage-free reads as an empty usage view, over random mappings of every field type;
- from_dict's node equals the one its __init__ builds (fields, their order, their types), and a mapping from_dict
  rejected before is rejected the same way, with the same text; a record with a __post_init__ is built by it.
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

import pytest

from rose import records
from rose.model import Node, Status
from rose.records import Claim, Trial
from rose.store import Layers, Store, usage
from rose.store import store as store_module
from rose.store.frontmatter import dump_yaml, split_frontmatter
from tests.support.gen_store import make_nodes
from tests.test_index_bulk_rebuild import _tables

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

OLD_USAGE = """---
id: {id}
family: old
title: an old file's lesson {n}
created: '2026-01-01T00:00:00Z'
{usage}
---
An old file, written before usage moved to the log.
"""
USAGES = ["stats:\n  attempts: 3\n  successes: 2\n  last_used: '2026-01-02T03:04:05Z'", "use_count: 4",
          "gaps:\n- failed on the migration", f"preserve:\n- keep {TOKEN}", "spans:\n- the first sentence",
          "heldout:\n  passed: 1\n  total: 2", "last_attempt: '2026-01-01T00:00:00Z'", "rejections: 2",
          "learned_importance: 0.8", "covers_tasks:\n- e_abc", "duplicate_hits: 3", "stats: {}",
          "use_count: 0", "dropped:\n- claim: a claim\n  rescues: 2", "dropped:\n- claim: a claim\n  attempts: 1",
          "trials:\n- episode: e_x\n  idle: 2\n  opened: '2026-01-01T00:00:00Z'", "spans: []", "gaps: []"]


def _varied(layers: Layers) -> Store:
    store = layers.project
    store.save_many(make_nodes(60))
    store.archive([f"n_{i:06x}" for i in range(0, 60, 9)], "old")   # cold records
    node = store.get("n_000003")
    node.stats.attempts, node.use_count = 3, 2   # usage the log holds
    node.gaps = ["a gap the log holds"]
    store.save(node)
    old = store.nodes_dir / "old"
    old.mkdir()
    for n, text in enumerate(USAGES):
        (old / f"n_old{n:03d}.md").write_text(OLD_USAGE.format(id=f"n_old{n:03d}", n=n, usage=text))
    hot = store.root / str(store.index.path_of("n_000005"))
    hot.write_text(hot.read_text().replace("Context:", f"token = {TOKEN}\nContext:"))   # a hand edit, a secret
    (old / "n_broken.md").write_text("no frontmatter here\n")
    (old / "n_badid.md").write_text("---\nid: bad id\nfamily: f\ntitle: t\n---\nbody\n")
    (old / "n_badstatus.md").write_text("---\nid: n_badstatus\nfamily: f\ntitle: t\nstatus: draft\n---\nbody\n")
    (old / "n_flow.md").write_text("---\n{id: n_flow, family: f, title: 'a flow mapping', tags: [a, b],\n"
                                   " created: '2026-01-01T00:00:00Z'}\n---\nb\n")
    (old / "n_trials.md").write_text("---\nid: n_trials\nfamily: f\ntitle: t\ntrials: x\n---\nbody\n")
    (old / "n_claims.md").write_text("---\nid: n_claims\nfamily: f\ntitle: t\ndropped:\n- 3\n---\nbody\n")
    (old / "n_dates.md").write_text("---\nid: n_dates\nfamily: f\ntitle: dated\ncreated: 2026-01-02 03:04:05\n"
                                    "level: '2'\nimportance: 1\nunknown_key: {a: 1}\n---\nbody\n")
    return store


def _every_lesson_the_full_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "_holds_usage", lambda node, held: True)


@pytest.mark.parametrize("how", ["rebuild", "sync"])
def test_the_index_is_the_one_every_lesson_parsed_the_full_way_gives(layers: Layers, how: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    store = _varied(layers)

    def index() -> dict[str, list[tuple]]:
        if how == "rebuild":
            store.rebuild_index()
        else:
            store.index.conn.execute("DELETE FROM files")   # every file is new to the sync
            store.index.conn.execute("DELETE FROM meta WHERE key <> 'usage_mark'")
            store.sync()
        return _tables(store)

    gated = index()
    with monkeypatch.context() as patch:
        _every_lesson_the_full_way(patch)
        full = index()
    assert gated == full   # (every lesson file here names its `created`: read absent, it is the clock's)
    rows = {row[0]: row for row in full["nodes"]}
    assert len(rows) > 70 and full["cold_fts"]
    assert TOKEN not in repr(full)
    problems = [row for row in full["files"] if row[4]]
    assert len(problems) == 5 and any("bad field" in row[4] for row in problems)
    assert {row[0] for row in problems} >= {"nodes/old/n_trials.md", "nodes/old/n_claims.md"}   # not a crash


def test_each_parse_gives_what_the_full_way_gives(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _varied(layers)
    store.rebuild_index()
    paths = sorted(p for d in store.record_dirs for p in d.rglob("*.md"))
    assert len(paths) > 80

    def parse(path):
        try:
            node, base = store._parse_for_index(path)
        except ValueError as exc:
            return "rejected", str(exc)
        return node, vars(node), None if base is None else base.to_json()

    gated = [parse(p) for p in paths]
    with monkeypatch.context() as patch:
        _every_lesson_the_full_way(patch)
        full = [parse(p) for p in paths]
    assert gated == full
    bases = [p[2] for p in full if p[0] != "rejected" and p[2] is not None]
    assert len(bases) >= 10   # old files' usage read as their base
    assert any(p[0] == "rejected" for p in full)


def _random_value(rng: random.Random) -> Any:
    return rng.choice([None, 0, 1, 2, 0.0, 0.5, "", "x", "n_abc", [], ["n_abc"], ["x", "y"], {}, {"a": 1},
                       {"attempts": 0}, {"attempts": 2}, {"passed": 0, "total": 0}, {"passed": 1, "total": 3},
                       True, False, datetime(2026, 1, 2, 3, 4, 5)])


def _random_mapping(rng: random.Random) -> dict[str, Any]:
    data: dict[str, Any] = {"id": "n_abc", "family": "f", "title": "t"}
    keys = [key.name or name for name, key in records._keys(Node) if name != "body"]
    keys += [usage.DUPLICATE_HITS, "x", "body", "extra", "archived_from"]   # keys with no field of their own
    for key in rng.sample(keys, rng.randint(0, 8)):
        data[key] = _random_value(rng)
    if rng.random() < 0.3:
        data["dropped"] = [rng.choice(["a claim", {"claim": "c", "rescues": rng.choice([0, 1])},
                                       {"claim": "c", "attempts": rng.choice([0, 2]), "kind": "fact"}])]
    if rng.random() < 0.2:
        data["trials"] = [{"episode": "e_x", "idle": rng.choice([0, 1]), "opened": "2026-01-01T00:00:00Z"}]
    return data


def test_a_file_said_to_hold_no_usage_reads_as_an_empty_view() -> None:
    rng = random.Random(1504)
    free = held = 0
    for _ in range(20_000):
        data = _random_mapping(rng)
        try:
            node = Node.from_dict(data, "body")
        except Exception:  # noqa: BLE001 - a mapping from_dict rejects has no view to compare
            continue
        if store_module._holds_usage(node, data):
            held += 1
            continue
        free += 1
        view = usage.view_of(node)
        assert view.empty(), data
        names = store_module._USAGE_TEXT.get(Node) or records.text_fields(Node, lambda k: k in
                                                                          usage.FRONTMATTER_KEYS)
        assert not any(getattr(node, name) for name in names), data   # no usage text to redact
    assert free > 2000 and held > 2000


def test_a_file_holding_usage_is_said_to() -> None:
    for text in USAGES:
        head = OLD_USAGE.format(id="n_old", n=0, usage=text)
        data, body = split_frontmatter(head)
        node = Node.from_dict(data, body)
        assert store_module._holds_usage(node, data), text


# -- Node.from_dict, as it read before: the codecs one keyword at a time, then __init__ --------------------------
def _from_dict_before(data: dict[str, Any], body: str) -> Node:
    records._required(Node, data)
    values = {}
    for name, key in records._keys(Node):
        if name == "body":
            continue
        raw = data.get(key.name or name)
        values[name] = key.codec.read(raw) if raw is not None or key.codec.absent is None else key.codec.absent()
    values["body"] = body
    known = {key.name or name for name, key in records._keys(Node)}
    return Node(**values, extra={k: v for k, v in data.items() if k not in known})


def _outcome(data: dict[str, Any], read) -> tuple:
    try:
        node = read(data, "the body")
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, str(exc)
    return ("node", vars(node), list(vars(node)), [type(v) for v in vars(node).values()],
            node.created if "created" in data else "now")


def test_from_dict_builds_the_node_its_init_builds() -> None:
    rng = random.Random(1505)
    built = rejected = 0
    for _ in range(5000):
        data = _random_mapping(rng)
        if rng.random() < 0.1:
            data.pop(rng.choice(["id", "family", "title"]))
        if rng.random() < 0.1:
            data["status"] = rng.choice(["draft", 3, Status.ACTIVE, "disputed"])
        got, want = _outcome(data, Node.from_dict), _outcome(data, _from_dict_before)
        if "created" not in data and got[0] == "node":   # read(None) is now_iso(): the clock, not the reading
            got[1].pop("created")
            want[1].pop("created")
        assert got == want, data
        built += got[0] == "node"
        rejected += got[0] != "node"
    assert built > 1000 and rejected > 300
    for node in make_nodes(40):
        data, body = split_frontmatter(f"---\n{dump_yaml(node.to_dict())}---\n{node.body}\n")
        again = Node.from_dict(data, body)
        assert again == node == _from_dict_before(data, body)
        assert list(vars(again)) == list(vars(node))


class _Posted(Node):
    """A record with a __post_init__: from_dict builds it by its __init__."""

    def __post_init__(self) -> None:
        self.extra["posted"] = True


def test_a_record_with_a_post_init_is_built_by_it() -> None:
    node = _Posted.from_dict({"id": "n_abc", "family": "f", "title": "t"}, "body")
    assert type(node) is _Posted and node.extra == {"posted": True}
    assert records._readers(_Posted).template is None and records._readers(Node).template is not None


def test_claims_and_trials_are_fresh_each_reading() -> None:
    data = {"id": "n_abc", "family": "f", "title": "t", "dropped": [{"claim": "c"}],
            "trials": [{"episode": "e_x", "opened": "2026-01-01T00:00:00Z"}]}
    first, second = Node.from_dict(data, "b"), Node.from_dict(data, "b")
    assert first.dropped == second.dropped == [Claim("c")] and first.dropped is not second.dropped
    assert isinstance(first.trials[0], Trial) and first.tags is not second.tags and first.extra is not second.extra


def test_the_clean_digest_is_the_blake2b_of_the_stamp_and_the_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    for stamp in (store_module._clean_stamp(), b"another redactor"):
        monkeypatch.setattr(store_module, "_CLEAN_STAMP", [stamp])
        for data in (b"", b"---\nid: n_a\n---\nbody\n", bytes(range(256)) * 300):
            want = hashlib.blake2b(stamp + data, digest_size=16).digest()
            assert store_module._clean_digest(data) == want == store_module._clean_digest(data)
