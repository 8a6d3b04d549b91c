"""The fast frontmatter reader's line memories (rose.store.frontmatter): a full memory is emptied and filled again,
and lines that are only a key over a nested block (`tags:`) are remembered (_HEADS). What it reads equals PyYAML's,
remembered or not, at every size of memory, and no memory grows past its bound."""
from __future__ import annotations

import random

import pytest

from rose.store import frontmatter
from rose.store.frontmatter import dump_yaml, load_yaml
from tests.support.gen_store import make_nodes
from tests.support.frontmatter_check import pyyaml_reading

PIECES = ["tags:\n- a\n- b\n", "tags:\n", "dropped:\n- claim: c\n  kind: fact\n", "x:\n  tags:\n  - a\n",
          "x:\n  y: 1\n", "level: 0\n", "tags: []\n", "title: t\n", "tags:\n  a: 1\n", "null:\n- a\n",
          "tags:\n- 'x: y'\n", "y:\n", "tags:\n-  a\n", "tags:\n - a\n", "z: 'q'\n", "x:\n  y:\n  - 1\n"]


def _clear() -> None:
    for memory in (frontmatter._LINES, frontmatter._ITEMS, frontmatter._EMPTIES, frontmatter._STR_KEYS,
                   frontmatter._HEADS):
        memory.clear()


def _heads(rng: random.Random, count: int) -> list[str]:
    lessons = [dump_yaml(n.to_dict()) for n in make_nodes(60)]
    return [rng.choice(lessons) if rng.random() < 0.4
            else "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4))) for _ in range(count)]


@pytest.mark.parametrize("bound", [1, 3, 8, 4096])
def test_reads_equal_pyyaml_at_every_size_of_memory(bound: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontmatter, "_LINES_MAX", bound)
    _clear()
    rng = random.Random(1506 + bound)
    accepted = 0
    for head in _heads(rng, 1500):
        fast = frontmatter._load_layout(head)
        for memory in (frontmatter._LINES, frontmatter._ITEMS, frontmatter._HEADS):
            assert len(memory) <= bound
        if fast is None:
            continue
        slow = pyyaml_reading(head)
        assert repr(fast) == repr(slow), head
        accepted += 1
    assert accepted > 500


def test_a_full_memory_is_refilled_with_what_recurs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontmatter, "_LINES_MAX", 4)
    _clear()
    for n in range(10):
        frontmatter._load_layout(f"id: n_{n}\nstatus: active\n")
    assert "status: active" in frontmatter._LINES   # held though one-off lines filled the memory again and again
    assert len(frontmatter._LINES) <= 4


def test_a_remembered_key_line_reads_as_it_did() -> None:
    _clear()
    assert frontmatter._load_layout("tags:\n- a\n") == {"tags": ["a"]}
    assert frontmatter._HEADS.get("tags:") == (0, "tags")
    assert frontmatter._load_layout("tags:\n") == {"tags": None} == load_yaml("tags:\n")
    assert frontmatter._load_layout("tags:\n- a\ntags:\n- b\n") is None   # a key used twice: PyYAML's
    assert frontmatter._load_layout("x:\n  tags:\n  - b\n") == {"x": {"tags": ["b"]}}
    assert frontmatter._load_layout("tags:\n  a: 1\n") == {"tags": {"a": 1}}
    assert frontmatter._load_layout("  tags:\n- a\n") is None


CHARS = "ab ~\n\r\t\x00\x1f\x7f\x85\xa0\u2028\u202a\ud7ff\ue000\ufeff\ufffd\U0001f600"


def test_the_regexes_compiled_on_first_use_answer_as_compiled_ones() -> None:
    import re

    rng = random.Random(1507)
    for lazy in (frontmatter._AWKWARD, frontmatter._UNWRITABLE):
        eager = re.compile(lazy.pattern)
        hits = 0
        for _ in range(5000):
            text = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 8)))
            found = lazy.search(text)
            assert (found and found.group()) == (eager.search(text) and eager.search(text).group()), repr(text)
            hits += found is not None
        assert 500 < hits < 5000


def test_printable_ascii_is_writable() -> None:
    import re

    unwritable = re.compile(frontmatter._UNWRITABLE.pattern)
    for code in range(128):
        assert (chr(code).isascii() and chr(code).isprintable()) == (unwritable.search(chr(code)) is None), code
