"""The store: exact round trips, corrupt files reported and left alone, the derived index, layering, redaction."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from rose.errors import CorruptFile, NodeNotFound, StoreNotFound
from rose.model import Claim, ClaimKind, Episode, EpisodeOutcome, Node, Scope, Status
from rose.store import Layers, Store
from rose.store.index import MIGRATIONS

TRICKY_TEXTS = [
    'He said "don\'t" and left: yes',
    "key: value\nlist:\n  - a\n  - b\n---\nnot: frontmatter",
    "C:\\Users\\me\\path\\n is not a newline; \\t neither",
    "line one\nline two\n\n\nafter blanks\n",
    "trailing spaces   \n  leading spaces",
    "ünïcödé — 日本語 — emoji 🌹 — العربية",
    "[not, a, list]  {not: a map}  &anchor *alias !tag",
    "- starts like a list item",
    "# a markdown heading\n```python\nprint('x')\n```",
    "yes", "no", "null", "~", "2026-01-01", "0x1F", "1e3", "'quoted'", "@at", "%percent", "`tick`",
    "",
    "\ttab-led\r\nwindows line",
    "---",
    "--- \n---\nfences inside",
]


def _node(store: Store, text: str, **kw) -> Node:
    return Node(id=store.new_id(), family=kw.pop("family", "general"), title=kw.pop("title", "t"), body=text, **kw)


@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_round_trip_is_exact(layers: Layers, text: str) -> None:
    store = layers.project
    node = _node(store, text, title=text or "empty", gist=text, tags=["a:b", "x y"], conflict=text,
                 preserve=[text], dropped=[Claim(text or "c", ClaimKind.STEP, holder="n_000001")])
    node.extra = {"custom_key": text}
    store.save(node)
    fresh = Store(store.root, Scope.PROJECT)
    back = fresh.get(node.id)
    assert back == node
    assert back.body == text


def test_round_trip_through_a_full_rebuild(layers: Layers) -> None:
    store = layers.project
    nodes = [_node(store, t, title=f"t{i}") for i, t in enumerate(TRICKY_TEXTS)]
    store.save_many(nodes)
    os.unlink(store.index_db_path)
    fresh = Store(store.root, Scope.PROJECT)
    report = fresh.sync()
    assert report.added == len(nodes) and not report.problems
    for node in nodes:
        assert fresh.get(node.id) == node


def test_every_field_survives(layers: Layers) -> None:
    store = layers.project
    node = _node(store, "body", level=3, status=Status.DISPUTED, conflict="Is 5434 permanent?",
                 derived_from=["n_aaaaaa", "n_bbbbbb"], parents=["n_cccccc"], covers_tasks=["e_123456"],
                 importance=0.9, confidence=0.8, evidence=["session://s1/message/3"], use_count=4)
    node.stats.successes = 2
    node.stats.last_used = "2026-11-01T10:00:00Z"
    store.save(node)
    assert Store(store.root, Scope.PROJECT).get(node.id) == node


def test_a_corrupt_file_is_reported_skipped_and_never_touched(layers: Layers) -> None:
    store = layers.project
    good = _node(store, "fine")
    store.save(good)
    broken = store.nodes_dir / "general" / "n_bad001.md"
    broken.write_text("---\nid: n_bad001\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    not_md = store.nodes_dir / "general" / "n_bad002.md"
    not_md.write_bytes(b"\xff\xfe not utf8")
    before = {p: p.read_bytes() for p in (broken, not_md)}
    report = store.sync()
    reasons = dict(report.problems)
    assert "nodes/general/n_bad001.md" in reasons and "YAML" in reasons["nodes/general/n_bad001.md"]
    assert "UTF-8" in reasons["nodes/general/n_bad002.md"]
    assert [n.id for n in store.iter_nodes()] == [good.id]
    # further writes leave the broken files exactly as they were
    store.save(_node(store, "another"))
    store.rebuild_index()
    assert {p: p.read_bytes() for p in before} == before
    with pytest.raises(CorruptFile) as err:
        store.read_node_file(broken)
    assert str(broken) in str(err.value)


def test_missing_required_fields_are_a_reason_not_a_crash(layers: Layers) -> None:
    store = layers.project
    (store.nodes_dir / "general").mkdir(parents=True, exist_ok=True)
    (store.nodes_dir / "general" / "n_x.md").write_text("---\nfamily: general\n---\nbody\n", encoding="utf-8")
    (store.nodes_dir / "general" / "n_y.md").write_text("no frontmatter at all", encoding="utf-8")
    (store.nodes_dir / "general" / "n_z.md").write_text("---\nid: n_z\nfamily: g\ntitle: t\nstatus: weird\n---\n",
                                                      encoding="utf-8")
    reasons = dict(store.sync().problems)
    assert "missing required field" in reasons["nodes/general/n_x.md"]
    assert "frontmatter" in reasons["nodes/general/n_y.md"]
    assert "weird" in reasons["nodes/general/n_z.md"]


def test_hand_edits_are_picked_up(layers: Layers) -> None:
    store = layers.project
    node = _node(store, "Use port 5433 for the test database.", title="Test DB port")
    store.save(node)
    path = store.node_path(node)
    text = path.read_text(encoding="utf-8").replace("5433", "6543").replace("Test DB port", "Test database port")
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert store.sync().updated == 1
    assert store.index.search("6543")[0][0] == node.id
    assert "Test database port" in store.index_md_path.read_text(encoding="utf-8")
    path.unlink()
    assert store.sync().removed == 1
    with pytest.raises(NodeNotFound):
        store.get(node.id)


def test_deleting_or_damaging_the_index_loses_nothing(layers: Layers) -> None:
    store = layers.project
    ids = [store.save(_node(store, f"lesson about topic{i}", title=f"topic{i}")).id for i in range(20)]
    store.close()
    store.index_db_path.write_bytes(b"this is not a database" * 100)
    fresh = Store(store.root, Scope.PROJECT)
    fresh.sync()
    assert sorted(r.id for r in fresh.rows()) == sorted(ids)
    assert fresh.index.search("topic7")[0][0] == ids[7]


def test_the_final_schema_is_pinned(layers: Layers) -> None:
    store = layers.project
    store.sync()
    conn = sqlite3.connect(store.index_db_path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','index')"
                                         " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'nodes_fts_%'"
                                         " AND name NOT LIKE 'cold_fts_%'")}
    assert tables == {"migrations", "nodes", "nodes_family", "nodes_fts", "files", "embeddings", "meta", "usage",
                      "usage_seen", "nodes_cold", "cold_fts", "nodes_facts", "clean_files", "files_problems",
                      "nodes_listing", "nodes_lineage", "nodes_lone", "nodes_disputed", "vector_state", "nodes_text"}
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert triggers == {"vectors_inserted", "vectors_updated", "vectors_deleted", "lessons_inserted",
                        "lessons_retexted"}   # migration 0013: the tags the vector file is checked against
    columns = [r[1] for r in conn.execute("PRAGMA table_info(nodes)")]
    assert columns == ["id", "family", "title", "gist", "tags", "body", "level", "status", "origin", "memory_type",
                       "scope", "importance", "parents", "derived_from", "dropped", "tokens", "created",
                       "last_used", "use_count", "path", "conflict", "patches", "text_hash", "origin_rescues",
                       "heldout_passed", "heldout_total", "trials", "gaps", "unreconciled", "usage_base", "claims",
                       "manifest", "cold", "cold_from", "base_importance", "confidence"]
    assert [r[1] for r in conn.execute("PRAGMA table_info(embeddings)")] == ["node_id", "model", "vec", "text_hash"]
    assert [r[1] for r in conn.execute("PRAGMA table_info(usage)")] == ["node_id", "fold"]
    applied = [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY name")]
    assert applied == [name for name, _sql in MIGRATIONS]


def test_index_md_has_one_line_per_lesson(layers: Layers) -> None:
    store = layers.project
    node = _node(store, "body", title="Pipes | in title", gist="gist | with pipe", tags=["x", "y"], family="deploy")
    store.save(node)
    lines = [ln for ln in store.index_md_path.read_text(encoding="utf-8").splitlines() if ln.startswith("n_")]
    assert lines == [f"{node.id} | deploy | L0 | Pipes / in title | x y | gist / with pipe | "
                     f"nodes/deploy/{node.id}.md"]


def test_changing_family_moves_the_file(layers: Layers) -> None:
    store = layers.project
    node = store.save(_node(store, "x", family="old"))
    old_path = store.node_path(node)
    store.update(node.id, lambda n: setattr(n, "family", "new"))
    assert not old_path.exists()
    assert store.get(node.id).family == "new"
    assert store.index.count() == 1


def test_secrets_never_reach_disk(layers: Layers) -> None:
    store = layers.project
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4
    node = store.save(_node(store, f"call the API with {key}", title=f"uses {key}"))
    assert key not in store.node_path(node).read_text(encoding="utf-8")
    assert key not in store.index_md_path.read_text(encoding="utf-8")
    ep = Episode(id=store.new_episode_id(), session="s", prompt=f"export ANTHROPIC_API_KEY={key}",
                 outcome=EpisodeOutcome.SUCCESS)
    store.save_episode(ep)
    assert key not in (store.episodes_dir / f"{ep.id}.json").read_text(encoding="utf-8")
    store.event(__import__("rose.store.events", fromlist=["EventKind"]).EventKind.ADD, note=key)
    assert key not in store.events_path.read_text(encoding="utf-8")


def test_episode_round_trip_and_corrupt_episode(layers: Layers) -> None:
    store = layers.project
    ep = Episode(id=store.new_episode_id(), session="s1", prompt="add retry: \"now\"", outcome=EpisodeOutcome.SUCCESS,
                 served=["n_000001", "n_000002"], used=["n_000001"], accepted_summary="added retry")
    store.save_episode(ep)
    (store.episodes_dir / "e_broken.json").write_text("{not json", encoding="utf-8")
    found, bad = store.episodes()
    assert found == [ep]
    assert len(bad) == 1 and "e_broken.json" in str(bad[0])


# -- layering -------------------------------------------------------------------------------------------------
def test_project_store_is_found_by_walking_up(layers: Layers, project: Path) -> None:
    deep = project / "src" / "pkg" / "deep"
    deep.mkdir(parents=True)
    found = Layers.discover(deep)
    assert found.project is not None and found.project.root == layers.project.root


def test_the_global_store_is_never_taken_for_a_project_store(isolated_home: Path) -> None:
    (isolated_home / ".rose" / "local").mkdir(parents=True)   # only repository stores' machine-local state
    inside = isolated_home / "code"
    inside.mkdir()
    found = Layers.discover(inside)
    assert found.project is None and found.global_ is None     # no lessons, no settings: no global store yet
    (isolated_home / ".rose" / "nodes").mkdir()
    found = Layers.discover(inside)
    assert found.project is None
    assert found.global_ is not None


def test_global_store_location_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROSE_HOME", str(tmp_path / "elsewhere"))
    layers = Layers.discover(tmp_path)
    store = layers.writable(Scope.GLOBAL)
    assert store.root == (tmp_path / "elsewhere").resolve()


def test_edits_to_a_global_lesson_write_back_to_the_global_file(layers: Layers) -> None:
    from rose.learn.teach import teach

    added = teach(layers, "Prefer uv over pip.", scope=Scope.GLOBAL)
    store, node = layers.locate(added.node.id)
    assert store is layers.global_
    store.update(node.id, lambda n: setattr(n, "body", "Prefer uv over pip, always."))
    assert layers.project.index.count() == 0
    assert "always" in layers.global_.get(node.id).body
    assert not list(layers.project.nodes_dir.rglob("*.md"))


def test_no_store_is_a_clear_error_for_reads_and_a_personal_store_for_writes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    layers = Layers.discover(repo)
    with pytest.raises(StoreNotFound, match="rose init"):
        layers.require_any()
    store = layers.writable(Scope.PROJECT)   # a repository without .rose/: the user's own store for it
    assert layers.personal and store.root.parent.name == "projects" and not (repo / ".rose").exists()
    assert Layers.discover(repo).project.root == store.root       # found again, from the repository's root
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    assert Layers.discover(other).project is None                  # each repository its own


def test_gitignore_keeps_machine_local_files_out(layers: Layers) -> None:
    text = (layers.project.root / ".gitignore").read_text(encoding="utf-8")
    for local in ("index.db", "sessions/", "events.jsonl", "judge-cache.json", "locks/", "logs/"):
        assert local in text.splitlines()
    for kept in ("nodes/", "episodes/", "routing/", "config.yaml"):
        assert kept not in text.splitlines()
