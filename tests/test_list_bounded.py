from __future__ import annotations

import pytest

from rose import render
from rose.retention.manage import listing
from rose.store import Layers
from tests.support.gen_store import make_nodes


@pytest.mark.parametrize("kw", [{}, {"scope": "project"}, {"memory_type": "semantic"}, {"cold": True}])
def test_bounded_list_reads_only_its_rows_and_prints_the_same(layers: Layers, kw) -> None:
    layers.project.save_many(make_nodes(300))
    full = render.listing(listing(layers, **kw))
    bounded = render.listing(listing(layers, limit=render.LIST_SHOWN, **kw))
    assert bounded == full
