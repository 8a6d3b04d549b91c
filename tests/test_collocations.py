"""Everyday multiword expressions (rose/data/collocations_en.txt, built from WordNet 3.0 by
scripts/build_collocations.py): the builder's filtering, the table's reader (a binary search over the file's bytes,
read once, on first use), and the rule that a store's word standing inside such an expression ("the price tag fell
off") is no term of the store there, unless some lesson holds the expression itself."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from rose import words
from rose.model import Node
from rose.store import Layers
from rose.store import index as index_mod

REPO = Path(__file__).resolve().parent.parent


def _builder():
    spec = importlib.util.spec_from_file_location("build_collocations", REPO / "scripts" / "build_collocations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A few synsets in WordNet's data-file format (wndb(5WN)), written for this test: offset, lexicographer file, type,
# word count (hex), words with lex ids, pointer count, pointers (symbol, offset, pos, source/target), gloss.
MINI_NOUN = """\
  1 This is a licence header line: two leading spaces.
00000100 09 n 02 computer_science 0 computing 0 000 | the science of computers
00000200 10 n 01 price_tag 0 001 @ 00000900 n 0000 | a label showing the price
00000300 06 n 01 hot_key 0 001 ;c 00000100 n 0000 | a key combination the computer reacts to
00000400 06 n 01 function_key 0 002 ;c 00000100 n 0000 ~ 00000500 n 0000 | a key with a function
00000500 06 n 01 soft_key 0 001 @ 00000400 n 0000 | a key under a screen (a hyponym of a computing sense)
00000600 15 n 01 New_York 0 000 | a city (a proper name)
00000700 04 n 01 check_in 0 000 | the act of arriving (a stop word inside)
00000800 10 n 01 tag 0 000 | a single word
00000900 10 n 02 shelf_life 0 stock_market 0 000 | two expressions, one synset
00001000 10 n 01 tag_line 0 000 | a catchy phrase
00001100 06 n 02 tag_line 0 hot_key 0 001 ;c 00000100 n 0000 | a computing sense of both
00001200 10 n 01 big_apple_pie_shop 0 000 | four words
"""


def test_the_builder_keeps_everyday_expressions_and_drops_coding_ones(tmp_path: Path) -> None:
    b = _builder()
    folder = tmp_path / "dict"
    folder.mkdir()
    (folder / "data.noun").write_text(MINI_NOUN, encoding="latin-1")
    for pos in ("verb", "adj", "adv"):
        (folder / f"data.{pos}").write_text("  header only\n", encoding="latin-1")
    lines = b.build(b.read_dict(folder))
    # kept: everyday expressions of two or three words
    assert lines == ["price tag", "shelf life", "stock market"]
    # dropped: a computing-domain sense ("hot key"), a hyponym of one ("soft key"), a lemma with any computing sense
    # among its others ("tag line"), a proper name, a stop word inside, a single word, four words
    out = tmp_path / "table.txt"
    assert b.main(["--dict", str(folder), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "price tag\nshelf life\nstock market\n"


def test_the_builder_reads_a_lemma_the_way_the_table_spells_it() -> None:
    b = _builder()
    assert b.expression("price_tag") == "price tag"
    assert b.expression("jump-start") == "jump start"
    assert b.expression("carry-on") is None            # "on" is a stop word
    assert b.expression("Buenos_Aires") is None
    assert b.expression("vitamin_b12") is None
    assert b.expression("tag") is None


def test_the_shipped_table_is_sorted_lower_case_expressions() -> None:
    data = words.COLLOCATIONS_FILE.read_text(encoding="utf-8")
    lines = data.splitlines()
    assert data.endswith("\n") and len(lines) > 10_000
    assert lines == sorted(set(lines))
    assert all(2 <= len(line.split(" ")) <= 3 and line == line.lower() for line in lines)
    assert not any(w in words.STOPWORDS for line in lines for w in line.split(" "))
    readme = (words.COLLOCATIONS_FILE.parent / "README.md").read_text(encoding="utf-8")
    assert "collocations_en.txt" in readme and "WordNet 3.0 Copyright 2006 by Princeton University" in readme


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "collocations.txt"
    monkeypatch.setattr(words, "COLLOCATIONS_FILE", path)
    words._collocations.cache_clear()
    yield path
    words._collocations.cache_clear()


def test_the_reader_finds_every_line_and_nothing_else(table: Path) -> None:
    lines = sorted(["alarm clock", "fire drill", "hash house", "price tag", "shelf life", "stock market",
                    "time zone", "zip code", "zip gun"])
    table.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    assert all(words.is_collocation(x) for x in lines)
    for absent in ("alarm", "alarm clocks", "price ta", "price tagx", "aaa", "zzz", "stock", "zip co", "time zone x"):
        assert not words.is_collocation(absent), absent


def test_the_reader_on_a_table_of_one_line(table: Path) -> None:
    table.write_text("price tag\n", encoding="utf-8")
    assert words.is_collocation("price tag")
    assert not words.is_collocation("a")
    assert not words.is_collocation("z")


def test_the_table_is_read_once_on_first_use_not_on_import(table: Path) -> None:
    table.write_text("price tag\n", encoding="utf-8")
    assert words._collocations.cache_info().currsize == 0
    words.is_collocation("price tag")
    words.is_collocation("time zone")
    info = words._collocations.cache_info()
    assert info.misses == 1 and info.hits >= 1


def test_expressions_around_a_word_take_a_plural_as_its_base(table: Path) -> None:
    table.write_text("fishing line\nprice tag\nsalt marsh harvest\n", encoding="utf-8")
    tokens = "the price tags fell off the salt marsh harvest box".split()
    assert words.collocations_around(tokens, 2) == ["price tag"]
    assert words.collocations_around(tokens, 1) == ["price tag"]
    assert words.collocations_around(tokens, 6) == ["salt marsh harvest"]
    assert words.collocations_around(tokens, 9) == []
    assert words.collocations_around("which line of the fishing log".split(), 1) == []


def test_a_word_is_set_aside_only_where_every_use_sits_in_an_expression(table: Path) -> None:
    table.write_text("library card\nprice tag\n", encoding="utf-8")
    never = lambda _phrase: False  # noqa: E731
    assert words.collocated("tag", "the price tag fell off a gift".split(), never)
    assert not words.collocated("tag", "which tag does the image get".split(), never)
    # a second use outside the expression keeps the word's other sense in play
    assert not words.collocated("library", "a library card from the city library".split(), never)
    assert not words.collocated("cache", "the price tag fell off".split(), never)
    # an expression the store holds is the store's own collocation
    asked: list[str] = []
    assert not words.collocated("tag", "the price tag fell off".split(), lambda p: asked.append(p) or True)
    assert asked == ["price tag"]


LESSONS = [
    ("n_tag00001", "Pin the image tag to the git sha",
     "Never deploy the latest tag; the image tag is the commit sha so a rollback finds it.", ["tag", "image"]),
    ("n_proxy001", "Route internal calls around the proxy",
     "Set NO_PROXY for cluster domains so internal calls skip the corporate proxy.", ["proxy"]),
    ("n_vote0001", "Leader election needs a quorum",
     "Each replica casts a vote; without a quorum no leader is elected.", ["election"]),
]


def _fill(layers: Layers, filler: int = 40) -> None:
    nodes = [Node(id=i, family="notes", title=t, body=body, gist=body[:60], tags=tags) for i, t, body, tags in LESSONS]
    nodes += [Node(id=f"n_fill{i:04d}", family="notes", title=f"Note {i} on the service",
                   body=f"Routine note {i} about the service configuration.", gist="routine note", tags=["notes"])
              for i in range(filler)]
    layers.project.save_many(nodes)


def _admitted(layers: Layers, prompt: str) -> set[str]:
    return {h.id for h in layers.project.index.search_evidence(prompt) if h.admitted}


def test_a_store_word_inside_an_everyday_expression_is_no_term(layers: Layers, monkeypatch) -> None:
    _fill(layers)
    assert words.is_collocation("price tag")   # the shipped table
    off_topic = "the price tag on the gift fell off, how do I find out what it cost?"
    hits = {h.id: h for h in layers.project.index.search_evidence(off_topic)}
    assert hits["n_tag00001"].terms == 0 and not hits["n_tag00001"].admitted
    # the same prompt without the rule: "tag" is a term of the store and the lesson holding it is admitted
    monkeypatch.setattr(index_mod, "collocated", lambda _w, _t, _h: False)
    assert "n_tag00001" in _admitted(layers, off_topic)


def test_the_store_sense_of_the_same_word_still_admits(layers: Layers) -> None:
    _fill(layers)
    assert "n_tag00001" in _admitted(layers, "which tag should the image get before we deploy it?")
    assert "n_proxy001" in _admitted(layers, "internal calls go through the corporate proxy, how do I skip it?")


def test_an_expression_the_store_holds_keeps_its_words(layers: Layers) -> None:
    _fill(layers)
    layers.project.save_many([Node(id="n_price001", family="notes", title="Print the price tag from the catalog",
                                   body="The price tag label comes from the catalog service, never from the cart.",
                                   gist="price tag label from the catalog", tags=["labels"])])
    assert "n_price001" in _admitted(layers, "where does the price tag label on the product page come from?")


def test_the_prompt_path_imports_nothing_new_for_it() -> None:
    code = ("import sys; import rose.words as w; w.collocated('tag', ['price', 'tag'], lambda p: False); "
            "print(','.join(m for m in ('typing', 'collections.abc', 'bisect') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {str(REPO / 'src')!r}); {code}"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
