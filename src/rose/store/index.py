"""The derived index: a machine-local SQLite database with full-text search over every node of one store.

Files are the source of truth. The index records each node file's (mtime, size) and catches up with the files
on `sync()`: new and hand-edited files are parsed, deleted ones dropped, corrupt ones recorded as problems (and
left untouched on disk). It also folds usage.jsonl per node (rose.store.usage; `catch_up_usage`), so a row's
use_count and last_used, what `rose status` and recall read, are the folded values and no read folds the log.
Deleting index.db loses nothing; it is rebuilt on the next open. Schema changes go through MIGRATIONS, applied in
order and recorded by name.
"""
from __future__ import annotations

import array
import contextlib
import itertools
import json
import math
import operator
import os
import re
import sqlite3
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path

from rose.text import load_json
from rose.errors import UnsafeFile
from rose.model import SERVABLE as model_servable
from rose.model import Status
from rose.retention.rules import effective_importance, preview
from rose.store import bm25, reader, usage
from rose.store.events import note_skips
from rose.store.pool import Pool, identity
from rose.store.archive import is_cold_path
from rose.store.atomic import create_private, private_dir
from rose.store.usage import View
from rose.tokens import estimate
from rose.typedrecord import NamedTuple, Record, field, fields
from rose.words import STOPWORDS, everyday

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.records import Node

    Upsert = tuple[Node, str, int, int, View | None]   # Index.upsert's arguments: node, path, mtime_ns, size, base
    # what sync and rebuild read a lesson file with, given its path as text (the store's root joined to its path in
    # the store): a Node, or one with the usage its file itself holds
    Parse = Callable[[str], Node | tuple[Node, View | None]]

# Whether a row lists as cold: in the archive, or a legacy `archived` status outside it. The list's queries say it in
# these very words, so SQLite reads them from the index made on this expression (nodes_listing).
COLD_SQL = "(cold OR status = 'archived')"
# Whether a row has lineage (a parent, or lessons it was derived from), as the index writes an empty list (_ids_json);
# the tree's queries say it in these words, so SQLite reads the partial indexes made on them (nodes_lineage, _lone).
LINEAGE_SQL = "parents != '[]' OR derived_from != '[]'"
NO_LINEAGE_SQL = "parents = '[]' AND derived_from = '[]'"
DISPUTED_SQL = f"status = '{Status.DISPUTED.value}'"   # the open conflicts (rose.learn.conflicts), index nodes_disputed

# Each migration is (name, SQL). Append only: never edit one that has shipped.
MIGRATIONS: list[tuple[str, str]] = [
    ("0001_nodes_and_files", """
        CREATE TABLE nodes (
            id TEXT PRIMARY KEY,
            family TEXT NOT NULL,
            title TEXT NOT NULL,
            gist TEXT NOT NULL,
            tags TEXT NOT NULL,            -- space-separated, for FTS and display
            body TEXT NOT NULL,
            level INTEGER NOT NULL,
            status TEXT NOT NULL,
            origin TEXT NOT NULL,
            memory_type TEXT NOT NULL,
            scope TEXT NOT NULL,
            importance REAL NOT NULL,
            parents TEXT NOT NULL,         -- JSON list of ids (up)
            derived_from TEXT NOT NULL,    -- JSON list of ids (down)
            dropped INTEGER NOT NULL,      -- size of the delta manifest
            tokens INTEGER NOT NULL,       -- estimated tokens of the body
            created TEXT NOT NULL,
            last_used TEXT NOT NULL,
            use_count INTEGER NOT NULL,
            path TEXT NOT NULL,            -- relative to the store root
            conflict TEXT NOT NULL,        -- an unresolved contradiction, asked at recall
            patches TEXT NOT NULL          -- JSON list of dropped claims that rescued this node (sticky patches)
        );
        CREATE INDEX nodes_family ON nodes(family);
        CREATE VIRTUAL TABLE nodes_fts USING fts5(
            id UNINDEXED, title, gist, tags, body, tokenize = 'porter unicode61'
        );
        CREATE TABLE files (
            path TEXT PRIMARY KEY,         -- relative to the store root
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            node_id TEXT,                  -- NULL when the file could not be parsed
            problem TEXT                   -- why it could not be parsed
        );
    """),
    ("0002_embeddings", """
        CREATE TABLE embeddings (
            node_id TEXT PRIMARY KEY,
            model TEXT NOT NULL,           -- the embedder's name: vectors of different spaces never mix
            vec BLOB NOT NULL              -- float32, L2-normalised
        );
    """),
    ("0003_meta", """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
    """),
    ("0004_fts_by_rowid_and_text_hashes", """
        -- the FTS row of a node shares its rowid, so a node's FTS row is deleted by key, not by scanning the table
        DELETE FROM nodes_fts;
        INSERT INTO nodes_fts(rowid, id, title, gist, tags, body) SELECT rowid, id, title, gist, tags, body FROM nodes;
        -- a vector remembers the text it was made from: an unchanged lesson keeps its vector across re-indexing
        ALTER TABLE nodes ADD COLUMN text_hash TEXT NOT NULL DEFAULT '';
        ALTER TABLE embeddings ADD COLUMN text_hash TEXT NOT NULL DEFAULT '';
    """),
    ("0005_compression_facts", """
        -- what `rose status` sums about compression, without opening every compressed lesson's file
        ALTER TABLE nodes ADD COLUMN origin_rescues INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE nodes ADD COLUMN heldout_passed INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE nodes ADD COLUMN heldout_total INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE nodes ADD COLUMN trials INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE nodes ADD COLUMN gaps INTEGER NOT NULL DEFAULT 0;
        UPDATE files SET mtime_ns = -1;  -- every file is re-read once, to fill the new columns
    """),
    ("0006_unreconciled", """
        -- lessons stored while no backend answered: the learner finds them here instead of reading every file
        ALTER TABLE nodes ADD COLUMN unreconciled INTEGER NOT NULL DEFAULT 0;
        UPDATE files SET mtime_ns = -1;
    """),
    ("0007_usage", """
        -- usage.jsonl folded per node (rose.store.usage), so no read and no row ever folds the log itself
        CREATE TABLE usage (
            node_id TEXT PRIMARY KEY,
            fold TEXT NOT NULL             -- JSON: the folded state of the node's records
        );
        CREATE TABLE usage_seen (
            rid TEXT PRIMARY KEY           -- records already folded: a line that appears twice counts once
        ) WITHOUT ROWID;
        -- what a row's usage columns are recomputed from when only the log changed (no file is read again)
        ALTER TABLE nodes ADD COLUMN usage_base TEXT NOT NULL DEFAULT '';   -- an old file's own usage (JSON)
        ALTER TABLE nodes ADD COLUMN claims TEXT NOT NULL DEFAULT '[]';     -- JSON [[claim key, claim text]]
        UPDATE files SET mtime_ns = -1;
    """),
    ("0008_tree_manifests", """
        -- what `rose tree` draws under a lesson, without parsing its file: the delta manifest and the trials, their
        -- meaning only, keyed (JSON {"dropped": [[key, claim]], "trials": [[key, trial]]}); their counters come
        -- from the usage fold when read. '' for a row written before: its file is read instead.
        ALTER TABLE nodes ADD COLUMN manifest TEXT NOT NULL DEFAULT '';
    """),
    ("0009_retention", """
        -- the cold archive (rose.store.archive): a row whose file is under archive/ is cold; its status reads
        -- 'archived' and `cold_from` keeps the file's own status (what a restore returns to)
        ALTER TABLE nodes ADD COLUMN cold INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE nodes ADD COLUMN cold_from TEXT NOT NULL DEFAULT '';
        -- `importance` is the evidence-moved value recall and retention read; the file's own (as minted) beside it
        ALTER TABLE nodes ADD COLUMN base_importance REAL NOT NULL DEFAULT 0.6;
        ALTER TABLE nodes ADD COLUMN confidence REAL NOT NULL DEFAULT 0.5;
        CREATE INDEX nodes_cold ON nodes(cold, scope, memory_type);
        -- cold records are searched only here, by their catalog fields, exactly (no stemming): never by nodes_fts
        -- (hot recall) and never embedded
        CREATE VIRTUAL TABLE cold_fts USING fts5(id UNINDEXED, title, tags, preview, tokenize = 'unicode61');
        UPDATE files SET mtime_ns = -1;
    """),
    ("0010_facts_index", """
        -- what `rose status`, `rose list` and retention sum, held in one narrow index in the order they group by:
        -- their aggregates read it alone (no lesson row, no sort), ~10 ms at 50,000 lessons instead of ~150
        CREATE INDEX nodes_facts ON nodes(scope, memory_type, family, level, status, origin, tokens,
                                          heldout_passed, heldout_total, origin_rescues, trials, gaps);
    """),
    ("0011_clean_files", """
        -- a lesson file whose text the redactor left unchanged, by path and a digest of the redactor's stamp and
        -- the file's bytes (rose.store.store): re-indexing the same bytes under the same redactor skips redaction
        CREATE TABLE clean_files (
            path TEXT PRIMARY KEY,
            digest BLOB NOT NULL
        ) WITHOUT ROWID;
    """),
    ("0012_signatures_v2_problems_listing", """
        -- folder signatures are hashed from fixed-width integers now, under their own key (SIGNATURES): the old
        -- ones could never match again
        DELETE FROM meta WHERE key = 'folder_signatures';
        -- every command's sync reports the files that failed to parse: read from this index alone (the few rows
        -- that have one), not from a scan of every file's row (~17 ms at 50,000 lessons)
        CREATE INDEX IF NOT EXISTS files_problems ON files(path, problem) WHERE problem IS NOT NULL;
        -- `rose list` counts the hot (or cold) rows and finds the importance of the last it shows (count_where,
        -- importance_at on this very expression): a range of this index, not a scan and a sort of every row
        -- (~40 ms at 50,000 lessons)
        CREATE INDEX IF NOT EXISTS nodes_listing ON nodes(""" + f"{COLD_SQL}" + """, importance, memory_type);
        -- `rose tree` reads the rows with lineage, and the first lone rows of each family by (level falling, id):
        -- the few of the one from their own index, the others a range in the order they are drawn (not a scan of
        -- every row, and a sort of each family's, ~50 ms at 50,000 lessons)
        CREATE INDEX IF NOT EXISTS nodes_lineage ON nodes(family) WHERE """ + LINEAGE_SQL + """;
        CREATE INDEX IF NOT EXISTS nodes_lone ON nodes(family, level DESC, id) WHERE """ + NO_LINEAGE_SQL + """;
        -- `rose conflicts` reads the disputed rows in rows()'s order: the few there are, not a scan of all of them
        CREATE INDEX IF NOT EXISTS nodes_disputed ON nodes(family, level DESC, id) WHERE """ + DISPUTED_SQL + """;
    """),
    ("0013_vector_state", """
        -- what the vector file beside the index (rose.embed.vecfile) is checked against, kept by the index itself:
        -- its identity, made with the index file (a rebuilt index.db is a new index), a tag that every write to
        -- the embeddings replaces, and one that every hot lesson row inserted, or changed in id, text or coldness,
        -- replaces (the only writes after which a lesson can lack a vector). Triggers, so every writer keeps them,
        -- in its own transaction; random, so two copies of an index never share a tag they did not inherit.
        CREATE TABLE vector_state (
            one INTEGER PRIMARY KEY CHECK (one = 0),
            identity TEXT NOT NULL,
            vectors INTEGER NOT NULL,
            nodes INTEGER NOT NULL
        );
        INSERT INTO vector_state VALUES (0, lower(hex(randomblob(16))), random(), random());
        CREATE TRIGGER vectors_inserted AFTER INSERT ON embeddings BEGIN
            UPDATE vector_state SET vectors = random();
        END;
        CREATE TRIGGER vectors_updated AFTER UPDATE ON embeddings BEGIN
            UPDATE vector_state SET vectors = random();
        END;
        CREATE TRIGGER vectors_deleted AFTER DELETE ON embeddings BEGIN
            UPDATE vector_state SET vectors = random();
        END;
        CREATE TRIGGER lessons_inserted AFTER INSERT ON nodes WHEN NEW.cold = 0 BEGIN
            UPDATE vector_state SET nodes = random();
        END;
        CREATE TRIGGER lessons_retexted AFTER UPDATE OF id, text_hash, cold ON nodes WHEN NEW.cold = 0 BEGIN
            UPDATE vector_state SET nodes = random();
        END;
        -- "does a hot lesson lack a vector?" reads every hot lesson's id and text hash: from this narrow index,
        -- not the wide rows (44 ms at 50,000 lessons instead of 89)
        CREATE INDEX IF NOT EXISTS nodes_text ON nodes(cold, id, text_hash);
    """),
]


if TYPE_CHECKING:   # for the type checker only: the prompt hook's process never imports typing's machinery
    from typing import Protocol

    class ChangeWatch(Protocol):
        """What tells a sync that no lesson file changed (rose.warm.watch.Watch, in the warm helper only)."""

        def quiet(self, root: Path, stamp: str | None) -> bool: ...

        def arm(self, root: Path, dirs: Sequence[Path]) -> Callable[[str | None], None] | None: ...


