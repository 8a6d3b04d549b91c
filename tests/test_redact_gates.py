"""The redactor's scan gates skip only scans that could not have matched.

An anchored provider pattern is scanned only where its leading literal occurs (providers._leading_literal), and a
context rule only where one of its gates does. Both are speed-ups that must change nothing: here the providers
detector with every gate open (an empty literal occurs everywhere) finds exactly what it finds gated, over the
redaction corpus (every family's secret in every syntax), its negatives, generated lessons and random text, and the
literal itself is checked against the regex parser's own reading of each pattern.
"""
from __future__ import annotations

import random
import re

import pytest

from rose.redact import providers
from tests.support.gen_store import make_nodes
from tests.support.secret_corpus import negatives, positives

# characters the anchored patterns are built from, so random text hits their literals and bodies often
_ALPHABET = "AaQq~:-._/+=0123456789abcdefABCDEF T3BlbkFJ_mmkNRALAzFuus \n"


def _texts() -> list[str]:
    texts = [s.text for s in positives(seed=1234, per_family=6)]
    texts += [text for _name, text in negatives()]
    texts += [t for n in make_nodes(200) for t in (n.title, n.gist, n.body)]
    rng = random.Random(15)
    pieces = [lead for *_rest, lead in providers._compiled()[2]] + ["-" + "x" * 40, ":AA", "//0", "-us1"]
    for _ in range(3000):
        parts = [rng.choice(pieces) if rng.random() < 0.3 else
                 "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 60))) for _ in range(rng.randint(1, 8))]
        texts.append("".join(parts))
    return texts


def _find(text: str) -> list[tuple]:
    out: list = []
    providers.find(text, out)
    return sorted(out)


def test_gated_scans_find_what_ungated_ones_find(monkeypatch):
    texts = _texts()
    gated = [_find(t) for t in texts]
    assert all(gate is not None for gate in providers._gates())   # the run gates are on: this compares something
    anchor_re, table, anchored = providers._compiled()
    monkeypatch.setattr(providers, "_compiled", lambda: (anchor_re, table, [(*a[:4], "") for a in anchored]))
    monkeypatch.setattr(providers, "_gates", lambda: (None, None))
    assert [_find(t) for t in texts] == gated
    assert sum(1 for g in gated if g) > 100   # the corpus does reach the anchored rules


def test_run_gates_skip_only_scans_that_could_not_have_matched(monkeypatch):
    """Each gate alone taken out: the prefix scan inside the runs meets what a scan of the whole text meets, and a
    text with no run long enough holds no anchored finding; most generated lessons' titles have no run at all."""
    texts = _texts()
    rng = random.Random(8)
    tokens = []
    for sample in positives(seed=99, per_family=2):   # each provider token found, alone
        found: list = []
        providers.find(sample.text, found)
        tokens += [sample.text[start:end] for start, end, *_rest in found]
    for token in tokens:   # cut at every length around the runs' widths, glued to prose and to each other
        for length in range(8, min(len(token), 48) + 1):
            texts.append(rng.choice(["", "see ", "x=", "\n"]) + token[:length] +
                         rng.choice(["", " ok", ".", "-us12", ":AA" + "b" * 30]))
    gated = [_find(t) for t in texts]
    rows, anchored = providers._gates()
    for gates in ((None, anchored), (rows, None)):
        monkeypatch.setattr(providers, "_gates", lambda gates=gates: gates)
        assert [_find(t) for t in texts] == gated
    assert rows is not None and anchored is not None
    titles = [n.title for n in make_nodes(200)]
    assert sum(rows.search(t) is None for t in titles) > 150


def test_reach_reads_the_pattern():
    assert providers._reach(r"ab[0-9]{3,}") == (set("ab0123456789"), 5)
    assert providers._reach(r"x(?:yz|w)?(?![a-z])") == ({"x", "y", "z", "w"}, 1)
    assert providers._reach(r"(?<![0-9])[0-9]{8,10}$") == (set("0123456789"), 8)
    assert providers._reach(r"(?i)abc") is None       # case-insensitive: its characters are not its own
    assert providers._reach(r"a\w+") is None            # a class not read as a set of characters
    assert providers._reach(r"a[^b]") is None
    assert providers._reach(r"a.b") is None
    assert providers._run_gate([({"a"}, 3), None]) is None   # one pattern unread: no gate at all


def test_a_rows_reach_is_its_prefix_and_its_body_read_apart():
    """_gates reads each row's body once (85 bodies for 257 rows) and adds the prefix: the same reach as the row's
    whole regex, as _compiled builds it (no body that would bind to the prefix, such as a leading quantifier or a
    top-level alternation)."""
    for _kind, prefix, body, _flags in providers.ROWS:
        whole = providers._reach(re.escape(prefix) + body + "(?![A-Za-z0-9])")
        alone = providers._reach(body)
        assert whole is not None and alone is not None, (prefix, body)
        assert whole == (alone[0] | set(prefix), alone[1] + len(prefix)), (prefix, body)


@pytest.mark.parametrize("kind, pattern", [(a[0], a[1]) for a in providers.ANCHORED])
def test_every_match_begins_with_the_leading_literal(kind, pattern):
    lead = providers._leading_literal(pattern)
    for text in _texts()[:2000]:
        for m in re.finditer(pattern, text):
            assert text.startswith(lead, m.start()), (kind, text)


def test_leading_literal_reads_the_pattern():
    assert providers._leading_literal(r"\.atlasv1\.[A-Z]{3}") == ".atlasv1."
    assert providers._leading_literal(r"ab?c") == "a"            # an optional character ends the literal
    assert providers._leading_literal(r"a|b") == ""               # an alternation has none
    assert providers._leading_literal(r"(?i)abc") == ""           # case-insensitive: the literal is not itself
    assert providers._leading_literal(r"[ab]c") == ""



def test_remembered_short_texts_redact_as_the_redactor_does(monkeypatch):
    import rose.redact as redact_module

    monkeypatch.setattr(redact_module, "_MEMO_MAX", 50)   # the memory is emptied many times over
    short = [t[i:i + n] for t in _texts()[:400] for i, n in ((0, 20), (5, 64), (3, 65))]
    for _ in range(2):   # the second time from memory
        assert [redact_module.redact(t) for t in short] == [redact_module._redact(t) for t in short]
    assert len(redact_module._MEMO) <= 50
    assert any(redact_module.redact(t) != t for t in short)   # some of them are secrets
