"""The frontmatter reader for dump_yaml's own layout (rose.store.frontmatter._load_layout) reads exactly what PyYAML
reads, or declines: on what rose writes, on hostile values, on random text and on frontmatter written by hand."""
from __future__ import annotations

import random

from rose.store import usage
from rose.store.frontmatter import _load_layout, dump_yaml, load_yaml, render_node, split_frontmatter
from tests.support.gen_store import make_nodes

HOSTILE = ["yes", "no", "on", "off", "Yes", "TRUE", "True", "true", "false", "null", "Null", "~", "123", "-1", "+1",
           "007", "00", "0x1f", "0o17", "1_000", "1:20", "12:30:45", "2026-12-01", "2026-12-01T10:00:00Z", "0.5",
           "1.", ".5", ".inf", "-.inf", ".nan", "1e5", "1.0e+5", "a: b", "a:b", "x:", ":x", "a #b", "a#b", "#x",
           "- x", "-x", "? x", "?x", "'quoted'", "it's", "''", "'", '"dq"', 'say "hi"', "back\\slash", "tab\tx",
           "nl\nx", "two\n\nlines", "cr\rx", "\u2028", "a\u2029b", "\x85", "\ufeff", "\x7f", "ü café ñ 漢字 🦀", "  lead",
           "trail  ", "", " ", "[1]", "[]", "{}", "{a: 1}", "&anchor", "*alias", "!tag", "!!str x", "|", ">", "%x",
           "@x", "`x", ",x", "x,y", "=", "<<", "---", "...", "--- x", "x" * 300, "word " * 40, "a\\nb", "\\u263a",
           "k: v\nk2: v2", "- a\n- b", "0.31", "3.14159", "-0.0", "1e-3", "NaN", "~x", "x~", "%", "a  b"]
ALPHABET = list("ab :#-'\"\\\n\t[]{},&*!|>%@`?~.0159eE+_xyz ü漢") + ["\u2028", "\x85", "  ", ": ", " #"]


def _same(head: str) -> bool:
    """The fast reader declines, or agrees with PyYAML to the type (True is not 1, 1.0 is not 1)."""
    fast = _load_layout(head)
    if fast is None:
        return True
    slow = load_yaml(head)
    return repr(fast) == repr(slow) and fast == slow


def _head(data: object) -> str:
    return dump_yaml(data)


def test_every_lesson_rose_writes_is_read_by_the_fast_reader_as_pyyaml_reads_it() -> None:
    taken = 0
    for node in make_nodes(400, seed=11):
        node.evidence = [f"session {node.id}: 'quoted' and \"double\""]
        node.extra = {"archived_because": "stale: unused 90 days", "note": node.title}
        head = render_node(node, usage.meaning(node)).split("---\n")[1]
        assert _same(head)
        taken += _load_layout(head) is not None
    assert taken >= 390   # the fast reader is the one that reads what rose writes


def test_hostile_values_in_every_place_read_the_same_or_go_to_pyyaml() -> None:
    for value in HOSTILE:
        for data in ({"title": value}, {"tags": [value, "x"]}, {"extra": {"k": value, "deep": {"k2": value}}},
                     {"dropped": [{"claim": value, "kind": "fact", "attached": [value]}, {"claim": "b"}]},
                     {value or "empty": 1} if value.isidentifier() else {"k": [[value]]}):
            assert _same(_head(data)), (value, data)


def test_random_text_reads_the_same_or_goes_to_pyyaml() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        value = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
        data = {"id": "n_000001", "title": value, "tags": [value], "extra": {"v": value}}
        assert _same(_head(data)), value


def test_frontmatter_written_by_hand_reads_the_same_or_goes_to_pyyaml() -> None:
    heads = ["id: n_1\ntags: [a, b]\n", "id: n_1  # a comment\n", "# comment\nid: n_1\n", "id: n_1\n\ntitle: t\n",
             "id: n_1\ntags:\n  - a\n  - b\n", "id: n_1\nextra:\n    k: v\n", "id: n_1\nid: n_2\n",
             "id: &a n_1\nx: *a\n", "title: >\n  folded\n  text\n", "title: |\n  literal\n", "title: two\n  lines\n",
             "'id': n_1\n", "id:n_1\n", "id: n_1\n  bad: indent\n", "- a\n- b\n", "id: n_1\n- a\n", "? id\n: n_1\n",
             "id: 'unclosed\n", "id: 'a'b'\n", "title: \"a\\tb\"\n", "created: 2026-12-01\n", "level: 0x1\n",
             "n: 1\nm: -1\nf: 1.5\nb: false\nz: ~\ns: ''\nl: []\nd: {}\n", "x:\n- - a\n", "x:\n-\n  a: 1\n",
             "x:\n- a: 1\n  b:\n  - c\n  d: 2\n- e\n", "id: n_1\r\n", "k: v\n..."]
    for head in heads:
        try:
            slow_ok = True
            load_yaml(head)
        except Exception:   # noqa: BLE001 - PyYAML refuses it: the fast reader must decline too
            slow_ok = False
        if not slow_ok:
            assert _load_layout(head) is None, head
        else:
            assert _same(head), head