WATCH: ChangeWatch | None = None   # set by the warm helper; None everywhere else (every sync stats every file)
POOL: Pool | None = None   # set by the warm helper: connections kept between its requests (rose.store.pool)
SIGNATURES = "folder_signatures_v2"   # meta key: each node folder's _folder_signature when last brought in line
INDEX_MD_OWED = "index_md_owed"   # meta key: index.md does not yet list what the last write committed (Index.owe_index_md)
INDEX_MD_STAMP = "index_md_stamp"   # meta key: the stamp of the index.md rose last wrote (rose.store.splice.stamp)
USAGE_MARK = "usage_log"   # meta key: how much of usage.jsonl is folded (offset, crc of it, and the file's stat)

FULL_SCAN_EVERY_S = 120  # on the per-prompt path, a per-file scan at least this often (see Index.sync)
# id, title, gist, tags, body. Measured on bench/recall_quality (bench/bench_retrieval.py): heavy title weights
# over-reward one generic word in a short title; equal weights with the body slightly ahead ranked best.
BM25_WEIGHTS = (0.0, 1.0, 1.0, 1.0, 1.5)
# ... bound as parameters: the same scores, and a fifth less CPU per matching row than the same numbers as literals
# (measured at 50,000 lessons: 9.8 -> 7.6 ms for a five-word prompt)
_WEIGHT_MARKS = ", ".join("?" * len(BM25_WEIGHTS))
# A word held by more than this share of the lessons is generic: it ranks, but alone it admits nothing
# (bench/bench_retrieval.py --sweep shows the alternatives).
GENERIC_SHARE = 0.05
SELECTIVE_MIN_DF = 3       # in a small store a word in three lessons is still selective
# A prompt of which this share of words (number-like tokens aside) no lesson holds is about something else ("what
# time zone is Buenos Aires in?"): a hit then needs two selective terms of its own, and no dense agreement stands in
# for them. bench/recall_quality: on-topic prompts p99 0.33, off-topic median 0.5 (bench_retrieval.py --sweep).
# Only in a store of ELSEWHERE_MIN_LESSONS records or more: a small store's vocabulary leaves most words of an
# on-topic prompt unknown too (random subsets of the set: at 20 lessons the gate cost 3 points of recall, at 160
# half a point, while the rest of the rule already kept off-topic prompts out of small stores)
ELSEWHERE_SHARE = 0.4
ELSEWHERE_MIN_LESSONS = 100
# A prompt whose terms are all everyday words (terms only as some lesson's tag: "test", "package", "queue") and no two
# of which share a lesson uses them in their everyday sense ("test drive a used car"): a hit then needs two terms, an
# exact phrase or this many selective words, and no dense agreement stands in (docs/benchmarks.md, "Terms in their
# everyday sense"; bench_retrieval.py --sweep, sweep 6)
EVERYDAY_SENSE_SELECTIVE = 3
SENSE_TERMS_CHECKED = 8    # the terms whose pairs one co-occurrence lookup asks about
SENSE_CONTEXT_MIN = 3      # words beside a term (number-like tokens aside) a prompt needs for its sense to be judged
WORDS_CHECKED = 24         # query words whose evidence is counted: the first ones (a pasted log is long)
PHRASES_CHECKED = 12
_WORD = re.compile(r"\w+", re.UNICODE)


class IndexRow(Record):
    """One lesson as the index holds it: what recall ranks, packs and serves without reading the file."""
    id: str
    family: str
    title: str
    gist: str
    tags: list[str]
    level: int
    status: str
    memory_type: str
    scope: str
    importance: float
    parents: list[str]
    derived_from: list[str]
    dropped: int
    tokens: int
    created: str
    last_used: str
    use_count: int
    path: str
    conflict: str = ""
    patches: list[str] = field(default_factory=list)
    cold: bool = False              # the file is in the cold archive (status reads "archived")
    cold_from: str = ""             # a cold record's own status: what a restore returns it to
    base_importance: float = 0.6    # as minted (the file); `importance` is the evidence-moved value
    confidence: float = 0.5

    @property
    def servable(self) -> bool:
        return self.status in SERVABLE


def _json_list(text: str) -> list:
    """A JSON list column; most are empty, and json.loads costs a microsecond or two a call at 50,000 rows."""
    return [] if text == "[]" else load_json(text)


# IndexRow's fields are columns of `nodes` by the same name, read by name; these are decoded on the way
_ROW_COLUMNS = tuple(f.name for f in fields(IndexRow))
_ROW_DECODE: dict[str, Callable[[Any], Any]] = {"tags": str.split, "parents": _json_list,
                                               "derived_from": _json_list, "patches": _json_list, "cold": bool}


_DECODE_AT = tuple((i, _ROW_DECODE[name]) for i, name in enumerate(_ROW_COLUMNS) if name in _ROW_DECODE)


def _row(values: Sequence[Any]) -> IndexRow:
    """One `nodes` row (its columns in _ROW_COLUMNS order) as an IndexRow: positional, only the encoded columns
    decoded (recall builds a hundred of these per prompt)."""
    row = list(values)
    for i, decode in _DECODE_AT:
        row[i] = decode(row[i])
    return IndexRow(*row)


# columns a reader may select beside IndexRow's own (rose tree draws them)
_FACT_COLUMNS = frozenset({"heldout_passed", "heldout_total", "gaps"})


SERVABLE = tuple(s.value for s in model_servable)   # rose.model.SERVABLE, as the index stores it


class SyncReport(Record):
    """What one sync of the index with the lesson files changed, and the problems it met."""
    added: int = 0
    updated: int = 0
    removed: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (relative path, reason)
    pending: int = 0      # files left for later by a bounded sync (`until`): new or changed, not yet parsed
    files: int = 0        # lesson files seen by the scan
    scan_due: bool = False   # a quick sync with `defer_scan`: folders unchanged, the periodic full scan left to do

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


BULK_ROWS = 2000   # rows a rebuild buffers before writing them with one executemany per table
_FTS_TABLES = ("nodes_fts", "cold_fts")
FTS_DEFAULT_HASH = 1 << 20   # FTS5's own default 'hashsize' (FTS5_DEFAULT_HASHSIZE)
FTS_HASH_SETTING = "hashsize"   # FTS5's name for it (fts5_config.c); an SQLite without it rebuilds as before
HOT_INSERT_TRIGGER = "lessons_inserted"   # migration 0013's: a hot row inserted replaces vector_state's nodes tag
NODES_TAG_REPLACED = "UPDATE vector_state SET nodes = random()"   # that trigger's body (a shipped migration's text)
REBUILD_CACHE_KB = 32 << 10   # a rebuild's page cache (SQLite's default: 2 MB); 64 MB bought little more at 50,000
REBUILD_FTS_HASH = 16 << 20  # a rebuild's: larger buys little more (measured 16, 32, 64 MB at 50,000 lessons)


class _Bulk(Record):
    """A full rebuild's writes, into tables it has just emptied, inside its one transaction: the rows are buffered
    and written a batch at a time (executemany) with rowids assigned here, instead of a delete, a lookup and four
    inserts a lesson. What the per-lesson path looked up in the tables is held here: the ids written so far (the
    duplicate check), the clean_files digests and the usage folds as they were when the rebuild began."""
    clean: dict[str, bytes]
    folds: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)          # node id -> path, of every row written or buffered
    next_rowid: int = 1
    nodes: list[tuple] = field(default_factory=list)
    fts: list[tuple] = field(default_factory=list)
    cold: list[tuple] = field(default_factory=list)
    unembed: list[tuple[str]] = field(default_factory=list)
    files: list[tuple] = field(default_factory=list)
    marks: dict[str, bytes | None] = field(default_factory=dict)   # clean_files changes, applied at each flush




def text_hash(title: str, tags: str, gist: str, body: str) -> str:
    """Identifies the text a vector was made from (not a security hash: a change detector)."""
    return format(zlib.crc32(f"{title}\x00{tags}\x00{gist}\x00{body}".encode("utf-8", "surrogatepass")), "08x") \
        + format(len(body), "x")


def _content(word: str) -> bool:
    """A word a query searches for: not a stop word, and not a lone letter (a lone digit counts: "step 3", "v 2")."""
    return (len(word) > 1 or word.isdigit()) and word not in STOPWORDS


def query_words(text: str, limit: int = 64) -> list[str]:
    """The content words of any text, lower-cased, each once, in order: what a query searches for."""
    seen: list[str] = []
    for w in _WORD.findall(text.lower()):
        if _content(w) and w not in seen:
            seen.append(w)
            if len(seen) >= limit:
                break
    return seen


def query_phrases(text: str, limit: int = PHRASES_CHECKED) -> list[str]:
    """Pairs of content words standing side by side in the text ("connection pool"): an exact phrase."""
    tokens = [w for w in _WORD.findall(text.lower()[:4000])]
    out: list[str] = []
    for a, b in itertools.pairwise(tokens):
        if _content(a) and _content(b) and a != b:
            phrase = f"{a} {b}"
            if phrase not in out:
                out.append(phrase)
                if len(out) >= limit:
                    break
    return out


def fts_query(text: str) -> str:
    """Any user text -> a safe FTS5 query: content words quoted and OR-ed (bm25 rewards matching more of them)."""
    return " OR ".join(f'"{w}"' for w in query_words(text))


class LexicalHit(Record):
    """One BM25 hit and the evidence behind it: how many of the query's words it holds, and which kind.

    A word is *selective* when few lessons hold it (see `selective_cap`). One generic word must not admit a lesson:
    a hit is `admitted` (see `admits`) when it holds an exact phrase of the query (two content words side by side, not
    generic together) or at least two selective words (one, when the query has only one selective word), provided the
    prompt shares a *term* with the store: a word some lesson holds that is not everyday English (rose.words.everyday)
    or that is among some lesson's tags. A prompt whose shared words are all everyday ("a healthy breakfast that takes
    five minutes") admits nothing lexically, however many it shares; one that names "pytest" or "rebase" does. When
    every term it shares is an everyday word no lesson holds beside another of them ("test drive a used car"), they
    are in their everyday sense (`everyday_sense`): a hit then needs two terms, a phrase or three selective words. A
    hit whose whole title the prompt names is admitted outright."""

    id: str
    score: float           # BM25, higher is better
    words: int = 0         # distinct query words it holds
    selective: int = 0     # ... of which selective
    terms: int = 0         # ... of which selective terms of the store (not everyday English, or a lesson's tag)
    phrase: bool = False   # it holds a selective phrase of the query
    named: bool = False    # the prompt holds every content word of its title
    admitted: bool = False
    corroborable: bool = True   # a dense agreement may stand in for missing evidence (not when the prompt is
                                # mostly words the store has never seen)


class PromptEvidence(Record, frozen=True):
    """What one prompt shares with one store, as the evidence rule reads it."""

    selective: int         # the query's selective words (a word no lesson holds counts: it raises the bar)
    present: int           # the query's words some lesson holds, or selective
    anchored: bool         # it shares at least one term with the store
    elsewhere: bool        # ELSEWHERE_SHARE or more of its words are unknown to a store of ELSEWHERE_MIN_LESSONS
    everyday_sense: bool = False   # its terms are all everyday words, no two of them in one lesson (everyday_sense)


def admits(hit: LexicalHit, prompt: PromptEvidence) -> bool:
    """The lexical evidence rule, a pure function of the counts (see LexicalHit)."""
    if hit.named:
        return True
    if not prompt.anchored:
        return False
    if prompt.selective:
        enough = hit.phrase or hit.selective >= min(2, prompt.selective)
    else:
        enough = hit.phrase or hit.words >= min(2, prompt.present)
    if prompt.everyday_sense:
        # one everyday term beside everyday words is what "a package to ship" shares with a packaging lesson
        enough = enough and (hit.phrase or hit.terms >= 2 or hit.selective >= EVERYDAY_SENSE_SELECTIVE)
    return enough and (not prompt.elsewhere or hit.terms >= 2)


def corroborable(prompt: PromptEvidence) -> bool:
    """Whether a dense agreement may stand in for a hit's missing lexical evidence: not when the prompt is mostly words
    the store has never seen, nor when its terms are in their everyday sense (a middling cosine is all they earn)."""
    return not prompt.elsewhere and not prompt.everyday_sense


def everyday_sense(terms: list[str], context: int, common: frozenset[str],
                   share_a_lesson: Callable[[list[str]], bool]) -> bool:
    """Whether a prompt's terms (the words it shares with the store that are not everyday English, or are some
    lesson's tag) are likely used in their everyday sense: every one is an everyday word, no two of them are held
    by one lesson (Lesk's rule, on the store's own co-occurrence: "orders" beside "limit", "tests" beside "parallel"
    are at home together; "queue" beside "security" is an airport), and the prompt has SENSE_CONTEXT_MIN or more
    `context` words beside any one of them (the other terms included) to say what it is about. A short prompt
    ("check the server", "how do I release this") has no context to judge by: in a coding session its words are
    taken in the store's sense.
    `share_a_lesson` is asked only when the rest holds."""
    if not terms or context < SENSE_CONTEXT_MIN or any(t not in common for t in terms):
        return False
    return not share_a_lesson(terms)


