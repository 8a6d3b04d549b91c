"""The fast frontmatter reader remembers lines whose value is an empty list or dict (`parents: []`,
frontmatter._EMPTIES) and makes a fresh one at each reading: what it reads equals PyYAML's, remembered or not, at
any indent, a key used twice still goes to PyYAML, and no two readings share a list."""
from __future__ import annotations

import random

import pytest

from rose.store import frontmatter
from rose.store.frontmatter import load_yaml, split_frontmatter

PIECES = ["parents: []\n", "dropped: []\n", "quotes: {}\n", "tags:\n- a\n- b\n", "level: 0\n", "x:\n  y: []\n",
          "x:\n  y: {}\n  z: 1\n", "  parents: []\n", "parents: [ ]\n", "parents: []  \n", "p: []\nq: {}\n",
          "k:\n- a: []\n  b: {}\n", "null: []\n", "'q': []\n", "parents: [] # c\n", "e: ''\n", "f: []\n"]


def _clear() -> None:
    for memory in (frontmatter._LINES, frontmatter._ITEMS, frontmatter._EMPTIES, frontmatter._STR_KEYS):
        memory.clear()


def test_remembered_empties_read_as_pyyaml_reads_them() -> None:
    rng = random.Random(2615)
    accepted = remembered = 0
    for round_ in range(600):
        if round_ % 11 == 0:
            _clear()
        head = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))
        before = len(frontmatter._EMPTIES)
        known = set(frontmatter._EMPTIES)
        fast = frontmatter._load_layout(head)
        if fast is None:
            continue
        remembered += any(line + "\n" in head or head.startswith(line + "\n") for line in known)
        try:
            slow = load_yaml(head)
        except Exception:   # noqa: BLE001 - PyYAML refusing is a case the fast reader must not accept
            pytest.fail(f"fast reader accepted what PyYAML refuses: {head!r}")
        assert fast == slow, head
        assert repr(fast) == repr(slow), head
        assert len(frontmatter._EMPTIES) >= before
        accepted += 1
    assert accepted > 100 and remembered > 50   # many readings, many of them from remembered lines


def test_a_key_used_twice_is_pyyamls_even_when_remembered() -> None:
    _clear()
    assert frontmatter._load_layout("parents: []\n") == {"parents": []}
    assert "parents: []" in frontmatter._EMPTIES
    assert frontmatter._load_layout("parents: []\nparents: []\n") is None
    assert frontmatter._load_layout("a: 1\nparents: []\nb: 2\nparents: {}\n") is None


def test_each_reading_makes_its_own_empty_list() -> None:
    text = "---\nid: n_abc\nfamily: f\ntitle: t\nparents: []\nquotes: {}\n---\nbody\n"
    first, _body = split_frontmatter(text)
    second, _body = split_frontmatter(text)
    assert first == second == {"id": "n_abc", "family": "f", "title": "t", "parents": [], "quotes": {}}
    assert first["parents"] is not second["parents"] and first["quotes"] is not second["quotes"]
    first["parents"].append("n_x")
    first["quotes"]["h"] = "w"
    assert split_frontmatter(text)[0]["parents"] == [] and split_frontmatter(text)[0]["quotes"] == {}