def test_split_frontmatter_reports_the_same_problems_as_before() -> None:
    for text in ("---\nid: [unclosed\n---\nbody\n", "---\n- a\n---\nbody\n", "---\nid: 'x\n---\nbody\n"):
        try:
            split_frontmatter(text)
        except ValueError as exc:
            assert "frontmatter" in str(exc)
        else:
            raise AssertionError(text)


def _pyyaml_text(data: object) -> str:
    import yaml

    from rose.store.frontmatter import WIDTH, _Dumper

    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=WIDTH)


def _writes_the_same(data: dict) -> bool:
    """The fast writer declines, or writes PyYAML's own text, which PyYAML and the fast reader (when it takes it)
    read back as the data written, to the type: what stands in for a read-back check on every write."""
    from rose.store.frontmatter import _dump_layout

    fast = _dump_layout(data)
    if fast is None:
        return True
    back, quick = load_yaml(fast), _load_layout(fast)
    return fast == _pyyaml_text(data) and repr(back) == repr(data) and (quick is None or repr(quick) == repr(data))


def test_the_fast_writer_writes_exactly_pyyamls_text_or_declines() -> None:
    taken = 0
    for node in make_nodes(400, seed=13):
        node.evidence = [f"session {node.id}: 'quoted' and \"double\""]
        node.extra = {"archived_because": "stale: unused 90 days", "note": node.title, "n": 3, "f": 0.25}
        meaning = usage.meaning(node)
        assert _writes_the_same(meaning)
        from rose.store.frontmatter import _dump_layout
        taken += _dump_layout(meaning) is not None
    assert taken >= 300   # most of what rose writes takes the fast path
    for value in [*HOSTILE, 0, -3, 10**20, 0.5, -0.0, 1e-05, 1e20, float("inf"), True, False, None, [], {}, [[]],
                  [{}], {"a": []}, [{"a": [1, {"b": 2}]}], ("t",), b"x"]:
        for data in ({"title": value}, {"tags": [value, "x"]}, {"extra": {"k": value, "deep": {"k2": value}}},
                     {"dropped": [{"claim": value, "kind": "fact", "attached": [value]}, {"claim": "b"}]}):
            assert _writes_the_same(data), (value, data)


def test_the_fast_writer_folds_nothing_pyyaml_would_fold() -> None:
    rng = random.Random(9)
    for _ in range(2000):
        words = [("".join(rng.choice("abcxyz'#:-") for _ in range(rng.randint(1, 12)))) for _ in range(rng.randint(1, 20))]
        value = " ".join(words)
        for data in ({"gist": value}, {"tags": [value]}, {"dropped": [{"claim": value}]}, {"k" * rng.randint(1, 40): value}):
            assert _writes_the_same(data), data


def test_random_text_is_written_as_pyyaml_writes_it() -> None:
    rng = random.Random(21)
    for _ in range(3000):
        value = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))
        assert _writes_the_same({"id": "n_000001", "title": value, "tags": [value], "extra": {"v": value}}), value


NESTED_ALPHABET = [*ALPHABET, *"ABC/()=;<>$^", "\u00a0", "\u2027", "\u202a", "\ud7ff", "\ue000", "\ufefe", "\uff00",
                   "\ufffd", "\ufeff", "\x7f", "\x80", "\x9f", "\U0001f980", "yes", "null", "~", "0x1", "1e3", "- ",
                   "---", "...", "'", "''"]


def _random_value(rng: random.Random, depth: int) -> object:
    """A frontmatter value of any shape rose's writer may meet: scalars of every type, text near the fold width,
    and mappings and sequences nested in each other, empty or not, shared or not."""
    pick = rng.random()
    if depth < 3 and pick < 0.15:
        return {rng.choice(["k", "id", "x_1", "_", "yes", "null", "True", "a" * rng.randint(1, 30), "k-1", "1"]):
                _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if depth < 3 and pick < 0.3:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if pick < 0.4:
        return rng.choice([None, True, False, 0, -7, 2**64, 0.5, -0.0, 1e-7, 3.25, float("inf"), ("t",), b"b"])
    length = rng.choice([rng.randint(0, 12), rng.randint(80, 100)])
    return "".join(rng.choice(NESTED_ALPHABET if rng.random() < 0.3 else "abc xyz") for _ in range(length))


def test_random_nested_data_is_written_as_pyyaml_writes_it_and_reads_back() -> None:
    rng = random.Random(33)
    taken = 0
    for _ in range(6000):
        data = {"id": "n_000001", "title": _random_value(rng, 1), "extra": _random_value(rng, 0),
                "dropped": [_random_value(rng, 2), {"claim": _random_value(rng, 3)}]}
        if rng.random() < 0.05:   # one object met twice: PyYAML writes an anchor and an alias
            data["again"] = data["dropped"]
        assert _writes_the_same(data), data
        from rose.store.frontmatter import _dump_layout
        taken += _dump_layout(data) is not None
    assert taken >= 150   # the fast writer takes a share of it: the comparison is not vacuous