def term_pairs(terms: list[str]) -> list[tuple[str, list[str]]]:
    """Each of the first SENSE_TERMS_CHECKED terms with the later ones it pairs with. Words that are one another's
    stem-mates ("test", "tests") are not paired: the stemming index holds both wherever it holds one."""
    terms = terms[:SENSE_TERMS_CHECKED]
    pairs = [(t, [u for u in terms[i + 1:] if not (u.startswith(t) or t.startswith(u))]) for i, t in enumerate(terms)]
    return [(t, others) for t, others in pairs if others]


def term_pairs_query(terms: list[str]) -> str | None:
    """An FTS5 query matching a lesson that holds two of `terms` (None: fewer than two to pair)."""
    clauses = [f'("{t}" AND (' + " OR ".join(f'"{u}"' for u in others) + "))" for t, others in term_pairs(terms)]
    return " OR ".join(clauses) if clauses else None


def names(title: str, prompt_words: set[str]) -> bool:
    """Whether a prompt holds every content word of a title (the prompt names the lesson); stops at the first miss."""
    found = False
    for word in _WORD.findall(title.lower()):
        if _content(word):
            if word not in prompt_words:
                return False
            found = True
    return found


def unknown_share(known: dict[str, int]) -> float:
    """The share of a prompt's words (number-like tokens aside: tickets, hashes, versions are new in every prompt)
    that no lesson holds; `known` maps each word to how many lessons hold it."""
    words = [w for w in known if not any(ch.isdigit() for ch in w)]
    return sum(1 for w in words if known[w] == 0) / len(words) if words else 0.0


def selective_cap(lessons: int) -> int:
    """The most lessons a word may appear in and still be selective: a share of the store, never below a few."""
    return max(SELECTIVE_MIN_DF, int(GENERIC_SHARE * lessons))


BUSY_TIMEOUT_S = 30.0   # commands and learners wait this long for another writer; the prompt path much less
# Document frequencies remembered per index file, for a long-lived process (the warm helper): keyed by the full-text
# index's structure record, which every write to it replaces, so a remembered count is never stale.
_DOC_FREQS: dict[str, tuple[bytes | None, dict[str, tuple[int, bool]]]] = {}   # term -> (count, exact)
DOC_FREQS_MAX = 20_000   # terms remembered per index, at most (then it starts over)


class FactGroup(NamedTuple):
    """One group of Index.facts(): how many lessons share these six keys, and their sums."""

    scope: str
    memory_type: str
    family: str
    level: int
    status: str
    origin: str
    lessons: int
    tokens: int
    heldout_passed: int
    heldout_total: int
    evaluated: int      # lessons with a held-out measurement
    rescues: int        # origin_rescues: sticky patches
    trials: int
    gaps: int


_FACT_KEYS = "scope, memory_type, family, level, status, origin"
_FACTS = (f"SELECT {_FACT_KEYS}, count(*), sum(tokens), sum(heldout_passed), sum(heldout_total),"  # noqa: S608
          f" sum(heldout_total > 0), sum(origin_rescues), sum(trials), sum(gaps) FROM nodes GROUP BY {_FACT_KEYS}")
# Index.buckets' own pass when no facts are held: the same index in its own order (its first five keys), two sums
_BUCKETS = ("SELECT scope, memory_type, status, count(*), sum(tokens) FROM nodes"
            " GROUP BY scope, memory_type, family, level, status")


