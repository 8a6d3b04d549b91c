"""Importance moves with evidence (rule 1), through the real attribution code: attributed use on a successful
session raises it, use on a failed one lowers it, exposure alone is neutral, the floor archives at once, and a cold
record attributed as used comes back to the hot store before its use is recorded."""
from __future__ import annotations

from rose.model import EpisodeOutcome, Status
from rose.retention import rules
from rose.retention.maintain import Policy, only
from rose.store import Layers, archive

from .helpers import credit, lesson, lineage


def _importance(layers: Layers, node_id: str) -> float:
    row = layers.project.index.rows_by_id([node_id])[node_id]
    return row.importance


def test_use_on_success_raises_and_use_on_failure_lowers_while_the_file_keeps_its_mint(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001"), lesson("n_b00001")])
    file_before = (store.nodes_dir / "fam" / "n_a00001.md").read_bytes()
    credit(layers, ["n_a00001"], EpisodeOutcome.SUCCESS, "s1")
    assert _importance(layers, "n_a00001") == rules.next_importance(0.6, "success")
    credit(layers, ["n_a00001"], EpisodeOutcome.FAILURE, "s2")
    assert _importance(layers, "n_a00001") == rules.next_importance(rules.next_importance(0.6, "success"), "failure")
    node = store.get("n_a00001")
    assert node.importance == 0.6 and node.learned_importance == _importance(layers, "n_a00001")
    assert (store.nodes_dir / "fam" / "n_a00001.md").read_bytes() == file_before   # usage only: no churn


def test_exposure_alone_and_unknown_outcomes_are_neutral(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001"), lesson("n_b00001")])
    credit(layers, ["n_a00001"], EpisodeOutcome.FAILURE, "s1", unused=["n_b00001"])   # b served, not used
    assert _importance(layers, "n_b00001") == 0.6
    credit(layers, ["n_b00001"], EpisodeOutcome.UNKNOWN, "s2")
    assert _importance(layers, "n_b00001") == 0.6 and store.get("n_b00001").use_count == 1


def test_a_credit_run_twice_moves_importance_once(layers: Layers) -> None:
    layers.project.save(lesson("n_a00001"))
    credit(layers, ["n_a00001"], EpisodeOutcome.FAILURE, "s1")
    credit(layers, ["n_a00001"], EpisodeOutcome.FAILURE, "s1")
    assert _importance(layers, "n_a00001") == 0.45


def test_repeated_negative_credit_to_the_floor_archives_at_once_with_its_lineage(layers: Layers) -> None:
    store = layers.project
    lineage(store, "n_top001", "n_low001")
    for i in range(6):
        credit(layers, ["n_top001"], EpisodeOutcome.FAILURE, f"s{i}")
    assert store.get("n_top001").status is Status.ACTIVE            # 0.6 -> 0.45 -> ... -> 0.107: not yet
    credit(layers, ["n_top001"], EpisodeOutcome.FAILURE, "s6")        # -> 0.1: the floor
    assert store.get("n_top001").status is Status.ARCHIVED
    assert store.get("n_low001").status is Status.ARCHIVED           # its detail went with it
    assert "floor" in archive.read(store.catalog_path)["n_top001"].because


def test_a_disputed_record_is_never_archived_by_credit(layers: Layers) -> None:
    store = layers.project
    store.save_many([lesson("n_a00001", status=Status.DISPUTED, disputes=["n_b00001"], conflict="which?"),
                     lesson("n_b00001", status=Status.DISPUTED, disputes=["n_a00001"], conflict="which?")])
    for i in range(6):
        credit(layers, ["n_a00001"], EpisodeOutcome.FAILURE, f"s{i}")
    assert store.get("n_a00001").status is Status.DISPUTED           # a contradiction waits for the user


def test_without_archiving_the_floor_only_lowers(layers: Layers) -> None:
    layers.project.save(lesson("n_a00001"))
    with only(Policy(archive=False)):
        for i in range(8):
            credit(layers, ["n_a00001"], EpisodeOutcome.FAILURE, f"s{i}")
    assert layers.project.get("n_a00001").status is Status.ACTIVE and _importance(layers, "n_a00001") == 0.1


def test_a_cold_record_used_is_promoted_back_before_its_use_is_recorded(layers: Layers) -> None:
    store = layers.project
    lineage(store, "n_top001", "n_low001")
    store.archive(["n_top001", "n_low001"], "budget")
    credit(layers, ["n_top001"], EpisodeOutcome.SUCCESS, "s1")
    top, low = store.get("n_top001"), store.get("n_low001")
    assert top.status is Status.ACTIVE and low.status is Status.SUPERSEDED   # with its lineage
    assert top.use_count == 1 and top.stats.successes == 1
    assert (store.nodes_dir / "fam" / "n_top001.md").exists()
    assert "n_top001" not in archive.read(store.catalog_path)
