#!/usr/bin/env python3
"""Regenerate lessons.jsonl and prompts.jsonl from the hand-written sources in authoring/.

    .venv/bin/python bench/recall_quality/build.py          (writes both files, prints checks)
    .venv/bin/python bench/recall_quality/build.py --check  (only checks; exit 1 on a problem)

Lesson ids are `n_` + 6 hex digits derived from the authoring key, so they are stable across rebuilds and
the JSONL stays diff-friendly. The JSONL files are the dataset; authoring/ is where they are edited.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from authoring import (lessons_corvid, lessons_dev, lessons_extra, lessons_infra, lessons_long,  # noqa: E402
                       lessons_ops, lessons_quality, lessons_services)
from authoring.prompts_heldout import (HELDOUT2_OFFTOPIC, HELDOUT2_PROMPTS, HELDOUT3_OFFTOPIC,  # noqa: E402
                                      HELDOUT3_PROMPTS, HELDOUT4_OFFTOPIC, HELDOUT4_PROMPTS, HELDOUT5_OFFTOPIC,
                                      HELDOUT5_PROMPTS, HELDOUT6_OFFTOPIC, HELDOUT6_PROMPTS, HELDOUT7_OFFTOPIC,
                                      HELDOUT7_PROMPTS, HELDOUT_OFFTOPIC, HELDOUT_PROMPTS)
from authoring.prompts_src import LONG_PROMPTS, OFFTOPIC_PROMPTS, PROMPTS  # noqa: E402

FAMILIES = {
    "deploy": lessons_infra.DEPLOY, "database": lessons_infra.DATABASE,
    "testing": lessons_quality.TESTING, "ci": lessons_quality.CI,
    "http": lessons_services.HTTP, "caching": lessons_services.CACHING, "auth": lessons_services.AUTH,
    "frontend": lessons_dev.FRONTEND, "git": lessons_dev.GIT, "packaging": lessons_dev.PACKAGING,
    "observability": lessons_ops.OBSERVABILITY, "performance": lessons_ops.PERFORMANCE, "style": lessons_ops.STYLE,
    "corvid": lessons_corvid.CORVID,
}


def lesson_id(key: str) -> str:
    return "n_" + hashlib.sha1(f"rose-retrieval-set:{key}".encode()).hexdigest()[:6]


def lessons() -> list[dict]:
    out = []
    for family, rows in FAMILIES.items():
        rows = rows + lessons_extra.EXTRA.get(family, []) + lessons_long.LONG.get(family, [])
        for key, title, gist, body, tags in rows:
            out.append({"id": lesson_id(key), "key": key, "family": family, "title": title, "gist": gist,
                        "body": body, "tags": tags.split()})
    return out


def prompts(by_key: dict[str, dict]) -> list[dict]:
    """Ids are positional (q001 ...): the long-lesson prompts and the off-topic ones (needs empty) come last, then
    the held-out ones (`"heldout": true`, then `2` to `7` for the later rounds), written after the rule
    they test was chosen."""
    out = []
    rows = PROMPTS + LONG_PROMPTS + [(text, "", False) for text in OFFTOPIC_PROMPTS]
    heldout = HELDOUT_PROMPTS + [(text, "", False) for text in HELDOUT_OFFTOPIC]
    heldout2 = HELDOUT2_PROMPTS + [(text, "", False) for text in HELDOUT2_OFFTOPIC]
    heldout3 = HELDOUT3_PROMPTS + [(text, "", False) for text in HELDOUT3_OFFTOPIC]
    heldout4 = HELDOUT4_PROMPTS + [(text, "", False) for text in HELDOUT4_OFFTOPIC]
    heldout5 = HELDOUT5_PROMPTS + [(text, "", False) for text in HELDOUT5_OFFTOPIC]
    heldout6 = HELDOUT6_PROMPTS + [(text, "", False) for text in HELDOUT6_OFFTOPIC]
    heldout7 = HELDOUT7_PROMPTS + [(text, "", False) for text in HELDOUT7_OFFTOPIC]
    rounds = [heldout, heldout2, heldout3, heldout4, heldout5, heldout6, heldout7]
    starts = [len(rows)]                                            # where each held-out round begins
    for block in rounds[:-1]:
        starts.append(starts[-1] + len(block))
    for n, (text, keys, unnamed) in enumerate(rows + [row for block in rounds for row in block], 1):
        ks = keys.split()
        missing = [k for k in ks if k not in by_key]
        if missing:
            raise SystemExit(f"prompt {n} needs unknown lesson key(s) {missing}: {text!r}")
        out.append({"id": f"q{n:03d}", "prompt": text, "needs": [by_key[k]["id"] for k in ks], "needs_keys": ks,
                    "unnamed": unnamed,
                    **({} if n <= starts[0] else {"heldout": heldout_round(n, starts)})})
    return out


def heldout_round(n: int, starts: list[int]) -> bool | int:
    """Round 1 is marked `true` (it was the only one once), later rounds by their number."""
    r = sum(n > s for s in starts)
    return True if r == 1 else r


def shared_words(prompt: str, lesson: dict, fields: tuple[str, ...] = ("title", "gist", "tags")) -> list[str]:
    """Content words of the prompt that FTS5 (porter, unicode61, rose's stopwords) matches in the given fields."""
    from rose.store.index import fts_query

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, gist, tags, body, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES (?,?,?,?)", (lesson["title"], lesson["gist"], " ".join(lesson["tags"]),
                                                    lesson["body"]))
    cols = "{" + " ".join(fields) + "}"
    hits = []
    for term in (t for t in fts_query(prompt).split(" OR ") if t):
        if conn.execute("SELECT 1 FROM t WHERE t MATCH ?", (f"{cols} : {term}",)).fetchone():
            hits.append(term.strip('"'))
    conn.close()
    return hits


