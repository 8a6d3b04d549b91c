"""`rose tree`'s bounded view (report.tree_view) reads only the rows it draws and the ones with lineage, and prints
exactly what the whole tree cut short the old way prints."""
from __future__ import annotations

import pytest

from rose import render, report
from rose.model import Node, Scope
from rose.store import Layers
from rose.store.index import Index
from tests.support import mixed_store


def old_bounded(lines: list[report.TreeLine], shown: int, per_family: int) -> str:
    """The bounded view as render.tree cut it from the whole tree's lines before tree_view existed (the oracle)."""
    if not lines:
        return "(no lessons)"
    if len(lines) <= shown:
        return render.tree(lines)
    families: dict[str, list[list[report.TreeLine]]] = {}
    for line in lines:
        if line.depth == 0:
            families.setdefault(line.family, []).append([])
            current = families[line.family][-1]
        current.append(line)
    out = []
    for family, subtrees in families.items():
        ids = {line.id for subtree in subtrees for line in subtree}
        out.append(f"{family}: {len(ids)} lesson{'' if len(ids) == 1 else 's'}")
        out += ["  " + text for subtree in subtrees[:per_family] for text in render.tree(subtree).split("\n")]
        if len(subtrees) > per_family:
            out.append(f"  … and {len(subtrees) - per_family} more trees: `rose tree --family {family} --all`")
    out.append(f"({len(lines)} nodes in all: `rose tree --all` draws every one, `--json` lists them)")
    return "\n".join(out)


@pytest.fixture
def mixed(layers: Layers) -> Layers:
    mixed_store.build(layers)
    return layers


def _rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    read: list[int] = []
    original = Index.select

    def counted(self, columns, where="", params=()):
        got = original(self, columns, where, params)
        if tuple(columns) != ("id",):   # the check for ids two stores hold reads the smaller store's ids alone
            read.append(len(got))
        return got

    monkeypatch.setattr(Index, "select", counted)
    return read


@pytest.mark.parametrize("shown,per_family", [(render.TREE_SHOWN, render.TREE_PER_FAMILY), (40, 1), (40, 5)])
def test_the_bounded_tree_reads_only_what_it_draws_and_prints_the_same(mixed: Layers, monkeypatch, shown,
                                                                      per_family) -> None:
    bounded = 0
    for family in (None, "retry", "testing", mixed_store.LOOP_FAMILY):
        whole = report.tree(mixed, family=family)
        expected = old_bounded(whole, shown, per_family)
        with monkeypatch.context() as m:
            read = _rows_read(m)
            view = report.tree_view(mixed, family=family, shown=shown, per_family=per_family)
        assert render.tree_view(view) == expected, family
        assert view == report.bound(whole, shown, per_family)
        if len(whole) > shown:
            bounded += 1
            assert expected.endswith("`--json` lists them)") and not view.lines
            # not every row: those drawn, those with lineage and those they name (and the small store's ids)
            assert sum(read) < len({line.id for line in whole}) // 3, family
        else:
            assert view.lines == whole
    assert bounded == (1 if shown == render.TREE_SHOWN else 3)   # a family is ~120 lessons, the loop 3


def test_the_store_really_holds_what_can_make_the_views_differ(mixed: Layers) -> None:
    whole = report.tree(mixed)
    assert len(whole) > render.TREE_SHOWN
    assert any(line.repeat for line in whole)                    # a lesson under two parents
    assert {line.scope for line in whole} == {"project", "global"}
    view = report.bound(whole, render.TREE_SHOWN, render.TREE_PER_FAMILY)
    names = [f.family for f in view.families]
    assert len(names) > 8 and names[-1] == mixed_store.LOOP_FAMILY and names[:-1] == sorted(names[:-1])
    assert any(f.more for f in view.families)
    drawn = [line for f in view.families for t in f.trees for line in t]
    assert any(line.depth for line in drawn) and any(line.dropped for line in drawn)
    assert any(line.status == "archived" for line in whole)


def test_ids_two_stores_hold_fall_back_to_the_whole_tree(mixed: Layers) -> None:
    twin = mixed.project.get("n_000003")
    mixed.writable(Scope.GLOBAL).save(Node(id=twin.id, family="zz-twin", title="the global twin", body="twin",
                                           scope=Scope.GLOBAL))
    for family in (None, "zz-twin", twin.family):
        whole = report.tree(mixed, family=family)
        view = report.tree_view(mixed, family=family, shown=40, per_family=2)
        assert render.tree_view(view) == old_bounded(whole, 40, 2)


def test_a_small_tree_is_drawn_whole(layers: Layers) -> None:
    assert render.tree_view(report.tree_view(layers, shown=200, per_family=3)) == "(no lessons)"
    mixed_store.build(layers)
    whole = report.tree(layers, family="git")
    assert len(whole) < 200
    assert render.tree_view(report.tree_view(layers, family="git", shown=200, per_family=3)) == \
        render.tree(whole)


def test_rose_tree_prints_the_bounded_view_and_all_or_json_the_whole_tree(mixed: Layers, project) -> None:
    import json

    from tests.conftest import run_rose_here

    whole = report.tree(mixed)
    got = run_rose_here("tree", cwd=project)
    assert got.returncode == 0 and got.stdout == old_bounded(whole, render.TREE_SHOWN, render.TREE_PER_FAMILY) + "\n"
    assert run_rose_here("tree", "--all", cwd=project).stdout == render.tree(whole) + "\n"
    assert len(json.loads(run_rose_here("tree", "--json", cwd=project).stdout)) == len(whole)
