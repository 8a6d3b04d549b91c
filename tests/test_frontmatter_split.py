"""split_frontmatter's quick split (str.find, for text whose only line break is "\\n") agrees with the line-by-line
reading on every text: random texts built of fences, newlines and the other characters str.splitlines breaks at."""
from __future__ import annotations

import random

import pytest

from rose.store import frontmatter
from rose.store.frontmatter import split_frontmatter


def _by_lines(text: str) -> tuple[str, str] | None:
    """The line-by-line reading: the first line after the opening one that is the fence closes the head."""
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:])
    return None


PIECES = ["-", "--", "---", "----", "\n", "a", " ", "---\n", "\n---\n", "\n---", "x: 1\n", "\r", "\r\n", "\u2028",
          "\x85", "\f", "body"]


def test_quick_split_agrees_with_the_line_reading():
    rng = random.Random(15)
    quick = 0
    for _ in range(100_000):
        text = "---\n" + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 9)))
        got = frontmatter._split_plain(text)
        if got is None:
            assert frontmatter._OTHER_BREAKS.search(text) or _by_lines(text) is None, repr(text)
        else:
            quick += 1
            assert got == _by_lines(text), repr(text)
    assert quick > 10_000


@pytest.mark.parametrize("text, head, body", [
    ("---\n---", "", ""),
    ("---\n---\n", "", ""),
    ("---\nid: n_1\n---\nbody\n", "id: n_1\n", "body"),
    ("---\nid: n_1\n---\n\n", "id: n_1\n", "\n"),
    ("---\nid: n_1\n----\n---\nx", "id: n_1\n----\n", "x"),
])
def test_fences(text, head, body, monkeypatch):
    monkeypatch.setattr(frontmatter, "load_yaml", lambda h: {"head": h})
    monkeypatch.setattr(frontmatter, "_load_layout", lambda h: {"head": h})
    data, got_body = split_frontmatter(text)
    assert data == {"head": head}
    assert got_body == (body[:-1] if body.endswith("\n") else body)


def test_never_closed_is_an_error():
    with pytest.raises(ValueError, match="never closed"):
        split_frontmatter("---\nid: n_1\n--- \nbody\n")