def check(ls: list[dict], ps: list[dict]) -> list[str]:
    problems = []
    ids = [x["id"] for x in ls]
    if len(set(ids)) != len(ids):
        problems.append("duplicate lesson ids")
    if len({x["key"] for x in ls}) != len(ls):
        problems.append("duplicate lesson keys")
    by_id = {x["id"]: x for x in ls}
    for x in ls:
        if not re.fullmatch(r"n_[0-9a-f]{6}", x["id"]):
            problems.append(f"bad id {x['id']}")
        sentences = len(re.findall(r"[.!?](\s|$)", x["body"]))
        if not 1 <= sentences <= 6 and not (x["key"].startswith("long-") and x["body"].count("## ") >= 4):
            problems.append(f"{x['key']}: body has {sentences} sentences")
    for p in ps:
        if not 1 <= len(p["needs"]) <= 3 and not (p["needs"] == [] and not p["unnamed"]):
            problems.append(f"{p['id']}: needs {len(p['needs'])} lessons")
        if p["unnamed"]:
            for nid in p["needs"]:
                words = shared_words(p["prompt"], by_id[nid])
                if words:
                    problems.append(f"{p['id']} unnamed but shares {words} with {by_id[nid]['key']}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    ls = lessons()
    ps = prompts({x["key"]: x for x in ls})
    problems = check(ls, ps)
    for line in problems:
        print("PROBLEM", line)
    fams = {x["family"] for x in ls}
    unused = {x["key"] for x in ls} - {k for p in ps for k in p["needs_keys"]}
    print(f"{len(ls)} lessons in {len(fams)} families ({sum(x['key'].startswith('long-') for x in ls)} long), "
          f"{len(ps)} prompts ({sum(not p['needs'] for p in ps)} off-topic), "
          f"{sum(p['unnamed'] for p in ps)} unnamed, {sum(len(p['needs']) > 1 for p in ps)} multi-lesson, "
          f"{len(unused)} lessons needed by no prompt")
    if not args.check and not problems:
        with open(HERE / "lessons.jsonl", "w", encoding="utf-8") as f:
            for x in ls:
                f.write(json.dumps(x, ensure_ascii=False) + "\n")
        with open(HERE / "prompts.jsonl", "w", encoding="utf-8") as f:
            for p in ps:
                f.write(json.dumps(p, ensure_ascii=False) + "\n")
        print("wrote lessons.jsonl and prompts.jsonl")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