class Index:
    def __init__(self, root: Path, db_path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S):
        self.root = root
        self.db_path = db_path
        self.busy_timeout_s = busy_timeout_s
        self._conn: sqlite3.Connection | None = None
        self._bulk: _Bulk | None = None   # a full rebuild in progress (see rebuild)
        self._facts: tuple[tuple, list[FactGroup]] | None = None   # facts() and what the index was when read
        self._count: tuple[tuple, int] | None = None   # lesson_count() and what the index was when counted
        self._ident: tuple[int, int] | None = None   # the file the connection was opened on, when it may be pooled
        self._opened: tuple[int, int] | None = None  # the file the connection was opened on (see discard)

    def set_busy_timeout(self, seconds: float) -> None:
        self.busy_timeout_s = seconds
        if self._conn is not None:
            self._conn.execute(f"PRAGMA busy_timeout={int(seconds * 1000)}")

    # -- connection and schema -------------------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        pool = POOL
        held = pool.take(str(self.db_path)) if pool is not None else None
        if held is not None:
            self._ident, conn = held
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")   # this Index's wait
            self._opened = self._ident
            return conn
        private_dir(self.db_path.parent)
        try:
            create_private(self.db_path)   # 0600, not SQLite's 0644: it holds what the user said; -wal, -shm follow
            conn = self._connect()
            migrate(conn)
        except sqlite3.DatabaseError as exc:
            if busy(exc):
                raise  # another process is writing: that is a wait, never damage (the caller decides how long)
            # A damaged index is derived data: throw it away and rebuild from the files.
            _unlink_index(self.db_path)
            create_private(self.db_path)
            conn = self._connect()
            migrate(conn)
        self._opened = identity(str(self.db_path))
        return conn

    def _connect(self) -> sqlite3.Connection:
        # for the pool, the file's identity is read before it is opened: a file replaced in between makes the
        # connection look stale (closed when next taken), never a stale one look current
        shared = POOL is not None
        self._ident = identity(str(self.db_path)) if shared else None
        conn = sqlite3.connect(self.db_path, timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=not shared)   # a pooled one serves one thread at a time
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            pool = POOL
            if pool is None or not pool.give(str(self.db_path), self._ident, conn):
                conn.close()
            self._ident = None

    def intact(self) -> bool:
        """Does SQLite find every page and record of the file readable (PRAGMA quick_check)? It reads the whole
        file (tens of ms at 10,000 lessons), so it is asked after an error or by a command, never on every prompt."""
        try:
            row = self.conn.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            if busy(exc):
                raise
            return False
        return row is not None and row[0] == "ok"

    def discard(self) -> None:
        """Throw the file away (derived data: the next use opens a new, empty index and sync fills it from the
        files). A file at the path that is not the one this connection opened (another process discarded it
        first and made a new one) is left: it is not the damaged one."""
        conn, self._conn = self._conn, None
        opened, self._opened = self._opened, None
        if conn is not None:
            conn.close()   # never back to the pool: it is a connection to the damaged file
        self._ident, self._facts, self._count, self._bulk = None, None, None, None
        if conn is None or opened is None or identity(str(self.db_path)) == opened:
            _unlink_index(self.db_path)

    # -- writes ----------------------------------------------------------------------------------------------
    def upsert(self, node: Node, rel_path: str, mtime_ns: int, size: int, base: View | None = None) -> None:
        """`node` with its usage folded in; `base` the usage its file itself still holds (an old file's)."""
        with self._transaction():
            self._upsert(node, rel_path, mtime_ns, size, base)

    def _upsert(self, node: Node, rel_path: str, mtime_ns: int, size: int, base: View | None = None) -> None:
        self._delete_node(node.id)
        self._insert(node, rel_path, base)
        self.conn.execute("INSERT OR REPLACE INTO files(path, mtime_ns, size, node_id, problem) VALUES (?,?,?,?,NULL)",
                          (rel_path, mtime_ns, size, node.id))

    def upsert_many(self, items: Sequence[Upsert]) -> None:
        """`upsert` of many lessons at once (a Store.save_many batch): the same rows, written a table at a time.
        Their old rows are found by one query per 500 ids and deleted, then each table gets one executemany, with
        the rowids assigned here as SQLite would (one past the largest), instead of a delete, a lookup and three
        inserts a lesson. The ids must be distinct: a batch lands before it saves an id twice."""
        if not items:
            return
        ids = [item[0].id for item in items]
        if len(set(ids)) != len(ids):
            raise ValueError("upsert_many: an id twice in one batch")
        with self._transaction():
            c = self.conn
            c.execute("DELETE FROM meta WHERE key = 'totals'")   # as _delete_node
            old: list[tuple[int]] = []
            for start in range(0, len(ids), 500):   # under SQLite's oldest limit on bound parameters (999)
                chunk = ids[start:start + 500]
                old += c.execute(f"SELECT rowid FROM nodes WHERE id IN ({','.join('?' * len(chunk))})",  # noqa: S608
                                 chunk).fetchall()
            if old:
                for table in ("nodes_fts", "cold_fts", "nodes"):
                    c.executemany(f"DELETE FROM {table} WHERE rowid=?", old)  # noqa: S608 - fixed table names
            rowid = c.execute("SELECT COALESCE(MAX(rowid), 0) FROM nodes").fetchone()[0]
            nodes, fts, cold_rows, unembed, files = [], [], [], [], []
            for node, rel_path, mtime_ns, size, base in items:
                row, cold = _node_row(node, rel_path, base)
                rowid += 1
                nodes.append((rowid, *row))
                if cold:   # as _insert: the archive is searched by its catalog fields alone, and never embedded
                    cold_rows.append((rowid, node.id, node.title, row[4], preview(node)))
                    unembed.append((node.id,))
                else:
                    fts.append((rowid, node.id, node.title, node.gist, row[4], node.body))
                files.append((rel_path, mtime_ns, size, node.id, None))
            c.executemany(_INSERT_NODE_AT, nodes)
            c.executemany(_INSERT_FTS, fts)
            c.executemany(_INSERT_COLD, cold_rows)
            c.executemany("DELETE FROM embeddings WHERE node_id=?", unembed)
            c.executemany(_INSERT_FILE, files)

    # -- index.md's debt: what it lists is owed from the commit that changes it until it is written again ------
    def owe_index_md(self) -> bool:
        """Said in the transaction that changes what index.md lists (or just before it): a process killed after
        that commit and before index.md is written leaves the mark, and the next sync writes index.md whole.
        Returns whether it was owed already (an earlier write was killed: a splice would keep its loss)."""
        before = self.index_md_owed()
        if not before:
            self.conn.execute("INSERT INTO meta(key, value) VALUES (?, '1')", (INDEX_MD_OWED,))
        return before

    def index_md_owed(self) -> bool:
        return self.conn.execute("SELECT 1 FROM meta WHERE key = ?", (INDEX_MD_OWED,)).fetchone() is not None

    def index_md_paid(self, stamp: str = "") -> None:
        """index.md is written: the mark goes, and `stamp` (the file's, as written) is kept for the next writer to
        know the file is still those bytes. Another writer holding the database past the wait leaves both as they
        were (the next sync writes index.md again, which is only work; the old stamp names no file)."""
        try:
            with self._transaction():
                self.conn.execute("DELETE FROM meta WHERE key = ?", (INDEX_MD_OWED,))
                self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (INDEX_MD_STAMP, stamp))
        except sqlite3.OperationalError as exc:
            if not busy(exc):
                raise

    def index_md_stamp(self) -> str:
        """The stamp index_md_paid kept ("" if none)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (INDEX_MD_STAMP,)).fetchone()
        return str(row[0]) if row and row[0] else ""

    def hot_rows_of(self, ids: Collection[str]) -> list[tuple[str, str, int, str, str, str, str]]:
        """(id, family, level, title, tags, gist, path) of these lessons, the hot ones only: their index.md lines."""
        wanted, rows = list(ids), []
        for start in range(0, len(wanted), 500):   # under SQLite's oldest limit on bound parameters (999)
            chunk = wanted[start:start + 500]
            rows += self.conn.execute(
                "SELECT id, family, level, title, tags, gist, path FROM nodes WHERE cold = 0 AND id IN"
                f" ({','.join('?' * len(chunk))})", chunk).fetchall()   # noqa: S608 - placeholders only
        return rows

    def paths_and_states(self, ids: Sequence[str]) -> tuple[dict[str, str], dict[str, dict]]:
        """path_of and usage_state of many lessons at once (a save_many batch asks both of each): two queries per
        500 ids, not two a lesson. An id without a row is absent from the first; without a fold, from the second."""
        paths: dict[str, str] = {}
        states: dict[str, dict] = {}
        for start in range(0, len(ids), 500):   # under SQLite's oldest limit on bound parameters (999)
            chunk = list(ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            paths.update(self.conn.execute(f"SELECT id, path FROM nodes WHERE id IN ({marks})",  # noqa: S608
                                           chunk).fetchall())
            states.update((node_id, _state(fold)) for node_id, fold in self.conn.execute(
                f"SELECT node_id, fold FROM usage WHERE node_id IN ({marks})", chunk))  # noqa: S608
        return paths, states

    def batch(self) -> contextlib.AbstractContextManager[None]:
        """Many writes in one transaction (Store.save_many): one commit for the batch, rolled back whole on error."""
        return self._transaction()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction; nested uses join the outer one (a sync writes its whole batch at once)."""
        c = self.conn
        if c.in_transaction:
            yield
            return
        c.execute("BEGIN IMMEDIATE")
        try:
            yield
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def remove_path(self, rel_path: str) -> None:
        with self._transaction():
            c = self.conn
            row = c.execute("SELECT node_id FROM files WHERE path=?", (rel_path,)).fetchone()
            if row and row[0]:
                self._delete_node(row[0])
                c.execute("DELETE FROM embeddings WHERE node_id=?", (row[0],))
            c.execute("DELETE FROM files WHERE path=?", (rel_path,))
            c.execute("DELETE FROM clean_files WHERE path=?", (rel_path,))   # as a rebuild keeps none of a gone path

    def move_clean(self, old_rel: str, new_rel: str) -> None:
        """A file renamed as it is (a move in or out of the archive): what was known of its bytes moves with it."""
        with self._transaction():
            self.conn.execute("DELETE FROM clean_files WHERE path=?", (new_rel,))
            self.conn.execute("UPDATE clean_files SET path=? WHERE path=?", (new_rel, old_rel))

    def _delete_node(self, node_id: str) -> None:
        c = self.conn
        c.execute("DELETE FROM meta WHERE key = 'totals'")  # every node write goes through here
        row = c.execute("SELECT rowid FROM nodes WHERE id=?", (node_id,)).fetchone()
        if row:
            c.execute("DELETE FROM nodes_fts WHERE rowid=?", (row[0],))
            c.execute("DELETE FROM cold_fts WHERE rowid=?", (row[0],))
            c.execute("DELETE FROM nodes WHERE rowid=?", (row[0],))

    def _insert(self, node: Node, rel_path: str, base: View | None = None) -> None:
        row, cold = _node_row(node, rel_path, base)
        cur = self.conn.execute(_INSERT_NODE, row)
        if cold:   # the archive is searched by its catalog fields alone, and never embedded
            self.conn.execute(_INSERT_COLD, (cur.lastrowid, node.id, node.title, row[4], preview(node)))
            self.conn.execute("DELETE FROM embeddings WHERE node_id=?", (node.id,))
        else:
            self.conn.execute(_INSERT_FTS, (cur.lastrowid, node.id, node.title, node.gist, row[4], node.body))

    # -- catching up with the files -------------------------------------------------------------------------
    def sync(self, nodes_dir: Path | Sequence[Path], parse: Parse,
             quick: bool = False, until: float | None = None, defer_scan: bool = False,
             unchanged: bool = False) -> SyncReport:
        """Bring the index in line with the files under nodes_dir. Cheap when nothing changed: one stat a file.

        `quick` (the per-prompt path) first compares the folders' mtimes, which any add, delete or atomic save
        changes, and skips the per-file scan when they match and a full scan ran within FULL_SCAN_EVERY_S. An
        in-place edit is then seen within that interval, or at once by any command or learner run. With
        `defer_scan` (the warm helper, which runs the scan off the request) a due scan of unchanged folders is not
        done here: the report says `scan_due`. `unchanged`: the caller knows no lesson file changed since the last
        full scan, so none is stat-ed; the report carries the recorded problems. Inside the warm helper, WATCH (an
        inotify watch, rose.warm.watch) tells it so: with no event under the store since its last full scan, that
        is what this sync does, and a full scan arms the watch before it reads the folders.
        """
        watch = WATCH
        if unchanged or (watch is not None and watch.quiet(self.root, self._full_scan_mark())):
            return self._unchanged()
        dirs = _dir_stamps(nodes_dir)
        if quick:
            meta = dict(self.conn.execute("SELECT key, value FROM meta WHERE key IN ('dirs', 'full_scan')"))
            if meta.get("dirs") == dirs:
                if time.time() - float(meta.get("full_scan", 0)) < FULL_SCAN_EVERY_S:
                    return SyncReport()  # unchanged; problems are reported by full scans (commands, doctor)
                if defer_scan:
                    return SyncReport(scan_due=True)
        armed = watch.arm(self.root, _folders(nodes_dir)) if watch is not None else None
        with self._transaction():  # one commit for the whole catch-up, not one per file
            report = self._sync(nodes_dir, parse, until)
        if armed is not None and not report.pending:
            armed(self._full_scan_mark())   # after the commit: the mark a later sync compares is on disk
        return report

    def _full_scan_mark(self) -> str | None:
        """When the index was last brought in line by a full scan: another process's scan, or a new database,
        changes it, and a watch armed for the old one no longer vouches for this one."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'full_scan'").fetchone()
        return None if row is None else str(row[0])

    def _unchanged(self) -> SyncReport:
        files = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        return SyncReport(problems=self.problems(), files=files)

    def _sync(self, nodes_dir: Path | Sequence[Path], parse: Parse,
              until: float | None = None) -> SyncReport:
        """Every lesson file is stat-ed (an edit in place changes no folder), but a folder whose files' (name,
        mtime, size) hash to what they did when it was last brought in line is skipped without reading one row of
        it (see _folder_signature); only changed folders are compared file by file. `until` (a time.monotonic()
        value) bounds the parsing: files past it are counted as `pending`, left for the next sync, and the scan is
        not marked complete (so a quick sync does not skip them)."""
        report = SyncReport()
        before = self._signatures()
        sigs, changed = self._scan(nodes_dir, before)
        unchanged = sigs.keys() - {prefix for prefix, _names, _stats in changed}
        known = self._known(prefix for prefix, _names, _stats in changed)
        rows = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        if rows != len(known) + sum(sigs[prefix][1] for prefix in unchanged):
            # rows outside every folder seen (a folder gone, an index from before signatures): compare everything,
            # on a listing taken again (the stats of the folders as they were are not kept)
            sigs, changed = self._scan(nodes_dir, {})
            unchanged, known = set(), self._known(None)
        found = [(prefix + name, st) for prefix, names, stats in changed for name, st in zip(names, stats)]
        report.problems += [(rel, why) for rel, why in self.problems() if rel[:rel.rfind("/") + 1] in unchanged]
        self._reconcile(known, found, parse, report, until)
        report.files = sum(count for _sig, count in sigs.values())
        if report.changed:   # in this commit: killed before the store writes index.md, the next sync does
            self.owe_index_md()
        if not report.pending:
            self.conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                  [("dirs", _dir_stamps(nodes_dir)), ("full_scan", str(time.time())),
                                   (SIGNATURES, json.dumps({prefix: sig for prefix, (sig, _count) in sigs.items()},
                                                           sort_keys=True))])
        return report

    @staticmethod
    def _scan(nodes_dir: Path | Sequence[Path], before: dict[str, str]
              ) -> tuple[dict[str, tuple[str, int]], list[tuple[str, list[str], list[os.stat_result]]]]:
        """Every lesson file stat-ed, a folder at a time: each folder's (signature, file count), and the names and
        stats of those whose signature is not the one in `before`. A folder as it was keeps neither past its
        signature, so at most one folder's stats are held at once when nothing changed (the memory the next
        folder's reuses, not 50,000 stat results built up and torn down at the end)."""
        sigs: dict[str, tuple[str, int]] = {}
        changed: list[tuple[str, list[str], list[os.stat_result]]] = []
        for folder in _folders(nodes_dir):
            for prefix, names, stats in _scan_folders(folder):
                sig = _folder_signature(names, stats)
                sigs[prefix] = (sig, len(names))
                if before.get(prefix) != sig:
                    changed.append((prefix, names, stats))
        return sigs, changed

    def _signatures(self) -> dict[str, str]:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (SIGNATURES,)).fetchone()
        try:
            data = load_json(row[0]) if row else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def _known(self, prefixes: Iterable[str] | None) -> dict[str, tuple[int, int, str | None]]:
        """The files table's rows, (mtime_ns, size, problem) by path: all of them, or those under these folders."""
        sql = "SELECT path, mtime_ns, size, problem FROM files"
        if prefixes is None:
            return {r[0]: (r[1], r[2], r[3]) for r in self.conn.execute(sql)}
        out: dict[str, tuple[int, int, str | None]] = {}
        for prefix in prefixes:   # a range of the primary key: "nodes/cache/" up to "nodes/cache0" ("/" + 1)
            out.update({r[0]: (r[1], r[2], r[3]) for r in self.conn.execute(
                sql + " WHERE path >= ? AND path < ?", (prefix, prefix[:-1] + "0"))})
        return out

    def _reconcile(self, known: dict[str, tuple[int, int, str | None]], found: list[tuple[str, os.stat_result]],
                   parse: Parse, report: SyncReport,
                   until: float | None) -> None:
        """The rows of `known` brought in line with the files `found` (the same folders)."""
        seen = {rel for rel, _st in found}
        root = str(self.root)   # each file's path joined as text: a pathlib join costs ~9 us, 0.45 s at 50,000
        # files gone first: a file renamed (moved to or from the archive, or between family folders) is a new path
        # holding an id the index still has under its old path, which must not read as a duplicate id
        for rel in set(known) - seen:
            self.remove_path(rel)
            report.removed += 1
        for rel, st in found:
            prior = known.get(rel)
            if prior is not None and prior[0] == st.st_mtime_ns and prior[1] == st.st_size:
                if prior[2]:
                    report.problems.append((rel, prior[2]))
                continue
            if until is not None and (report.pending or time.monotonic() > until):
                report.pending += 1
                continue
            try:
                parsed = parse(os.path.join(root, rel))
            except ValueError as exc:
                self._record_problem(rel, st, str(exc))
                report.problems.append((rel, str(exc)))
                continue
            node, base = parsed if isinstance(parsed, tuple) else (parsed, None)
            self._upsert_from_sync(node, rel, st, base)
            if prior is None:
                report.added += 1
            else:
                report.updated += 1

    def _upsert_from_sync(self, node: Node, rel: str, st: os.stat_result, base: View | None = None) -> None:
        bulk = self._bulk
        if bulk is not None:
            self._bulk_add(bulk, node, rel, st, base)
            return
        clash = self.conn.execute("SELECT path FROM nodes WHERE id=? AND path<>?", (node.id, rel)).fetchone()
        if clash:
            reason = f"duplicate id {node.id} (also in {clash[0]}); this copy is not indexed"
            self._record_problem(rel, st, reason)
            return
        self._upsert(node, rel, st.st_mtime_ns, st.st_size, base)

    def _record_problem(self, rel: str, st: os.stat_result, reason: str) -> None:
        if self._bulk is not None:   # a rebuild: no row of this path exists yet
            self._bulk.files.append((rel, st.st_mtime_ns, st.st_size, None, reason))
            return
        with self._transaction():
            c = self.conn
            row = c.execute("SELECT node_id FROM files WHERE path=?", (rel,)).fetchone()
            if row and row[0]:
                self._delete_node(row[0])
            c.execute("INSERT OR REPLACE INTO files(path, mtime_ns, size, node_id, problem) VALUES (?,?,?,NULL,?)",
                      (rel, st.st_mtime_ns, st.st_size, reason))

    def rebuild(self, nodes_dir: Path | Sequence[Path],
                parse: Parse) -> SyncReport:
        """Everything from the files again (what is cold is where its file is). Vectors are kept: each is tied to
        the text it was made from. One transaction: killed midway, the index is as it was before."""
        with self._bulk_settings(), self._transaction():
            hot_trigger = self._drop_trigger(HOT_INSERT_TRIGGER)
            for table in ("nodes", "files"):
                self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            for table in _FTS_TABLES:
                self._recreate(table)
                self._fts_hash_size(table, REBUILD_FTS_HASH)
            self.conn.execute("DELETE FROM meta WHERE key <> ?", (USAGE_MARK,))  # usage has its own reset
            # clean_files stays: a digest of the same bytes under the same redactor is as true as it was
            self._bulk = _Bulk(clean=dict(self.conn.execute("SELECT path, digest FROM clean_files")),
                               folds=dict(self.conn.execute("SELECT node_id, fold FROM usage")))
            try:
                report = self._sync(nodes_dir, parse)
                self._bulk_flush(self._bulk)
            finally:
                self._bulk = None
            for table in _FTS_TABLES:
                self._fts_hash_size(table, None)
            if hot_trigger is not None:   # what the trigger did a hot row at a time, once: the tag is replaced
                self.conn.execute(hot_trigger)
                if self.conn.execute("SELECT 1 FROM nodes WHERE cold = 0 LIMIT 1").fetchone() is not None:
                    self.conn.execute(NODES_TAG_REPLACED)
            self.conn.execute("DELETE FROM clean_files WHERE path NOT IN (SELECT path FROM files)")
            return report

    @contextlib.contextmanager
    def _bulk_settings(self) -> Iterator[None]:
        """A rebuild's connection settings, then as they were. temp_store=MEMORY (read as the transaction begins):
        a statement that may abort part-way keeps the pages it changes in a statement journal, which SQLite spills
        to a temporary file past 64 KB and then writes a page at a time. A larger page cache: the indexes of
        `nodes` take their rows in no order of theirs, and at 50,000 lessons the default 2 MB cache evicts and
        reads their pages back ~250,000 times (pread and pwrite); REBUILD_CACHE_KB stays under the peak memory
        of the other commands at that size."""
        c = self.conn
        cache = c.execute("PRAGMA cache_size").fetchone()[0]
        temp = None if c.in_transaction else c.execute("PRAGMA temp_store").fetchone()[0]   # fixed inside one
        c.execute(f"PRAGMA cache_size = {-REBUILD_CACHE_KB}")
        if temp is not None:
            c.execute("PRAGMA temp_store = MEMORY")
        try:
            yield
        finally:
            c.execute(f"PRAGMA cache_size = {int(cache)}")
            if temp is not None:
                c.execute(f"PRAGMA temp_store = {int(temp)}")

    def _drop_trigger(self, name: str) -> str | None:
        """Drop a trigger inside the rebuild's transaction, returning the SQL that makes it again (None: none).
        A trigger makes every insert into its table a statement that writes twice, so each row's insert copies
        every page it touches into a statement journal first (about 11 pages a lesson)."""
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)).fetchone()
        if row is None or not row[0]:
            return None
        self.conn.execute(f"DROP TRIGGER {name}")
        return str(row[0])

    def _recreate(self, table: str) -> None:
        """Empty a full-text table by dropping it and creating it again from its own schema, inside the rebuild's
        transaction: FTS5 deletes row by row, reading each row's text back to take its words out of the index
        (0.6 s at 50,000 lessons), where a drop frees its pages at once."""
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        if row is None or not row[0]:
            raise IndexDamaged(f"index.db has no {table} table")
        self.conn.execute(f"DROP TABLE {table}")  # noqa: S608 - fixed table names
        self.conn.execute(row[0])

    def _fts_hash_size(self, table: str, size: int | None) -> None:
        """How much of a full-text table's new words FTS5 holds in memory before it writes them as a segment
        (its 'hashsize', 1 MB by default). A rebuild raises it for its one transaction: fewer, larger segments,
        so less merging of segments into each other as the index grows. None puts the default back and removes
        the setting, so the table's config row reads as a fresh table's; where the segments lie never changes
        what a query answers (tests/test_rebuild_fts_hash.py)."""
        c = self.conn
        try:
            c.execute(f"INSERT INTO {table}({table}, rank) VALUES (?, ?)",  # noqa: S608 - fixed table names
                      (FTS_HASH_SETTING, FTS_DEFAULT_HASH if size is None else size))
        except sqlite3.OperationalError:
            return   # an SQLite whose FTS5 lacks the setting (it is not in FTS5's documentation): only slower
        if size is None:
            c.execute(f"DELETE FROM {table}_config WHERE k = ?", (FTS_HASH_SETTING,))  # noqa: S608 - fixed names

    def _bulk_add(self, bulk: _Bulk, node: Node, rel: str, st: os.stat_result, base: View | None) -> None:
        """_upsert_from_sync during a rebuild: the same rows, buffered (the tables held nothing when it began)."""
        first = bulk.ids.get(node.id)
        if first is not None and first != rel:
            bulk.files.append((rel, st.st_mtime_ns, st.st_size, None,
                               f"duplicate id {node.id} (also in {first}); this copy is not indexed"))
            return
        bulk.ids[node.id] = rel
        row, cold = _node_row(node, rel, base)
        rowid = bulk.next_rowid
        bulk.next_rowid += 1
        bulk.nodes.append((rowid, *row))
        if cold:   # as _insert: the archive is searched by its catalog fields alone, and never embedded
            bulk.cold.append((rowid, node.id, node.title, row[4], preview(node)))
            bulk.unembed.append((node.id,))
        else:
            bulk.fts.append((rowid, node.id, node.title, node.gist, row[4], node.body))
        bulk.files.append((rel, st.st_mtime_ns, st.st_size, node.id, None))
        if len(bulk.nodes) >= BULK_ROWS:
            self._bulk_flush(bulk)

    def _bulk_flush(self, bulk: _Bulk) -> None:
        c = self.conn
        c.executemany(_INSERT_NODE_AT, bulk.nodes)
        c.executemany(_INSERT_FTS, bulk.fts)
        c.executemany(_INSERT_COLD, bulk.cold)
        c.executemany("DELETE FROM embeddings WHERE node_id=?", bulk.unembed)
        c.executemany(_INSERT_FILE, bulk.files)
        c.executemany("DELETE FROM clean_files WHERE path = ?", [(p,) for p, d in bulk.marks.items() if d is None])
        c.executemany("INSERT OR REPLACE INTO clean_files(path, digest) VALUES (?, ?)",
                      [(p, d) for p, d in bulk.marks.items() if d is not None])
        for buffer in (bulk.nodes, bulk.fts, bulk.cold, bulk.unembed, bulk.files):
            buffer.clear()
        bulk.marks.clear()

    # -- files known to need no redaction (rose.store.store._parse_for_index) ---------------------------------
    def is_clean(self, rel_path: str, digest: bytes) -> bool:
        if self._bulk is not None:
            bulk = self._bulk
            known = bulk.marks[rel_path] if rel_path in bulk.marks else bulk.clean.get(rel_path)
            return known == digest
        return self.conn.execute("SELECT 1 FROM clean_files WHERE path = ? AND digest = ?",
                                 (rel_path, digest)).fetchone() is not None

    def mark_clean(self, rel_path: str, digest: bytes | None) -> None:
        """Record (or, with None, forget) that this file's bytes needed no redaction."""
        if self._bulk is not None:
            self._bulk.marks[rel_path] = digest
            return
        with self._transaction():
            if digest is None:
                self.conn.execute("DELETE FROM clean_files WHERE path = ?", (rel_path,))
            else:
                self.conn.execute(_MARK_CLEAN, (rel_path, digest))

    def mark_clean_many(self, marks: Sequence[tuple[str, bytes]]) -> None:
        """mark_clean of many (path, digest) pairs at once (a save_many batch's files)."""
        with self._transaction():
            self.conn.executemany(_MARK_CLEAN, marks)

    # -- usage (rose.store.usage) ---------------------------------------------------------------------------
    def usage_state(self, node_id: str) -> dict | None:
        if self._bulk is not None:   # a rebuild reads every node's fold: read them all once (its usage is caught up)
            fold = self._bulk.folds.get(node_id)
            return None if fold is None else _state(fold)
        row = self.conn.execute("SELECT fold FROM usage WHERE node_id=?", (node_id,)).fetchone()
        return _state(row[0]) if row else None

    def usage_states(self, containing: str = "") -> dict[str, dict]:
        """Every node's folded usage; `containing`: only folds whose JSON holds this text (a key's name), so a
        caller that wants one kind of record decodes only the folds that can have it."""
        if containing:
            return {r[0]: _state(r[1]) for r in self.conn.execute(
                "SELECT node_id, fold FROM usage WHERE instr(fold, ?) > 0", (containing,))}
        return {r[0]: _state(r[1]) for r in self.conn.execute("SELECT node_id, fold FROM usage")}

    def rid_seen(self, rid: str) -> bool:
        """Has a usage record with this rid been folded already?"""
        return self.conn.execute("SELECT 1 FROM usage_seen WHERE rid=?", (rid,)).fetchone() is not None

    def usage_known(self, node_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM usage WHERE node_id=?", (node_id,)).fetchone() is not None

    def reset_usage(self) -> None:
        with self._transaction():
            for table in ("usage", "usage_seen"):
                self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            self.conn.execute("DELETE FROM meta WHERE key = ?", (USAGE_MARK,))

    def catch_up_usage(self, path: Path, trusted_offset: int | None = None) -> tuple[set[str], int]:
        """Fold what usage.jsonl gained since the last catch-up; returns (ids whose usage changed, bytes folded).

        The folded prefix is remembered by its length and CRC. A file that only grew (an append, a pull that added
        lines at its end) costs a checksum of the prefix and a parse of the new lines. Otherwise (a merge put lines
        in the middle, a fast-forward over our own lines) the lines whose rid was folded before are skipped without
        being parsed; only if a folded line is gone (a checkout of an older log) is everything folded again.
        `trusted_offset` is the caller's word that the file is unchanged up to there (it holds the store lock and
        has just appended). The rows of the nodes whose usage changed are recomputed in the same transaction, from
        the fold and what the row keeps of the file (its claims, an old file's own usage): no file is read."""
        mark = self._usage_mark()
        try:
            st = os.stat(path)
            if mark is not None and (mark["size"], mark["mtime_ns"]) == (st.st_size, st.st_mtime_ns):
                return set(), mark["offset"]   # another process caught up already: no write lock taken
        except FileNotFoundError:
            if mark is None:
                return set(), 0
        with self._transaction():
            mark = self._usage_mark()
            try:
                # a regular file only (a FIFO's open and read would wait for ever), at most reader.LOG bytes new
                fd, st = reader.open_regular(path)
                if st.st_size - (mark["offset"] if mark is not None else 0) > reader.LOG:
                    os.close(fd)
                    raise UnsafeFile(path, f"grew by more than the {reader.LOG} bytes rose folds at once: not read")
                handle = os.fdopen(fd, "rb")
            except UnsafeFile as exc:   # folded as far as it was; the lessons' files still say what they hold
                note_skips(Path(self.db_path).parent / "events.jsonl", "usage log", [exc.reason], self.busy_timeout_s)
                return set(), mark["offset"] if mark is not None else 0
            except FileNotFoundError:
                if mark is None:
                    return set(), 0
                changed = self._reset_usage_tables()   # the log went away (a checkout): the files alone say
                self.conn.execute("DELETE FROM meta WHERE key = ?", (USAGE_MARK,))
                self._refresh_usage_rows(changed)
                return changed, 0
            with handle:
                st = os.fstat(handle.fileno())
                if mark is not None and (mark["size"], mark["mtime_ns"]) == (st.st_size, st.st_mtime_ns):
                    return set(), mark["offset"]
                grown = mark is not None and mark["offset"] <= st.st_size and (
                    trusted_offset == mark["offset"] or _crc_prefix(handle, mark["offset"]) == mark["crc"])
                start = mark["offset"] if grown and mark is not None else 0
                handle.seek(start)
                data = handle.read(st.st_size - start)
            lines, consumed = usage.split_lines(data, final=True)
            if grown and mark is not None:
                states = self._fold_usage([r for r in map(usage.parse_line, lines) if r is not None])
                changed = set(states)
                crc = zlib.crc32(data[:consumed], mark["crc"])
            else:
                changed, states = self._refold_usage(lines)
                crc = zlib.crc32(data[:consumed])
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (USAGE_MARK, json.dumps(
                {"offset": start + consumed, "crc": crc, "size": start + len(data), "mtime_ns": st.st_mtime_ns})))
            self._refresh_usage_rows(changed, states)
            return changed, start + consumed

    def _usage_mark(self) -> dict | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (USAGE_MARK,)).fetchone()
        if not row:
            return None
        try:
            mark = load_json(row[0])
            return {k: int(mark[k]) for k in ("offset", "crc", "size", "mtime_ns")}
        except (ValueError, KeyError, TypeError):
            return None

    def _reset_usage_tables(self) -> set[str]:
        ids = {r[0] for r in self.conn.execute("SELECT node_id FROM usage")}
        self.conn.execute("DELETE FROM usage")
        self.conn.execute("DELETE FROM usage_seen")
        return ids

    def _refold_usage(self, lines: list[bytes]) -> tuple[set[str], dict[str, dict]]:
        seen = {r[0] for r in self.conn.execute("SELECT rid FROM usage_seen")}
        present: set[str] = set()
        new: list[dict] = []
        for raw in lines:
            rid = usage.quick_rid(raw)
            if rid is not None:
                present.add(rid)
                if rid in seen:
                    continue
            rec = usage.parse_line(raw)
            if rec is not None:
                present.add(rec["rid"])
                if rec["rid"] not in seen:
                    new.append(rec)
        if seen <= present:
            states = self._fold_usage(new, known=seen)
            return set(states), states
        changed = self._reset_usage_tables()   # lines we folded are gone: everything again, from the start
        states = self._fold_usage([r for r in map(usage.parse_line, lines) if r is not None], known=set())
        return changed | set(states), states

    def _fold_usage(self, records: list[dict], known: set[str] | None = None) -> dict[str, dict]:
        """Fold records into the per-node states, each rid once; returns the states that changed, by id."""
        c = self.conn
        if known is None:
            known = set()
            rids = list({r["rid"] for r in records})
            for i in range(0, len(rids), 500):
                chunk = rids[i:i + 500]
                known.update(r[0] for r in c.execute(
                    "SELECT rid FROM usage_seen WHERE rid IN (%s)" % ",".join("?" * len(chunk)), chunk))
        known = set(known)
        fresh: list[tuple[str]] = []
        states: dict[str, dict] = {}
        for rec in records:
            rid = rec["rid"]
            if rid in known:
                continue
            known.add(rid)
            fresh.append((rid,))
            node_id = rec["id"]
            state = states.get(node_id)
            if state is None:
                state = states[node_id] = self.usage_state(node_id) or usage.new_state()
            usage.fold(state, rec)
        if not states:
            return states
        c.executemany("INSERT OR IGNORE INTO usage_seen(rid) VALUES (?)", fresh)
        c.executemany("INSERT OR REPLACE INTO usage(node_id, fold) VALUES (?, ?)",
                      [(i, json.dumps(usage.finish(s), ensure_ascii=False, separators=(",", ":")))
                       for i, s in states.items()])
        return states

    def _refresh_usage_rows(self, node_ids: set[str], known: dict[str, dict] | None = None) -> None:
        """Recompute the usage columns of these nodes' rows from the fold, without reading their files. `known`:
        states just folded (the others are read from the table; a node with none has no usage in the log)."""
        known = known or {}
        ids = sorted(node_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            missing = [x for x in chunk if x not in known]
            states = dict(known)
            if missing:
                states.update({r[0]: _state(r[1]) for r in self.conn.execute(
                    "SELECT node_id, fold FROM usage WHERE node_id IN (%s)" % ",".join("?" * len(missing)),
                    missing)})
            updates = []
            for node_id, base_json, claims, minted in self.conn.execute(
                    f"SELECT id, usage_base, claims, base_importance FROM nodes WHERE id IN ({marks})",  # noqa: S608
                    chunk).fetchall():
                base, state = View.from_json(base_json), states.get(node_id)
                if usage.base_taken(node_id, base, state):
                    base = View()
                cols = usage.index_columns(usage.combine(base, state), load_json(claims))
                updates.append((cols["last_used"], cols["use_count"], cols["patches"], cols["origin_rescues"],
                                cols["heldout_passed"], cols["heldout_total"], cols["gaps"],
                                effective_importance(minted, cols["learned_importance"]), node_id))
            self.conn.executemany("UPDATE nodes SET last_used=?, use_count=?, patches=?, origin_rescues=?,"
                                  " heldout_passed=?, heldout_total=?, gaps=?, importance=? WHERE id=?", updates)


    # -- reads -----------------------------------------------------------------------------------------------
    def manifests(self, ids: Iterable[str]) -> dict[str, tuple[list[dict], list[dict]]]:
        """(dropped claims, trials) of these nodes as their files and the usage log say together, as dicts
        (Claim.to_dict, Trial.to_dict), read from the index alone. A node indexed before manifests were kept is
        left out: the caller reads its file."""
        ids = list(dict.fromkeys(ids))
        out: dict[str, tuple[list[dict], list[dict]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            states = {r[0]: _state(r[1]) for r in self.conn.execute(
                f"SELECT node_id, fold FROM usage WHERE node_id IN ({marks})", chunk)}  # noqa: S608
            for node_id, base_json, manifest in self.conn.execute(
                    f"SELECT id, usage_base, manifest FROM nodes WHERE id IN ({marks})", chunk):  # noqa: S608
                if not manifest:
                    continue
                state = states.get(node_id)
                if base_json or state is not None:
                    base = View.from_json(base_json)
                    if usage.base_taken(node_id, base, state):
                        base = View()
                    sums = usage.combine(base, state).sums
                else:
                    sums = {}   # no usage at all (most lessons): every counter is zero
                data = load_json(manifest)
                out[node_id] = (
                    [{**c, **{n: int(sums.get(f"{k}:{n}", 0)) for n in usage.CLAIM_COUNTERS}} for k, c in data["dropped"]],
                    [{**t, **{n: int(sums.get(f"{k}:{n}", 0)) for n in usage.TRIAL_COUNTERS}} for k, t in data["trials"]])
        return out

    def path_of(self, node_id: str) -> str | None:
        row = self.conn.execute("SELECT path FROM nodes WHERE id=?", (node_id,)).fetchone()
        return row[0] if row else None

    def has_id(self, node_id: str) -> bool:
        return self.path_of(node_id) is not None

    def rows(self, where: str = "", params: Iterable[object] = ()) -> list[IndexRow]:
        """Rows of every node, cold ones included (`row.cold`); `where` filters in SQL."""
        sql = f"SELECT {', '.join(_ROW_COLUMNS)} FROM nodes"
        if where:
            sql += " WHERE " + where
        sql += " ORDER BY family, level DESC, id"
        return [_row(r) for r in self.conn.execute(sql, tuple(params))]

    def select(self, columns: Sequence[str], where: str = "", params: Iterable[object] = ()) -> list[tuple]:
        """Some of IndexRow's columns of every row (or of those `where` picks), decoded as IndexRow's are, as tuples in
        rows()'s order: a command that draws every lesson at 50,000 reads only what it draws."""
        unknown = set(columns) - set(_ROW_COLUMNS) - _FACT_COLUMNS
        if unknown:
            raise ValueError(f"not a column of the index's rows: {sorted(unknown)}")
        sql = f"SELECT {', '.join(columns)} FROM nodes"  # noqa: S608 - names checked above
        if where:
            sql += " WHERE " + where
        sql += " ORDER BY family, level DESC, id"
        out: list[Any] = self.conn.execute(sql, tuple(params)).fetchall()
        decode = [(i, _ROW_DECODE[name]) for i, name in enumerate(columns) if name in _ROW_DECODE]
        if decode:
            for k, raw in enumerate(out):
                row = list(raw)
                for i, fn in decode:
                    row[i] = fn(row[i])
                out[k] = tuple(row)
        return out

    def rows_by_id(self, ids: Iterable[str]) -> dict[str, IndexRow]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, IndexRow] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for row in self.rows("id IN (%s)" % ",".join("?" * len(chunk)), chunk):
                out[row.id] = row
        return out

    def bodies(self, ids: Iterable[str]) -> dict[str, str]:
        ids = list(ids)
        if not ids:
            return {}
        return dict(self.conn.execute("SELECT id, body FROM nodes WHERE id IN (%s)" % ",".join("?" * len(ids)), ids))

    def servable_totals(self) -> tuple[int, int]:
        """(count, tokens) of what recall could serve: the gates decide on these two numbers alone. Kept in `meta`
        between writes, so the per-prompt gate does not sum the whole table every time."""
        cached = self.conn.execute("SELECT value FROM meta WHERE key = 'totals'").fetchone()
        if cached:
            count, tokens = cached[0].split()
            return int(count), int(tokens)
        marks = ",".join("?" * len(SERVABLE))
        row = self.conn.execute(f"SELECT count(*), coalesce(sum(tokens), 0) FROM nodes WHERE status IN ({marks})",
                                SERVABLE).fetchone()
        try:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('totals', ?)", (f"{row[0]} {row[1]}",))
        except sqlite3.OperationalError as exc:
            if not busy(exc):
                raise  # a cache that another writer keeps us from storing is only slower next time
        return int(row[0]), int(row[1])

    def search(self, query: str, limit: int = 20, *, every_word: bool = False) -> list[tuple[str, float]]:
        """BM25 over title, gist, tags and body (porter-stemmed) of the hot store. Returns (id, score), best
        first. Cold records are never in it (see cold_search). `every_word`: only lessons holding every content
        word of the query (a lesson whose text is the query's is among them): a few posting lists intersected, not
        every lesson that holds one common word ranked."""
        if every_word:
            q = " AND ".join(f'"{w}"' for w in query_words(query))
            top = self._top(q, limit) if q else []
        else:
            words = query_words(query)
            top = self._best(words, limit, selective_cap(self.lesson_count()) + 1) if words else []
        ids = self._fts_columns([r[0] for r in top], "id")
        return [(ids[rowid][0], -score) for rowid, score in top]

    def _top(self, q: str, limit: int) -> list[tuple[int, float]]:
        """(rowid, bm25) of the best `limit` lessons matching an FTS query, best first. Only the rowid and the score
        go through the sort: selecting a stored column there read it for every matching row (thousands, for a
        common word at 50,000 lessons), a sixth to a fifth of the query; the winners' columns are read after."""
        return self.conn.execute(
            f"SELECT rowid, bm25(nodes_fts, {_WEIGHT_MARKS}) AS score FROM nodes_fts WHERE nodes_fts MATCH ?"
            " ORDER BY score LIMIT ?", (*BM25_WEIGHTS, q, limit)).fetchall()

    def _best(self, words: list[str], limit: int, generic: int) -> list[tuple[int, float]]:
        """_top of the OR query of `words`, exactly, with BM25 computed only for lessons that can be among the best
        (rose.store.bm25): the lessons holding only the commonest words are left out when the `limit`-th best of
        the rest beats those words' ceilings; else, once, the commonest words below the score that best reached;
        else all are ranked. Holders are counted up to `generic` (the selective cap's next count: past it, a lower
        bound is all a ceiling needs). Bounded: a query of more than WORDS_CHECKED words (a pasted log) is ranked
        whole, without counting its words first."""
        q = " OR ".join(f'"{w}"' for w in words)
        if len(words) < 2 or len(words) > WORDS_CHECKED:
            return self._top(q, limit)
        stamp = self._fts_stamp()
        rows = self._fts_rows()
        if rows is None:
            return self._top(q, limit)
        holders = self.doc_freqs(words, up_to=generic)
        rare, common = bm25.split(words, holders, limit, rows)
        if not common or not self._prune_pays(rare, common, holders):
            return self._top(q, limit)
        got = self._top_among(q, rare, limit)
        if len(got) < limit or self._fts_stamp() != stamp:   # short, or counted before another process's write
            return self._top(q, limit)
        if bm25.beats(-got[-1][1], math.fsum(bm25.ceiling(rows, holders[w]) for w in common)):
            return got
        # the limit-th best found is a floor of the true one: the commonest words whose ceilings stay below it
        # can still be left out, and this ranking then reaches that floor again (it ranks more lessons)
        out = bm25.left_out(common, holders, rows, -got[-1][1])
        kept = [w for w in words if w not in out]
        return self._top_among(q, kept, limit) if out and self._prune_pays(kept, out, holders) \
            else self._top(q, limit)

    def _prune_pays(self, rare: list[str], common: list[str], holders: dict[str, int]) -> bool:
        """bm25.pays for these words: the common ones counted on as far as the answer needs (past the selective
        cap), their counts kept in `holders` (a larger lower bound is a lower, still valid, ceiling)."""
        rare_holders = sum(holders[w] for w in rare)
        need = bm25.common_needed(rare_holders)
        if any(holders[w] >= need for w in common):
            return True
        holders.update(self.doc_freqs([w for w in common if holders[w] < need], up_to=need))
        return bm25.pays(rare_holders, sum(min(holders[w], need) for w in common))

    def _top_among(self, q: str, rare: list[str], limit: int) -> list[tuple[int, float]]:
        """_top of `q` over the lessons holding one of `rare`: the same MATCH (its IDFs are of the whole table, so
        every score is _top's), its rows filtered before they are scored, in the same order (ties by the order
        FTS5 yields them, which the filter keeps). `+rowid`: the filter must not become FTS5's rowid lookup, which
        would run the MATCH again (and count every phrase's lessons again) for each listed row."""
        return self.conn.execute(
            f"SELECT rowid, bm25(nodes_fts, {_WEIGHT_MARKS}) AS score FROM nodes_fts WHERE nodes_fts MATCH ?"
            " AND +rowid IN (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?) ORDER BY score LIMIT ?",
            (*BM25_WEIGHTS, q, " OR ".join(f'"{w}"' for w in rare), limit)).fetchall()

    def _fts_rows(self) -> int | None:
        """FTS5's own row count (what its IDFs are computed from), from its averages record; None if unreadable."""
        row = self.conn.execute("SELECT block FROM nodes_fts_data WHERE id = ?", (bm25.AVERAGES_ROWID,)).fetchone()
        try:
            return bm25.row_count(bytes(row[0])) if row is not None else None
        except (ValueError, TypeError):
            return None

    def _fts_columns(self, rowids: list[int], columns: str) -> dict[int, tuple[Any, ...]]:
        """rowid -> the named columns of the lessons at those full-text rowids. A lesson's full-text row shares its
        nodes row's rowid (every write gives both the same one), so they are read from nodes: a b-tree lookup each,
        where FTS5 runs a scan of its own for each listed rowid (a third to a fifth of the CPU at 50,000 lessons)."""
        if not rowids:
            return {}
        marks = ",".join(str(int(r)) for r in rowids)
        return {r[0]: tuple(r[1:]) for r in self.conn.execute(
            f"SELECT rowid, {columns} FROM nodes WHERE rowid IN ({marks})")}  # noqa: S608 - ints and a constant

    def cold_search(self, query: str, limit: int = 20) -> list[tuple[str, str, float]]:
        """The cold archive's candidates for a query: (id, catalog text, bm25) of records whose title, tags or
        preview hold a query word exactly (no stemming), best first. Whether one is an exact match is decided by
        rose.retention.rules.cold_match on the text; this only finds them without reading a cold file."""
        q = fts_query(query)
        if not q:
            return []
        sql = ("SELECT id, title || ' ' || tags || ' ' || preview, bm25(cold_fts) AS score FROM cold_fts"
               " WHERE cold_fts MATCH ? ORDER BY score LIMIT ?")
        return [(r[0], r[1], -r[2]) for r in self.conn.execute(sql, (q, limit))]

    def _fts_stamp(self) -> bytes | None:
        """The full-text index's structure record: FTS5 writes a new one with every change to its terms."""
        row = self.conn.execute("SELECT block FROM nodes_fts_data WHERE id = 10").fetchone()
        return bytes(row[0]) if row else None

    def doc_freqs(self, terms: Iterable[str], up_to: int | None = None) -> dict[str, int]:
        """How many hot lessons hold each term (a word, or words side by side), as the full-text search counts them;
        with `up_to`, counting stops there (a count of `up_to` means that many or more: a generic word is known
        for one without reading all of its lessons). Remembered in this process while the full-text index is
        unchanged (_DOC_FREQS)."""
        key = str(self.db_path)
        stamp = self._fts_stamp()
        cached = _DOC_FREQS.get(key)
        known = cached[1] if cached is not None and cached[0] == stamp and len(cached[1]) < DOC_FREQS_MAX else {}
        out: dict[str, int] = {}
        fresh: dict[str, tuple[int, bool]] = {}
        for term in dict.fromkeys(terms):
            count, exact = known.get(term, (0, False))
            if not exact and (up_to is None or count < up_to):   # not known, or known only as "at least" less
                if up_to is None:
                    count = self.conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH ?",
                                              (f'"{term}"',)).fetchone()[0]
                else:
                    count = self.conn.execute("SELECT count(*) FROM (SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ?"
                                              " LIMIT ?)", (f'"{term}"', up_to)).fetchone()[0]
                exact = up_to is None or count < up_to
                fresh[term] = (count, exact)
            out[term] = count if up_to is None else min(count, up_to)
        # remembered only when no write came between the stamp and the counts (else the next call counts again)
        if not fresh or self._fts_stamp() == stamp:
            known.update(fresh)
            _DOC_FREQS[key] = (stamp, known)
        return out

    def lesson_count(self) -> int:
        """Every record the store holds, cold ones included: what a word's share (selective_cap) is of. Kept while
        the index is unchanged (as facts() is): a prompt asks about ten times, each a pass over the lessons' ids
        (0.18 ms at 50,000 lessons), where the check is one pragma."""
        stamp = self._change_stamp()
        if self._count is None or self._count[0] != stamp:
            self._count = (stamp, self.conn.execute("SELECT count(*) FROM nodes").fetchone()[0])
        return self._count[1]

    def selective_words(self, text: str, limit: int = 64) -> list[str]:
        """The content words of `text` that are selective in this store (held by at least one lesson and at most
        selective_cap of them), in order."""
        words = query_words(text, limit)
        if not words:
            return []
        cap = selective_cap(self.lesson_count())
        freqs = self.doc_freqs(words, up_to=cap + 1)   # past the cap, how far past does not matter
        return [w for w in words if 0 < freqs[w] <= cap]

    def buckets(self) -> list[tuple[str, str, int, int, int, int]]:
        """(scope, memory_type, hot count, hot tokens, cold count, cold tokens) per bucket: what retention budgets
        and `rose status` / `rose list` read without building a row. A legacy `archived` status outside the archive
        folder counts as cold (it is moved there by the next maintenance pass). From facts() when this connection
        holds them as the index is now, else from a pass over the same index with the two sums a bucket needs, not
        facts' eight (about half the time at 50,000 lessons: `rose list` reads nothing else of them)."""
        held = self._held_facts()
        groups = (self.conn.execute(_BUCKETS) if held is None
                  else ((g.scope, g.memory_type, g.status, g.lessons, g.tokens) for g in held))
        out: dict[tuple[str, str], list[int]] = {}
        for scope, memory_type, status, lessons, tokens in groups:
            sums = out.setdefault((scope, memory_type), [0, 0, 0, 0])
            cold = 2 if status == Status.ARCHIVED.value else 0
            sums[cold] += lessons
            sums[cold + 1] += tokens
        return [(scope, memory_type, hot, hot_tokens, cold_n, cold_tokens)
                for (scope, memory_type), (hot, hot_tokens, cold_n, cold_tokens) in sorted(out.items())]

    def facts(self) -> list[FactGroup]:
        """The lessons' counts and sums per (scope, memory_type, family, level, status, origin): one pass over the
        narrow facts index in its own order (no sort, no lesson row read), which `rose status` reads three ways
        (buckets, compression_facts, its own counts). Kept until the index changes: a write on this connection
        moves total_changes, a commit by any other moves data_version."""
        held = self._held_facts()
        if held is None:
            stamp = self._change_stamp()
            held = [FactGroup(*row) for row in self.conn.execute(_FACTS)]
            self._facts = (stamp, held)
        return held

    def _held_facts(self) -> list[FactGroup] | None:
        """facts() as last read, if the index has not changed since (see facts)."""
        if self._facts is None:
            return None
        return self._facts[1] if self._facts[0] == self._change_stamp() else None

    def _change_stamp(self) -> tuple:
        """What the index is now, as far as what was read from it goes: a write on this connection moves
        total_changes, a commit by any other moves data_version (and a new connection is a new stamp)."""
        conn = self.conn
        return conn, conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0]

    def search_evidence(self, query: str, limit: int = 50) -> list[LexicalHit]:
        """`search`, with each hit's evidence counted (see LexicalHit): best BM25 first, admitted or not.

        One FTS query ranks; then one per query word (and per phrase) counts the lessons holding it and marks which
        of the ranked hits do, and one per everyday word the store holds asks whether it is some lesson's tag.
        Bounded by WORDS_CHECKED and PHRASES_CHECKED, whatever the prompt's length."""
        all_words = query_words(query)
        if not all_words:
            return []
        # the share is of every record the store holds, cold ones included: archiving makes the hot store smaller
        # and sharper, and must not make the words of its topics generic (bench/bench_retention.py measured it)
        records = self.lesson_count()
        cap = selective_cap(records)
        top = self._best(all_words, limit, cap + 1)
        if not top:
            return []
        columns = self._fts_columns([r[0] for r in top], "id, title")
        ranked = [(rowid, *columns[rowid], score) for rowid, score in top]
        hits = {r[0]: LexicalHit(r[1], -r[3]) for r in ranked}
        marks = ",".join(str(int(r)) for r in hits)

        def holders(term: str) -> tuple[int, list[int]]:
            row = self.conn.execute(
                f"SELECT count(*), group_concat(CASE WHEN rowid IN ({marks}) THEN rowid END) FROM nodes_fts"  # noqa: S608
                " WHERE nodes_fts MATCH ?", (f'"{term}"',)).fetchone()
            return int(row[0]), [int(x) for x in (row[1] or "").split(",") if x]

        def tagged(word: str) -> bool:
            return self.conn.execute("SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ? LIMIT 1",
                                     (f'tags : "{word}"',)).fetchone() is not None

        common = everyday()
        words = query_words(query, WORDS_CHECKED)
        known: dict[str, int] = {}
        selective_in_query = present = 0
        anchored = False
        terms: list[str] = []
        held_by: dict[str, set[int]] = {}
        for word in words:
            df, held = holders(word)
            known[word] = df
            held_by[word] = set(held)
            # A word no lesson holds still raises the bar (two selective words, not one): a prompt full of words the
            # store has never seen is most likely about something else. Not so a number-like token (a ticket, a
            # hash, a version): those are new in every prompt and say nothing about the topic.
            selective = df <= cap and (df > 0 or not any(ch.isdigit() for ch in word))
            term = df > 0 and (word not in common or tagged(word))
            anchored = anchored or term
            if term:
                terms.append(word)
            selective_in_query += selective
            present += selective or df > 0
            for rowid in held:
                hits[rowid].words += 1
                hits[rowid].selective += selective
                hits[rowid].terms += selective and term
        for phrase in query_phrases(query):
            a, b = phrase.split(" ")
            if a in held_by and b in held_by and not held_by[a] & held_by[b]:
                continue   # a hit holding the phrase holds both its words: no ranked hit does, so none holds it
            df, held = holders(phrase)
            if df <= cap:
                for rowid in held:
                    hits[rowid].phrase = True
        prompt_words = set(all_words)
        for rowid, _id, title, _score in ranked:
            hits[rowid].named = names(title, prompt_words)
        elsewhere = records >= ELSEWHERE_MIN_LESSONS and unknown_share(known) >= ELSEWHERE_SHARE

        def share_a_lesson(pairing: list[str]) -> bool:
            # the ranked hits first (counted already); the index only when none of them holds two
            pairs = term_pairs(pairing)
            if not pairs:
                return False
            if any(held_by[t] & held_by[u] for t, others in pairs for u in others):
                return True
            return self._share_a_lesson(pairing)

        context = sum(1 for w in words if not any(ch.isdigit() for ch in w)) - 1   # the words beside one term
        prompt = PromptEvidence(selective_in_query, present, anchored, elsewhere,
                                everyday_sense(terms, context, common, share_a_lesson))
        for hit in hits.values():
            hit.admitted = admits(hit, prompt)
            hit.corroborable = corroborable(prompt)
        return [hits[r[0]] for r in ranked]

    def _share_a_lesson(self, terms: list[str]) -> bool:
        """Whether some lesson holds two of `terms`: one lookup, stopped at the first (at 50,000 generated lessons
        0.6-2 ms for two or three tag words, 5 ms for eight)."""
        q = term_pairs_query(terms)
        return q is not None and self.conn.execute("SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ? LIMIT 1",
                                                   (q,)).fetchone() is not None

    # -- embeddings ------------------------------------------------------------------------------------------
    def missing_embeddings(self, model: str, limit: int = 10_000,
                           ids: Collection[str] | None = None) -> list[tuple[str, str, str, str, str]]:
        """(id, title, tags, gist, body) of hot nodes with no vector of their current text in this model's space.
        Cold records are never embedded: dense recall never sees the archive. `ids`: only among these (a lesson
        just added: looked up by id, not found by a scan of every row, 145 ms at 50,000 lessons)."""
        query = ("SELECT n.id, n.title, n.tags, n.gist, n.body FROM nodes n LEFT JOIN embeddings e"
                 " ON e.node_id = n.id AND e.model = ? AND e.text_hash = n.text_hash WHERE e.node_id IS NULL"
                 " AND n.cold = 0")
        if ids is None:
            return list(self.conn.execute(query + " LIMIT ?", (model, limit)))
        wanted = list(ids)
        rows: list[tuple[str, str, str, str, str]] = []
        for start in range(0, len(wanted), 500):   # under SQLite's oldest limit on bound parameters (999)
            chunk = wanted[start:start + 500]
            rows += self.conn.execute(query + f" AND n.id IN ({','.join('?' * len(chunk))}) LIMIT ?",  # noqa: S608
                                      (model, *chunk, limit - len(rows))).fetchall()
            if len(rows) >= limit:
                break
        return rows

    def set_embeddings(self, model: str, vectors: list[tuple[str, bytes, str]]) -> int:
        """Store (id, vector, text hash) rows whose node still has that text; returns how many were stored."""
        with self._transaction():
            # the rows the statement itself wrote (rowcount): total_changes would count vector_state's triggers too
            return self.conn.executemany(
                "INSERT OR REPLACE INTO embeddings(node_id, model, vec, text_hash) SELECT ?, ?, ?, ?"
                " WHERE EXISTS (SELECT 1 FROM nodes WHERE id = ? AND text_hash = ? AND cold = 0)",
                [(node_id, model, blob, digest, node_id, digest) for node_id, blob, digest in vectors]).rowcount

    def embeddings(self, model: str) -> list[tuple[str, bytes]]:
        return list(self.conn.execute("SELECT node_id, vec FROM embeddings WHERE model=?", (model,)))

    def embedded_count(self, model: str) -> int:
        return self.conn.execute("SELECT count(*) FROM embeddings WHERE model=?", (model,)).fetchone()[0]

    def unreconciled_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM nodes WHERE unreconciled = 1 ORDER BY created")]

    def compression_facts(self) -> dict[str, int]:
        """Sums for `rose status`: compressed and merged lessons, held-out results, sticky patches, open trials."""
        out = dict.fromkeys(("compressed", "merged", "heldout_passed", "heldout_total", "evaluated", "demoted",
                             "sticky", "open_trials", "gaps"), 0)
        for g in self.facts():
            out["compressed"] += g.lessons if g.origin == "compression" else 0
            out["merged"] += g.lessons if g.origin == "merge" else 0
            out["heldout_passed"] += g.heldout_passed
            out["heldout_total"] += g.heldout_total
            out["evaluated"] += g.evaluated
            out["demoted"] += g.lessons if g.status == Status.DEMOTED.value else 0
            if g.status in SERVABLE:
                out["sticky"] += g.rescues
                out["open_trials"] += g.trials
                out["gaps"] += g.gaps
        return out

    def problems(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT path, problem FROM files WHERE problem IS NOT NULL ORDER BY path")]

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM nodes").fetchone()[0]

    def count_by_family(self, where: str = "", params: Iterable[object] = ()) -> dict[str, int]:
        """How many rows of each family `where` picks (all of them without one), counted in SQL."""
        sql = "SELECT family, count(*) FROM nodes" + (f" WHERE {where}" if where else "") + " GROUP BY family"
        return {family: int(n) for family, n in self.conn.execute(sql, tuple(params))}

    def count_where(self, where: str, params: Iterable[object] = ()) -> int:
        """How many rows `where` picks, in SQL (a bounded view's "and N more")."""
        return int(self.conn.execute(f"SELECT count(*) FROM nodes WHERE {where}", tuple(params)).fetchone()[0])  # noqa: S608

    def importance_at(self, where: str, params: Iterable[object], rank: int) -> float | None:
        """The importance of the row at this rank (0 first) of those `where` picks, by falling importance."""
        got = self.conn.execute(f"SELECT importance FROM nodes WHERE {where} ORDER BY importance DESC "  # noqa: S608
                                "LIMIT 1 OFFSET ?", (*params, rank)).fetchone()
        return None if got is None else float(got[0])

    def select_first(self, columns: Sequence[str], where: str, params: Iterable[object], limit: int) -> list[tuple]:
        """select()'s first `limit` rows of those `where` picks, in its order (family, level falling, id)."""
        return self.select(columns, f"rowid IN (SELECT rowid FROM nodes WHERE {where} "  # noqa: S608
                           "ORDER BY family, level DESC, id LIMIT ?)", (*params, limit))


# the columns of `nodes` a lesson writes, by name (a column added by a migration cannot shift the others)
_NODE_COLUMNS = ("id", "family", "title", "gist", "tags", "body", "level", "status", "origin", "memory_type", "scope",
                 "importance", "parents", "derived_from", "dropped", "tokens", "created", "last_used", "use_count",
                 "path", "conflict", "patches", "text_hash", "origin_rescues", "heldout_passed", "heldout_total",
                 "trials", "gaps", "unreconciled", "usage_base", "claims", "manifest", "cold", "cold_from",
                 "base_importance", "confidence")
_INSERT_NODE = f"INSERT INTO nodes ({', '.join(_NODE_COLUMNS)}) VALUES ({', '.join('?' * len(_NODE_COLUMNS))})"
_INSERT_NODE_AT = (f"INSERT INTO nodes (rowid, {', '.join(_NODE_COLUMNS)}) "
                   f"VALUES ({', '.join('?' * (len(_NODE_COLUMNS) + 1))})")
_INSERT_FTS = "INSERT INTO nodes_fts(rowid, id, title, gist, tags, body) VALUES (?,?,?,?,?,?)"
_INSERT_COLD = "INSERT INTO cold_fts(rowid, id, title, tags, preview) VALUES (?,?,?,?,?)"
_MARK_CLEAN = "INSERT OR REPLACE INTO clean_files(path, digest) VALUES (?, ?)"
_INSERT_FILE = "INSERT OR REPLACE INTO files(path, mtime_ns, size, node_id, problem) VALUES (?,?,?,?,?)"


def _ids_json(ids: list[str]) -> str:
    return "[]" if not ids else json.dumps(ids)   # most lists are empty


def _node_row(node: Node, rel_path: str, base: View | None) -> tuple[tuple, bool]:
    """A lesson's `nodes` row (values in _NODE_COLUMNS order), and whether it is cold (under archive/)."""
    tags = " ".join(node.tags)
    dropped = node.dropped
    cold = is_cold_path(rel_path)
    # an enum member's `_value_` is its value without the `value` property's descriptor (~0.4 us each, 5 a row)
    status = Status.ARCHIVED._value_ if cold else node.status._value_
    cold_from = (node.archived_from or Status.ACTIVE)._value_ if cold else ""
    if dropped:
        keys = usage.claim_keys(node)
        claims = _JSON.encode([[k, c.claim] for k, c in zip(keys, dropped)])
        rescuing = [c.claim for c in dropped if c.rescues > 0]
        patches = _JSON.encode(rescuing) if rescuing else "[]"
    else:
        keys, claims, patches, rescuing = [], "[]", "[]", []
    body = node.body
    row = (node.id, node.family, node.title, node.gist, tags, body, node.level, status, node.origin._value_,
           node.memory_type._value_, node.scope._value_,
           effective_importance(node.importance, node.learned_importance),
           _ids_json(node.parents), _ids_json(node.derived_from), len(dropped), estimate(body), node.created,
           node.stats.last_used, node.use_count, rel_path, node.conflict, patches,
           text_hash(node.title, tags, node.gist, body), len(rescuing),
           node.heldout_passed, node.heldout_total, len(node.trials), len(node.gaps), int(node.unreconciled),
           "" if base is None or base.empty() else base.to_json(), claims, _manifest(node, keys),
           int(cold), cold_from, node.importance, node.confidence)
    return row, cold


# json.dumps(value, ensure_ascii=False) builds this encoder anew each call (any argument but the defaults does)
_JSON = json.JSONEncoder(ensure_ascii=False)
_EMPTY_MANIFEST = json.dumps({"dropped": [], "trials": []}, ensure_ascii=False)


def _manifest(node: Node, claim_keys: list[str] | None = None) -> str:
    """A node's delta manifest and trials for `rose tree`: meaning only (the counters are usage, folded on read).
    `claim_keys`: usage.claim_keys(node), when the caller has them."""
    if not node.dropped and not node.trials:
        return _EMPTY_MANIFEST   # most lessons (json.dumps of the same empty lists, a rebuild's every row)
    dropped = [[k, {n: v for n, v in c.to_dict().items() if n not in usage.CLAIM_COUNTERS}]
               for k, c in zip(usage.claim_keys(node) if claim_keys is None else claim_keys, node.dropped)]
    trials = [[k, {n: v for n, v in t.to_dict().items() if n not in usage.TRIAL_COUNTERS}]
              for k, t in zip(usage.trial_keys(node), node.trials)]
    return _JSON.encode({"dropped": dropped, "trials": trials})


def _state(text: str) -> dict:
    return {**usage.new_state(), **load_json(text)}


def _crc_prefix(handle, length: int) -> int:
    """CRC32 of a file's first `length` bytes, read in blocks (zlib runs at memory speed: ~10 ms for 16 MB)."""
    handle.seek(0)
    crc, left = 0, length
    while left > 0:
        block = handle.read(min(left, 1 << 20))
        if not block:
            return -1
        crc = zlib.crc32(block, crc)
        left -= len(block)
    return crc


def busy(exc: BaseException) -> bool:
    """Is this SQLite error another writer holding the database (not damage)?"""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class IndexDamaged(sqlite3.DatabaseError):
    """index.db lacks what rose's own schema made (a table gone): damage, as a malformed page is."""


_DAMAGE_CODES = (11, 26)   # SQLITE_CORRUPT, SQLITE_NOTADB: an extended code (CORRUPT_VTAB...) keeps them in its low byte


def damaged(exc: BaseException) -> bool:
    """Is this SQLite error a damaged database file (not a busy writer, not a statement's own fault)?"""
    if isinstance(exc, IndexDamaged):
        return True
    if not isinstance(exc, sqlite3.DatabaseError) or busy(exc):
        return False
    code = getattr(exc, "sqlite_errorcode", None)   # Python 3.11 and later
    if isinstance(code, int):
        return code & 0xFF in _DAMAGE_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _unlink_index(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(db_path) + suffix)
        except FileNotFoundError:
            pass


def _scan_folders(nodes_dir: Path) -> Iterator[tuple[str, list[str], list[os.stat_result]]]:
    """("nodes/<family>/", file names, their stats) for each folder of node files. This runs on every command and
    stats every lesson file, so it does as little per file as it can: the stats are taken by name relative to the
    folder's descriptor (one path component for the kernel to resolve, not the whole path) and in C (map), and
    nothing is built for a file but its name and its stat."""
    if not nodes_dir.is_dir():
        return
    top = nodes_dir.name
    with os.scandir(nodes_dir) as families:
        folders = [fam for fam in families if not fam.name.startswith(".") and fam.is_dir(follow_symlinks=False)]
    for fam in folders:
        try:
            names, stats = _stat_lessons(fam.path)
        except (FileNotFoundError, NotADirectoryError):
            continue   # gone since it was listed: its rows are dropped as those of any folder not seen
        yield f"{top}/{fam.name}/", names, stats


# A folder's names joined by NUL (which no name holds), each a lesson file's: not hidden, ending in .md
_LESSON_NAMES = re.compile(r"(?:[^.\0][^\0]*\.md\0)+")
_NAME = operator.attrgetter("name")


def _stat_lessons(folder: str) -> tuple[list[str], list[os.stat_result]]:
    """The names and stats of the lesson files (*.md, not hidden, regular files by the listing's file type: no link
    and no folder) in one folder. A folder holds lesson files and nothing else but for a stray file now and then,
    so that is tested for the whole folder at once, in C: every name by one regular expression over them all, every
    entry's type by the listing's own d_type (no stat); only a folder that fails it is filtered entry by entry."""
    by_fd = os.scandir in os.supports_fd
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if by_fd else -1
    try:
        with os.scandir(fd if by_fd else folder) as listed:
            files = list(listed)
        names = list(map(_NAME, files))
        if not (_LESSON_NAMES.fullmatch("\0".join(names) + "\0") and not any(map(os.DirEntry.is_symlink, files))
                and all(map(os.DirEntry.is_file, files))):
            files = [entry for entry in files if entry.name.endswith(".md") and not entry.name.startswith(".")
                     and entry.is_file(follow_symlinks=False)]
            names = list(map(_NAME, files))
        try:
            # each DirEntry of a descriptor's listing stats by name against it (so fd stays open until here); the
            # unbound method, called with no arguments from C, is a tenth of the scan cheaper than stat(follow_
            # symlinks=False), and on an entry the listing says is a regular file it stats that file itself
            stats = list(map(os.DirEntry.stat, files))
        except FileNotFoundError:   # a file deleted while the folder is read: skip it, as a later listing would
            files, stats = _still_there(files)
            names = list(map(_NAME, files))
    finally:
        if by_fd:
            os.close(fd)
    return names, stats


def _still_there(files: list[os.DirEntry]) -> tuple[list[os.DirEntry], list[os.stat_result]]:
    kept, stats = [], []
    for entry in files:
        try:
            stats.append(entry.stat())
        except FileNotFoundError:
            continue
        kept.append(entry)
    return kept, stats


_MTIME = operator.attrgetter("st_mtime_ns")
_SIZE = operator.attrgetter("st_size")


def _folder_signature(names: list[str], stats: list[os.stat_result]) -> str:
    """What a folder's files look like, as one hash of every (name, mtime, size): any file added, removed, renamed
    or written (in place or by a rename) changes it, as it changes what the per-file comparison looks at. In the
    order the folder lists them: a folder listed in another order only costs a comparison, never a missed edit.
    Built without a string per file: the count, the names (NUL cannot be in a name), then the mtimes and sizes as
    fixed-width integers."""
    data = b"".join([b"%d\0" % len(names), "\0".join(names).encode("utf-8", "surrogatepass"), b"\0",
                     # from lists: array's constructor sizes itself to a list once, and grows item by item from
                     # an iterator (a third slower)
                     array.array("q", list(map(_MTIME, stats))).tobytes(),
                     array.array("q", list(map(_SIZE, stats))).tobytes()])
    # two independent checksums and the length (a change detector, not a MAC; hashlib costs 4 ms to import)
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def _folders(dirs: Path | Sequence[Path]) -> list[Path]:
    return [dirs] if isinstance(dirs, Path) else list(dirs)


def _dir_stamps(dirs: Path | Sequence[Path]) -> str:
    """The mtimes of nodes/ (and archive/) and each folder in them: any file added, removed or renamed in place
    changes one."""
    stamps = []
    for folder in _folders(dirs):
        try:
            stamps.append(f"{folder.name}:{os.stat(folder).st_mtime_ns}")
            with os.scandir(folder) as subs:
                for sub in subs:
                    if sub.is_dir(follow_symlinks=False):
                        stamps.append(f"{folder.name}/{sub.name}:{sub.stat().st_mtime_ns}")
        except FileNotFoundError:
            stamps.append(f"{folder.name}:-")
    return "|".join(sorted(stamps))


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order; return the names applied now."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    done = {r[0] for r in conn.execute("SELECT name FROM migrations")}
    applied = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM migrations WHERE name=?", (name,)).fetchone():
                conn.execute("ROLLBACK")  # another process applied it while we waited
                continue
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO migrations VALUES (?, datetime('now'))", (name,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


def _statements(sql: str) -> list[str]:
    """The statements of a migration, comments dropped; a trigger's body (statements of its own) stays whole."""
    lines = [line.split("--", 1)[0] for line in sql.splitlines()]
    statements, pending = [], ""
    for piece in "\n".join(lines).split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending.strip())
            pending = ""
    if pending.strip(" \n;"):
        statements.append(pending.strip())
    return statements
