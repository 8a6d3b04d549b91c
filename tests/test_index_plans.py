"""The queries every inspection command runs at scale read an index made for them, not every row: if a query or an
index is reworded so SQLite no longer matches them, this says so (the commands would only turn slow, silently)."""
from __future__ import annotations

from rose.model import Node
from rose.store import Layers
from rose.store.index import _BUCKETS, _FACTS, COLD_SQL, DISPUTED_SQL, LINEAGE_SQL, NO_LINEAGE_SQL


def _plan(layers: Layers, sql: str, params: tuple = ()) -> str:
    store = layers.project
    store.save_many([Node(id=f"n_plan{i}", family="alpha", title=f"lesson {i}", body="text") for i in range(5)])
    store.sync()
    return " | ".join(r[-1] for r in store.index.conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def test_the_status_facts_read_the_facts_index_alone(layers: Layers) -> None:
    plan = _plan(layers, _FACTS)
    assert "COVERING INDEX nodes_facts" in plan and "TEMP B-TREE" not in plan


def test_the_list_buckets_read_the_facts_index_alone(layers: Layers) -> None:
    plan = _plan(layers, _BUCKETS)
    assert "COVERING INDEX nodes_facts" in plan and "TEMP B-TREE" not in plan


def test_the_problems_every_sync_reports_come_from_their_own_index(layers: Layers) -> None:
    plan = _plan(layers, "SELECT path, problem FROM files WHERE problem IS NOT NULL ORDER BY path")
    assert "files_problems" in plan and "TEMP B-TREE" not in plan


def test_the_list_count_and_floor_are_ranges_of_the_listing_index(layers: Layers) -> None:
    where = f"{COLD_SQL} = ?"
    count = _plan(layers, f"SELECT count(*) FROM nodes WHERE {where} AND memory_type = ?", (0, "lesson"))
    floor = _plan(layers, f"SELECT importance FROM nodes WHERE {where} ORDER BY importance DESC LIMIT 1 OFFSET ?",
                  (0, 3))
    assert "SEARCH nodes USING" in count and "nodes_listing" in count
    assert "nodes_listing" in floor and "TEMP B-TREE" not in floor


def test_the_tree_reads_lineage_and_lone_rows_from_their_own_indexes(layers: Layers) -> None:
    lineage = _plan(layers, f"SELECT id FROM nodes WHERE {LINEAGE_SQL}")
    lone = _plan(layers, f"SELECT id FROM nodes WHERE family = ? AND {NO_LINEAGE_SQL} ORDER BY family, level DESC, id"
                 " LIMIT ?", ("alpha", 3))
    assert "nodes_lineage" in lineage
    assert "nodes_lone" in lone and "TEMP B-TREE" not in lone


def test_the_open_conflicts_are_read_from_their_own_index(layers: Layers) -> None:
    plan = _plan(layers, f"SELECT id FROM nodes WHERE {DISPUTED_SQL} ORDER BY family, level DESC, id")
    assert "nodes_disputed" in plan and "TEMP B-TREE" not in plan
