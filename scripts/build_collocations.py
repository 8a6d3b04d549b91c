#!/usr/bin/env python3
"""Build src/rose/data/collocations_en.txt, everyday multiword expressions of English, from WordNet 3.0.

    apt-get download wordnet-base && python scripts/build_collocations.py wordnet-base_*.deb
    python scripts/build_collocations.py --dict DIR        (a folder holding WordNet's data.noun ... data.adv)

Run by hand when the table is to be rebuilt, never at run time (rose reads only the table it writes). A line of the
table is one WordNet lemma of two or three words ("price tag", "stock market", "chopping block"), lower case, its
words ASCII letters and none of them a stop word of rose's search. Left out: proper names (a lemma with a capital),
and every lemma one of whose senses is a coding sense: a synset WordNet files under a computing topic domain
(computer science, computers, programming, simulation, computer graphics, information science), or a hyponym of one.
What recall does with the table is in rose.words.collocated.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from rose.words import STOPWORDS  # noqa: E402

OUT = REPO / "src" / "rose" / "data" / "collocations_en.txt"
POS_FILES = ("noun", "verb", "adj", "adv")
# WordNet's topic domains for computing, by a lemma of the domain synset (offsets change between versions)
CODING_DOMAINS = frozenset({"computer_science", "computer", "computer_programming", "computer_simulation",
                            "computer_graphics", "information_science"})
MAX_WORDS = 3


class Synset:
    __slots__ = ("key", "lemmas", "domains", "hyponyms")

    def __init__(self, key: tuple[str, str], lemmas: list[str], domains: list[tuple[str, str]],
                 hyponyms: list[tuple[str, str]]):
        self.key, self.lemmas, self.domains, self.hyponyms = key, lemmas, domains, hyponyms


def _pos(letter: str) -> str:
    return "a" if letter == "s" else letter   # satellite adjectives share the adjective file's offsets


def parse_data(lines: Iterable[str]) -> Iterator[Synset]:
    """Synsets of one WordNet data.* file (format: wndb(5WN)); the licence header lines start with two spaces."""
    for line in lines:
        if line.startswith("  ") or not line.strip():
            continue
        f = line.split(" | ", 1)[0].split()
        offset, pos, words = f[0], _pos(f[2]), int(f[3], 16)
        lemmas = [f[4 + 2 * i] for i in range(words)]
        i = 4 + 2 * words
        domains, hyponyms = [], []
        for _ in range(int(f[i])):
            symbol, target, target_pos = f[i + 1], f[i + 2], _pos(f[i + 3])
            i += 4
            if symbol == ";c":
                domains.append((target, target_pos))
            elif symbol in ("~", "~i"):
                hyponyms.append((target, target_pos))
        yield Synset((offset, pos), lemmas, domains, hyponyms)


def coding_synsets(synsets: dict[tuple[str, str], Synset]) -> set[tuple[str, str]]:
    """Synsets filed under a computing topic domain, and every hyponym of one ("hypertext" under a domain term)."""
    domains = {k for k, s in synsets.items() if CODING_DOMAINS & {w.lower() for w in s.lemmas}}
    todo = [k for k, s in synsets.items() if any(d in domains for d in s.domains)] + list(domains)
    seen: set[tuple[str, str]] = set()
    while todo:
        k = todo.pop()
        if k in seen or k not in synsets:
            continue
        seen.add(k)
        todo.extend(synsets[k].hyponyms)
    return seen


def expression(lemma: str) -> str | None:
    """A WordNet lemma as a line of the table, or None when it is not an everyday multiword expression of the kind
    the table holds (one word, a proper name, a stop word, a digit or a letter outside a-z)."""
    if lemma != lemma.lower():
        return None
    words = lemma.replace("-", "_").split("_")
    if not 2 <= len(words) <= MAX_WORDS:
        return None
    if any(len(w) < 2 or not (w.isascii() and w.isalpha()) or w in STOPWORDS for w in words):
        return None
    return " ".join(words)


def build(synsets: dict[tuple[str, str], Synset]) -> list[str]:
    coding = coding_synsets(synsets)
    keep: set[str] = set()
    drop: set[str] = set()
    for key, s in synsets.items():
        for lemma in s.lemmas:
            lemma = lemma.split("(", 1)[0]          # adjective markers: "long(a)"
            line = expression(lemma)
            if line is not None:
                (drop if key in coding else keep).add(line)
    return sorted(keep - drop)


def read_dict(folder: Path) -> dict[tuple[str, str], Synset]:
    synsets: dict[tuple[str, str], Synset] = {}
    for name in POS_FILES:
        with (folder / f"data.{name}").open(encoding="latin-1") as fh:
            for s in parse_data(fh):
                synsets[s.key] = s
    return synsets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("deb", nargs="?", type=Path, help="Debian's wordnet-base .deb (apt-get download wordnet-base)")
    src.add_argument("--dict", type=Path, help="a folder holding WordNet's data.noun, data.verb, data.adj, data.adv")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rose-wordnet-") as tmp:
        folder = args.dict
        if folder is None:
            subprocess.run(["dpkg-deb", "-x", str(args.deb), tmp], check=True)
            folder = Path(tmp) / "usr" / "share" / "wordnet"
        sums = {n: hashlib.sha256((folder / f"data.{n}").read_bytes()).hexdigest() for n in POS_FILES}
        lines = build(read_dict(folder))
    args.out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} expressions -> {args.out}")
    for n, digest in sums.items():
        print(f"  data.{n} sha256 {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
