"""The list codecs answer an empty list without reading it (records._str_list, the node-id lists): for every raw
value a file may hold, the same value, a fresh list each time, or the same error as the reading they skip."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from rose import records
from rose.model import Node, _check_ids, valid_node_id

RAWS: list[Any] = [[], [""], ["n_abc"], ["n_abc", "n_def"], ["not an id"], ["n_ok", "bad id"], "n_abc", "bad id",
                   0, 5, 1.5, True, {}, {"n_abc": 1}, [[]], [1, 2.5], [None], [datetime(2026, 1, 2, 3, 4, 5)], ()]


def _reference_str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [str(value)]
    return [records._as_str(v) for v in value]


def _outcome(fn: Any, raw: Any) -> tuple[str, Any]:
    try:
        return "value", fn(raw)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("raw", [None, *RAWS], ids=repr)
def test_str_list_reads_as_it_did(raw: Any) -> None:
    assert _outcome(records._str_list, raw) == _outcome(_reference_str_list, raw)


@pytest.mark.parametrize("name", ["disputes", "derived_from", "parents", "related"])
@pytest.mark.parametrize("raw", RAWS, ids=repr)
def test_node_id_lists_read_as_they_did(name: str, raw: Any) -> None:
    read = dict((n, k.codec.read) for n, k in records._keys(Node))[name]
    assert _outcome(read, raw) == _outcome(lambda r: _check_ids(name, _reference_str_list(r), valid_node_id), raw)


def test_an_empty_list_read_is_a_fresh_list() -> None:
    read = dict((n, k.codec.read) for n, k in records._keys(Node))["parents"]
    raw: list[str] = []
    first, second = read(raw), records._str_list(raw)
    assert first == second == [] and first is not raw and second is not raw and first is not second
