"""`rose list`'s bounded view (the first LIST_SHOWN rows, the count of the rest) counts in SQL and reads only the
rows that can be among its first, and prints exactly what the whole listing cut short prints."""
from __future__ import annotations

import pytest

from rose import render
from rose.model import utcnow
from rose.retention.manage import listing
from rose.store import Layers
from rose.store.index import Index
from tests.support import mixed_store

CASES = [{}, {"scope": "project"}, {"scope": "global"}, {"memory_type": "lesson"}, {"memory_type": "orientation"},
         {"cold": True}, {"cold": True, "scope": "global"}, {"cold": True, "memory_type": "lesson"},
         {"pattern": "Re"}, {"pattern": "*t?*"}, {"pattern": "n_0*", "cold": True}]


@pytest.fixture
def mixed(layers: Layers) -> Layers:
    mixed_store.build(layers)
    return layers


def test_bounded_list_reads_only_its_rows_and_prints_the_same(mixed: Layers, monkeypatch) -> None:
    read: list[int] = []
    original = Index.select

    def counted(self, columns, where="", params=()):
        got = original(self, columns, where, params)
        read.append(len(got))
        return got

    now = utcnow()   # utility decays with age: one instant for both listings
    for kw in CASES:
        whole = listing(mixed, now=now, **kw)
        assert len(whole.rows) > render.LIST_SHOWN, kw   # past the bound, or the case shows nothing
        read.clear()
        with monkeypatch.context() as m:
            m.setattr(Index, "select", counted)
            bounded = listing(mixed, limit=render.LIST_SHOWN, now=now, **kw)
        assert render.listing(bounded) == render.listing(whole), kw
        assert bounded.count() == len(whole.rows) and bounded.rows[:render.LIST_SHOWN] == whole.rows[:render.LIST_SHOWN]
        if "pattern" in kw:   # a FILTER is matched in Python (Unicode case folding, globs over tags): every row
            assert sum(read) >= len(whole.rows)
        else:
            assert sum(read) < render.LIST_SHOWN + 40, kw   # the first rows and the ties at the last one


def test_the_store_has_ties_across_the_bound(mixed: Layers) -> None:
    rows = listing(mixed).rows
    last = rows[render.LIST_SHOWN - 1].importance
    assert rows[render.LIST_SHOWN].importance == last   # the cut falls inside a tie, broken by utility and id
    assert len({r.scope for r in rows}) == 2 and len({r.memory_type for r in rows}) == 3


def test_rose_list_prints_the_bounded_view_and_all_the_whole_list(mixed: Layers, project, monkeypatch) -> None:
    import json

    from rose.retention import manage
    from tests.conftest import run_rose_here

    now = utcnow()
    monkeypatch.setattr(manage, "utcnow", lambda: now)   # utility decays with age: one instant for every listing
    whole = listing(mixed, cold=True)
    got = run_rose_here("list", "--cold", cwd=project)
    assert got.returncode == 0 and got.stdout == render.listing(whole) + "\n"
    assert run_rose_here("list", "--cold", "--all", cwd=project).stdout == render.listing(whole, full=True) + "\n"
    assert len(json.loads(run_rose_here("list", "--cold", "--json", cwd=project).stdout)["rows"]) == len(whole.rows)
