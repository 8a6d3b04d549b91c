"""One store on disk (a project's `.rose/` or the global `~/.rose`): the files, and the index derived from them.

    .rose/
      config.yaml          settings overrides                      committed
      nodes/<family>/*.md  the lessons (the DAG): their meaning     committed
      archive/<type>/*.md  the cold archive (rose.store.archive)    committed
      archive/catalog.jsonl  what the archive holds, append-only    committed, merged by git's union driver
      usage.jsonl          what using them did (rose.store.usage)   committed, merged by git's union driver
      .gitattributes       `usage.jsonl merge=union`                committed
      episodes/*.json      the replay corpus                        committed
      routing/*.yaml       selection rules                          committed
      index.md             one line per lesson, kept true on every write (what a selector greps)
      index.db             SQLite FTS index and folded usage, derived     machine-local
      sessions/*.json      per-session scratch           machine-local
      events.jsonl         telemetry                     machine-local
      judge-cache.json     cached judgements             machine-local
      locks/ logs/ queue/ cache/  machine-local

Every write is atomic and redacted; every read-modify-write holds the store lock. index.md is derived like
index.db: a write splices its lessons' lines in (the full rewrite's text, byte for byte; a file still as rose last
wrote it, by the stamp the index keeps, is neither read nor searched: rose.store.splice), and the index commit that
changes what it lists also records that index.md is owed, cleared once it is written, so a process killed in
between leaves a debt the next sync (or write) pays by writing index.md whole.

A lesson's file changes only when its meaning changes, so a team that commits `.rose/` gets no churn and no merge
conflict from use. Each field of a Node is one or the other, decided here and nowhere else (rose.store.usage holds
the code; the stages that change `node.stats` do not know about the split):

    meaning (the .md file)                          usage (usage.jsonl)          merged across clones as
    id family title gist body level status origin   stats.attempts successes     counters: summed deltas
    memory_type scope importance confidence tags      failures expansions rescues
    conflict disputes derived_from parents          use_count
    evidence outcome created unreconciled           extra.duplicate_hits
    dropped: claim kind holder                      dropped[].rescues attempts   counters, keyed by claim text
    trials: episode strategy kind attached claims   trials[].idle                counters, keyed by trial
      queue tries opened (and the body's section)
    related                                         stats.last_used last_attempt times: the latest wins
    extra (every other key, kept verbatim)          covers_tasks gaps preserve   sets: members added / removed
                                                    heldout last_attempt_successes  registers: the latest
                                                      rejections spans              record wins
                                                      learned_importance
                                                    credit:<served|withheld>:    counters with no Node field,
                                                      n / pass (rose.credit)       summed (Store.log_counts)
                                                    compress:failed (rose.compress.payback)
                                                    credit:suspect               a register, the latest wins

Why the less obvious ones fall where they do. Usage is what happens when a lesson is used or evaluated: credit,
the regression set it earned (`covers_tasks`), what compression attempts and replays learned about it (`preserve`
hints, `spans` observed doing work, `heldout` results, the backoff in `rejections`, the cooldown's
`last_attempt`), failures nothing explained (`gaps`). None of it is served. Meaning is what recall serves and what
the graph is: the text, the edges, the status, the provenance (`evidence`), and a descent's detail under trial,
which is a section of the body (served with the lesson), so the `trials` that describe it stay beside it; only
their idle counts are usage. Claim texts are meaning; how often a claim rescued is usage (a claim that has rescued
is a sticky patch, derived from the folded count). `unreconciled` flips once, when a backend first judges the
lesson: two clones that both reconcile it make the same edit, which git merges.

Reading folds: a node is its file, plus the usage the index has folded from the log (Index.catch_up_usage keeps it
current by the log's size, mtime and a CRC of the folded prefix; the per-prompt quick sync never folds). A file
written before the split still holds usage in its frontmatter; those values are the base the log adds to, and
they move into the log (one base record, rose.store.usage) only when the file is next rewritten for its meaning.
Saving compares the node's meaning with the file's: equal, the file is not touched; the node's usage minus what
file and log already say is appended as one record, under the lock.

Cold records (rose.store.archive) are the same files in archive/: a node whose status is `archived` is saved there,
and one whose status is set back is saved to nodes/ again, each by an atomic rename (a meaning change is written
beside it: before the rename out of the archive, after the rename into it, so a kill between the two leaves the
record cold with its file whole). A cold file keeps the status it had (what a restore returns to); the index and
every read say `archived`. Learned importance is usage: evidence moves it (rose.retention.rules) without touching
the file, whose `importance` stays what the lesson was minted with.
"""
from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from rose.text import load_json
from rose.errors import CorruptFile, NodeNotFound, RoseError, UnsafeFile
from rose.model import Scope, Status, new_episode_id, new_node_id, valid_episode_id, valid_node_id
from rose.store import archive, events, reader, usage
from rose.store.atomic import (LOCK_TIMEOUT_S, PRIVATE_DIR, FileBatch, file_lock, move_file, private_dir,
                               write_text_atomic)
from rose.store.paths import global_root, inside, local_root, own_store_problem
from rose.store.index import Index, IndexRow, SyncReport
from rose.terminal import visible
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # the records load where one is read or written, never on a prompt that only queries the index
    from typing import Any

    from rose.records import Episode, Node
    from rose.store.index import Upsert
    from rose.store.splice import FileView, Piece

GITIGNORE = """\
# Written by rose. Lessons (nodes/), usage.jsonl, episodes/, routing/ and config.yaml are worth committing;
# everything below is machine-local or derived and is rebuilt on demand.
index.md
index.db
index.db-*
sessions/
events.jsonl
events.1.jsonl
judge-cache.json
locks/
logs/
queue/
cache/
*.tmp
"""

GITATTRIBUTES = f"""\
# Written by rose: usage.jsonl and the archive's catalog only ever gain lines, so merging keeps both sides'
# (rose.store.usage, rose.store.archive).
{usage.GITATTRIBUTES_LINE}
{archive.GITATTRIBUTES_LINE}
"""
UNION_LINES = (usage.GITATTRIBUTES_LINE, archive.GITATTRIBUTES_LINE)

MACHINE_LOCAL = ("sessions", "locks", "logs", "queue", "cache")   # under Store.local: the user's alone


def _private(root: Path) -> bool:
    """Is the store at `root` the user's own (the global store, or one under it), not a repository's?"""
    return inside(os.path.realpath(root), str(global_root()))


NODES_DIR = "nodes"   # the hot store's folder under the root: one folder a family
_FAMILY_CHARS = re.compile(r"[^a-z0-9_-]+")
_UNSEEN = object()


class _OnDisk(Record):
    """A node's file as it is: its meaning (to tell whether a save must rewrite it) and the usage an old file
    still holds in its frontmatter (the base the log adds to)."""

    meaning: dict[str, Any]
    body: str
    base: usage.View

    def same(self, meaning: dict[str, Any], body: str) -> bool:
        return self.body == body and self.meaning == meaning


INDEX_MD_HEADER = "# rose index: id | family | level | title | tags | gist | path"


def _index_md_line(node_id: str, family: str, level: int, title: str, tags: str, gist: str, path: str) -> str:
    gist = gist.replace("\n", " ").replace("|", "/")
    title = title.replace("\n", " ").replace("|", "/")
    # index.md is read with cat and less too: a title's escape sequence is written visible (rose.terminal)
    return visible(f"{node_id} | {family} | L{level} | {title} | {' '.join(tags.split())} | {gist} | {path}")


def _index_md_key(line: bytes) -> tuple[bytes, int, bytes] | None:
    """An index.md line's sort key (family, -level, id); None for a line that is not one rose wrote."""
    parts = line.split(b" | ", 3)
    if len(parts) < 4 or not parts[2].startswith(b"L"):
        return None
    try:
        return parts[1], -int(parts[2][1:]), parts[0]
    except ValueError:
        return None


IndexMdKey = tuple[bytes, int, bytes]     # an index.md line's place: (family, -level, id), as UTF-8
IndexMdListed = dict[str, IndexMdKey | None]   # lessons about to change: where each one's line is (None: none)


def _index_md_row_key(row: tuple[str, str, int, str, str, str, str]) -> IndexMdKey:
    """The sort key of a hot row's line (Index.hot_rows_of), as _index_md_key reads it back from the line."""
    return visible(row[1]).encode("utf-8", "surrogatepass"), -row[2], row[0].encode("utf-8", "surrogatepass")


def _index_md_place(data: bytes | FileView, lo: int, hi: int, key: tuple[bytes, int, bytes]) -> int | None:
    """bisect_left over the sorted lines of data[lo:hi] (each ending in a newline), by byte offsets: only the
    lines the bisection looks at are parsed. None when one of them is not a line rose wrote. UTF-8 bytes sort as
    their text does, so the order is the one the full rewrite's SQL gives."""
    while lo < hi:
        mid = (lo + hi) // 2
        start = data.rfind(b"\n", lo, mid)
        start = lo if start < 0 else start + 1        # the line holding `mid`: lo <= start <= mid < hi
        end = data.find(b"\n", start, hi)              # every line ends in a newline, the last one included
        found = _index_md_key(data[start:end])
        if found is None:
            return None
        if found < key:
            lo = end + 1
        else:
            hi = start
    return lo


def _index_md_places(data: bytes | FileView, lo: int, hi: int, keys: list[IndexMdKey]) -> list[int] | None:
    """_index_md_place of each of `keys` (ascending, distinct), found by bisecting for the middle key and then
    for the keys on each side of it within the lines on that side only: about n log(N/n) lines parsed for n keys
    among N lines instead of n log N (a batch of 500 among 50,000 lines: ~3,500, not ~8,000). The same places:
    a key below the middle one has its place at or before the middle's, one above at or after it."""
    places = [0] * len(keys)
    todo = [(0, len(keys), lo, hi)]
    while todo:
        first, stop, lo, hi = todo.pop()
        if first >= stop:
            continue
        mid = (first + stop) // 2
        place = _index_md_place(data, lo, hi, keys[mid])
        if place is None:
            return None
        places[mid] = place
        todo += [(first, mid, lo, place), (mid + 1, stop, place, hi)]
    return places


_FIND_EACH = 16   # ids up to which each one's lines are found with a bytes.find (a save); past it, one split


def _without_lines_of(data: bytes, start: int, ids: set[bytes]) -> bytes:
    """data without any line from `start` on (data[start - 1] is a newline) whose id, the text before its first
    " | ", is one of `ids`."""
    if len(ids) <= _FIND_EACH:
        for node_id in ids:
            mark = b"\n" + node_id + b" | "
            at = data.find(mark, start - 1)
            while at >= 0:
                data = data[:at + 1] + data[data.index(b"\n", at + 1) + 1:]
                at = data.find(mark, at)
        return data
    lines = data[start:].split(b"\n")   # the last one is the empty text after the final newline
    kept = [line for line in lines if line.partition(b" | ")[0] not in ids]
    return data if len(kept) == len(lines) else data[:start] + b"\n".join(kept)


def _joined(data: bytes, pieces: list[Piece]) -> bytes:
    """The new file the pieces make, its (offset, length) ranges taken from `data` (the source's bytes)."""
    view = memoryview(data)
    return b"".join(view[p[0]:p[0] + p[1]] if isinstance(p, tuple) else p for p in pieces)


def family_slug(name: str) -> str:
    slug = _FAMILY_CHARS.sub("-", name.strip().lower()).strip("-")
    return slug[:48] or "general"


def redact_node(node: Node) -> Node:
    """Redact every field of a node that can carry text, in place: what a folder is named after (family) and what
    index.md lists (tags) included. Which fields those are is declared with each field (rose.model's codecs), so a
    new text field is redacted without an edit here. Returns the node."""
    _redact_meaning(node)
    _redact_usage_text(node)
    return node


_MEANING_TEXT: dict[type, tuple[str, ...]] = {}


def _redact_meaning(node: Node) -> bool:
    """The fields a node file holds (its meaning, rose.store.usage.meaning), redacted in place; returns whether the
    redactor changed any of them."""
    from rose.redact import redact, redact_data
    from rose.store.usage import FRONTMATTER_KEYS

    changed = False

    def r(text: str) -> str:
        nonlocal changed
        out = redact(text)
        changed = changed or out != text
        return out

    names = _MEANING_TEXT.get(type(node))
    if names is None:   # the same fields for every node: found once, not per lesson of a bulk save
        from rose.records import text_fields

        names = _MEANING_TEXT[type(node)] = text_fields(type(node), lambda k: k not in FRONTMATTER_KEYS)
    node.redact_fields(r, names)   # claims and trials too
    extra = redact_data(node.extra)
    changed = changed or extra != node.extra
    node.extra = extra
    return changed


_CLEAN_STAMP: list[bytes] = []


def _clean_stamp() -> bytes:
    """What decides whether a file's bytes need redaction: the redactor (its rules_stamp) and the code that turns
    bytes into fields (rose.model, rose.records, rose.store.frontmatter), so an upgrade of any redacts every file
    again."""
    if not _CLEAN_STAMP:
        import hashlib

        from rose import model, records
        from rose.redact import rules_stamp
        from rose.store import frontmatter

        digest = hashlib.blake2b(rules_stamp(), digest_size=16)
        for module in (model, records, frontmatter):
            digest.update(Path(str(module.__file__)).read_bytes())
        _CLEAN_STAMP.append(digest.digest())
    return _CLEAN_STAMP[0]


_PREAD = hasattr(os, "pread")   # what the splice of a file rose wrote reads with (rose.store.splice.FileView)


def _read_fd(fd: int) -> bytes:
    """index.md's bytes from its open descriptor, in one read of the size fstat gives (one 8.6 MB read at 50,000
    lessons, not 130 chunks and a join), then reads until the end (it may have grown), at most reader.LOG."""
    return reader.read_fd("index.md", fd, os.fstat(fd), reader.LOG)


_CLEAN_HASH: list[Any] = []   # [stamp, a blake2b that has taken it in]: copied per file, not fed the stamp again


def _clean_digest(data: bytes) -> bytes:
    """A node file's bytes under this redactor and parser: the key of Index.is_clean / mark_clean (the blake2b of
    the stamp, then the bytes)."""
    stamp = _clean_stamp()
    if not _CLEAN_HASH or _CLEAN_HASH[0] is not stamp:
        import hashlib

        _CLEAN_HASH[:] = [stamp, hashlib.blake2b(stamp, digest_size=16)]
    digest = _CLEAN_HASH[1].copy()
    digest.update(data)
    return digest.digest()


_USAGE_TEXT: dict[type, tuple[str, ...]] = {}


def _redact_usage_text(node: Node) -> None:
    """The text fields a node gets from the usage log (rose.store.usage), redacted in place."""
    names = _USAGE_TEXT.get(type(node))
    if names is None:   # the same fields for every node: found once (a rebuild asks this of every lesson)
        from rose.records import text_fields
        from rose.store.usage import FRONTMATTER_KEYS

        names = _USAGE_TEXT[type(node)] = text_fields(type(node), lambda k: k in FRONTMATTER_KEYS)
    for name in names:
        if getattr(node, name):
            break
    else:
        return   # every one empty (most lessons' gaps, preserve, spans): no text to redact
    from rose.redact import redact

    node.redact_fields(redact, names)


def _holds_usage(node: Node, held: dict[str, Any]) -> bool:
    """Does a node file hold usage of its own (`held`: its frontmatter mapping)? A usage key (an old file's, written
    before usage moved to the log), a duplicate count, or a claim's or trial's counter. A file that holds none reads
    as an empty usage view, and its usage fields at their defaults (tests/test_rebuild_usage_gate.py)."""
    for key in usage.FRONTMATTER_KEYS:   # noqa: SIM110 - a plain loop: asked of every lesson a rebuild reads
        if key in held:
            return True
    if usage.DUPLICATE_HITS in held:
        return True
    for claim in node.dropped:
        for name in usage.CLAIM_COUNTERS:
            if getattr(claim, name):
                return True
    for trial in node.trials:
        for name in usage.TRIAL_COUNTERS:
            if getattr(trial, name):
                return True
    return False


# a file's usage when it holds none and none is logged (Store._load's `for_index`): never changed, never folded
NO_USAGE = usage.View()


def _as_cold(node: Node) -> None:
    """A cold record reads `archived`, its file's own status kept as `archived_from`."""
    if node.status is not Status.ARCHIVED:
        node.archived_from, node.status = node.status, Status.ARCHIVED


def _parse_node_with(text: str) -> tuple[Node, dict[str, Any]]:
    from rose.store.frontmatter import parse_node_with  # PyYAML loads only when a file is actually parsed

    return parse_node_with(text)


def _why(node: Node) -> str:
    return str(node.extra.get("archived_because") or "archived")


def _redacted(view: usage.View) -> usage.View:
    return view if view.empty() else usage.redacted(view)


FRESH_CONFIG = "# rose settings: `rose config` lists every key.\n"   # a new store's config.yaml: no setting


class Store:
    def __init__(self, root: Path, scope: Scope):
        self.root = root
        self.scope = scope
        self._index: Index | None = None
        self._local: Path | None = None   # machine-local state (the `local` property)
        self.wait_s = LOCK_TIMEOUT_S   # how long a lock or a busy index is waited for (bounded on the prompt path)
        self._usage_stamp: object = _UNSEEN   # (size, mtime) of usage.jsonl when this process last caught up
        self._usage_offset: int | None = None
        self._attributes_checked = False
        self._batch: FileBatch | None = None   # set while save_many writes a batch
        self._batch_usage: list[dict[str, Any]] = []
        self._batch_rows: list[Upsert] = []      # the batch's index rows, written at once (Index.upsert_many)
        self._batch_clean: list[tuple[str, bytes]] = []   # and its files' clean digests (Index.mark_clean_many)
        # the batch's lessons' index paths and usage folds, read at once (Index.paths_and_states); the folds are
        # dropped (None) once a usage catch-up folds anything in, and a lesson's are used once (its save changes them)
        self._known: tuple[dict[str, str], dict[str, dict] | None] | None = None
        self._catalog: list[dict[str, Any]] = []   # catalog lines of moves made under the lock, not yet appended
        self._moved_dirs: set[Path] = set()          # folders renamed in or out of under the lock, not yet synced

    def bound_waits(self, seconds: float) -> None:
        """Wait at most `seconds` for this store's locks and its index: the prompt hook serves what it can instead
        of waiting behind a learner (LockTimeout / sqlite3.OperationalError reach the caller)."""
        self.wait_s = seconds
        if self._index is not None:
            self._index.set_busy_timeout(seconds)

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r}, {self.scope.value})"

    # -- layout ----------------------------------------------------------------------------------------------
    nodes_dir = property(lambda self: self.root / NODES_DIR)
    archive_dir = property(lambda self: self.root / archive.ARCHIVE_DIR)
    catalog_path = property(lambda self: self.root / archive.ARCHIVE_DIR / archive.CATALOG_NAME)
    episodes_dir = property(lambda self: self.root / "episodes")
    routing_dir = property(lambda self: self.root / "routing")
    config_path = property(lambda self: self.root / "config.yaml")
    index_md_path = property(lambda self: self.root / "index.md")
    # machine-local state, never read from a place a repository can commit (paths.local_root)
    sessions_dir = property(lambda self: self.local / "sessions")
    logs_dir = property(lambda self: self.local / "logs")
    queue_dir = property(lambda self: self.local / "queue")
    locks_dir = property(lambda self: self.local / "locks")
    cache_dir = property(lambda self: self.local / "cache")
    events_path = property(lambda self: self.local / "events.jsonl")
    judge_cache_path = property(lambda self: self.local / "judge-cache.json")
    index_db_path = property(lambda self: self.local / "index.db")
    lock_path = property(lambda self: self.local / "locks" / "store.lock")

    @property
    def local(self) -> Path:
        if self._local is None:
            self._local = local_root(self.root)
        return self._local
    usage_path = property(lambda self: self.root / usage.LOG_NAME)
    gitattributes_path = property(lambda self: self.root / ".gitattributes")

    @classmethod
    def create(cls, root: Path, scope: Scope) -> Store:
        """Create the folder layout (idempotent) and return the store. The user's own stores (the global one and
        those under it) are 0700 throughout, whatever the umask; a repository's keeps its committed folders as git
        and the umask make them; its machine-local ones (MACHINE_LOCAL) are under the user's own store
        (paths.local_root), 0700 too. Refused (RoseError, the one line of paths.own_store_problem) while the user's
        own store is one another user could have written: every store keeps its machine-local state there."""
        store = cls(root, scope)
        problem = own_store_problem(global_root())   # every store's machine-local state is in the user's own
        if problem is not None:
            raise RoseError(problem)
        if _private(root):
            private_dir(root)
            st = os.stat(root)
            if st.st_uid == os.geteuid() and st.st_mode & 0o077:
                os.chmod(root, PRIVATE_DIR)   # one made before rose did this, or by a umask: closed to others now
        for sub in ("nodes", "episodes", "routing"):
            private_dir(root / sub)
        for sub in MACHINE_LOCAL:
            private_dir(store.local / sub)
        if not (root / ".gitignore").exists():
            write_text_atomic(root / ".gitignore", GITIGNORE)
        if not (root / ".gitattributes").exists():
            write_text_atomic(root / ".gitattributes", GITATTRIBUTES)
        if not (root / "config.yaml").exists():
            write_text_atomic(root / "config.yaml", FRESH_CONFIG)
        if not store.index_md_path.exists():
            with store.lock():
                store._write_index_md()
        return store

    @contextmanager
    def lock(self) -> Iterator[None]:
        with file_lock(self.lock_path, timeout_s=self.wait_s):
            yield

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = Index(self.root, self.index_db_path, busy_timeout_s=self.wait_s)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def node_path(self, node: Node) -> Path:
        """Where a node's file belongs: the cold archive when it is archived, else its family's folder."""
        return self.root / self.node_rel(node)

    @staticmethod
    def node_rel(node: Node) -> str:
        """node_path from the store's root, as text (a bulk save asks it of every lesson: no pathlib)."""
        if node.status is Status.ARCHIVED:
            return archive.cold_rel(node.memory_type.value, node.id)
        return f"{NODES_DIR}/{family_slug(node.family)}/{node.id}.md"

    @property
    def record_dirs(self) -> list[Path]:
        """The folders holding node files: the hot store and the cold archive."""
        return [self.nodes_dir, self.archive_dir]

    def _rel(self, path: Path | str) -> str:
        if os.sep == "/":   # plain string work (a rebuild asks this of every file): pathlib's costs 10 us a call
            whole, root = str(path), str(self.root)
            if whole.startswith(root) and whole[len(root):len(root) + 1] == "/" and "/../" not in whole \
                    and "/./" not in whole:
                return whole[len(root) + 1:]
        path = Path(path)
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def _read(self, path: Path) -> Node:
        """A node file as a node: a cold one reads `archived`, its file's own status kept as `archived_from` (a
        legacy `archived` file outside the archive reads archived too, and moves there when next saved)."""
        node = self.read_node_file(path)
        if archive.is_cold_path(self._rel(path)):
            _as_cold(node)
        return node

    # -- nodes: reading --------------------------------------------------------------------------------------
    def read_node_file(self, path: Path, data: bytes | None = None) -> Node:
        """`data`: the file's bytes, when the caller has read them already."""
        return self._read_node_file(path, data)[0]

    def _read_node_file(self, path: Path | str, data: bytes | None = None) -> tuple[Node, dict[str, Any]]:
        """read_node_file, with the frontmatter mapping the node was read from (`path` as text: the index's)."""
        try:
            text = (reader.read_bytes(path) if data is None else data).decode("utf-8")  # bytes: keep \r\n exactly
        except UnicodeDecodeError:
            raise CorruptFile(Path(path), "not valid UTF-8 text") from None
        except UnsafeFile as exc:
            raise CorruptFile(Path(path), exc.reason) from None
        try:
            return _parse_node_with(text)
        except ValueError as exc:
            raise CorruptFile(Path(path), str(exc)) from None

    def _load(self, path: Path | str, *, meaning: bool = False, data: bytes | None = None,
              rel: str | None = None, for_index: bool = False) -> tuple[Node, _OnDisk]:
        """A node file with its usage folded in (the index's fold must be current), and what the file itself says
        (its meaning only when asked: a read-modify-write compares it, a read does not need it). `data`, `rel`: the
        file's bytes and its path in the store, when the caller has them. `for_index` (the index's parse, which
        only asks whether the file's usage is empty): a file that holds no usage of its own (_holds_usage), with
        none logged, gets NO_USAGE as its usage instead of a view of its fields' defaults."""
        node, held = self._read_node_file(path, data)
        state = self.index.usage_state(node.id)
        if for_index and state is None and not _holds_usage(node, held):
            base = NO_USAGE
        else:
            base = usage.view_of(node)
        disk = _OnDisk(usage.meaning(node) if meaning else {}, node.body, base)
        if archive.is_cold_path(self._rel(path) if rel is None else rel):
            _as_cold(node)
        return self._fold(node, base, state), disk

    @staticmethod
    def _fold(node: Node, base: usage.View, state: dict | None) -> Node:
        if state is None:
            return node   # nothing logged: the file's own values (an old file's, or none) are the node's
        if usage.base_taken(node.id, base, state):
            base = usage.View()   # the log holds this file's old values already
        return usage.apply(node, usage.combine(base, state))

    def _parse_for_index(self, path: Path | str) -> tuple[Node, usage.View | None]:
        """A file for the index: parsed, usage folded, then redacted, so a secret written into a lesson by hand
        never reaches index.db, index.md or a model (the file itself is the user's and is left as it is). With it,
        the usage an old file itself holds (the row is recomputed from it when only the log changes), None when
        it holds none (the row's usage_base is then empty, as for an empty view, which need not be asked again).

        Redaction is most of a rebuild's time (about 1 ms a lesson), and most files hold nothing to redact: a file
        whose fields the redactor left unchanged is recorded by a digest of the redactor's stamp and its bytes
        (Index.mark_clean), and the same bytes under the same redactor are not redacted again. The text a node
        takes from the usage log is redacted every time.

        Most lessons hold no usage of their own and have none logged: the view of their usage (which would read
        every usage field's default, to say it is empty) is not made (_load's `for_index`)."""
        try:
            data = reader.read_bytes(path)   # a regular file only, bounded: a huge one is a corrupt lesson
        except UnsafeFile as exc:
            raise ValueError(exc.reason) from None
        rel = self._rel(path)
        digest = _clean_digest(data)
        try:
            node, disk = self._load(path, data=data, rel=rel, for_index=True)
        except CorruptFile as exc:
            raise ValueError(exc.reason) from None
        if not self.index.is_clean(rel, digest):
            self.index.mark_clean(rel, None if _redact_meaning(node) else digest)
        _redact_usage_text(node)
        base = disk.base
        return node, None if base is NO_USAGE or base.empty() else usage.redacted(base)

    def _catch_up_usage(self, *, trusted: bool = False) -> set[str]:
        """Fold what usage.jsonl gained into the index, rows included (one stat when the log has not changed since
        this process last looked). Returns the ids whose usage changed."""
        log = os.path.join(str(self.root), usage.LOG_NAME)   # as text: a bulk save asks this of every lesson
        stamp: object = None
        if os.access(log, os.F_OK):   # no log yet: said without an exception raised and caught
            try:
                st = os.stat(log)
                stamp = (st.st_size, st.st_mtime_ns)
            except FileNotFoundError:
                pass
        if stamp == self._usage_stamp:
            return set()
        if self._known is not None:   # the folds read for the batch may be behind what this catch-up brings in
            self._known = (self._known[0], None)
        self._flush_batch_rows()   # the fold updates rows: the batch's must be there, as saved one by one
        changed, offset = self.index.catch_up_usage(self.usage_path,
                                                    trusted_offset=self._usage_offset if trusted else None)
        self._usage_stamp, self._usage_offset = stamp, offset
        return changed

    def sync(self, quick: bool = False, until: float | None = None, defer_scan: bool = False) -> SyncReport:
        """Catch the index up with hand-edited, added or deleted files and with usage.jsonl (a pull changes it);
        regenerate index.md if anything moved. `quick` is for the per-prompt path (see Index.sync): it never
        folds the usage log (recency may lag a pull until the next command or learner run). `until` (a
        time.monotonic() value) bounds the parsing: what is left (`report.pending`, a fresh clone's unbuilt index)
        is indexed by a detached job (rose.store.build), one per store, while prompts serve what is indexed.
        `defer_scan`: see Index.sync (the caller runs a due periodic scan elsewhere)."""
        if not quick:
            self._catch_up_usage()
        report = self.index.sync(self.record_dirs, self._parse_for_index, quick=quick, until=until,
                                 defer_scan=defer_scan)
        if report.scan_due:
            return report
        if report.pending:
            from rose.store import build

            build.start(self.root, self.scope.value)
            return report   # index.md is written by the job, once, when the index is whole
        if report.changed or not self.index_md_path.exists() or self.index.index_md_owed():
            with self.lock():   # owed: a write was killed between its commit and index.md
                self._write_index_md()
        return report

    def heal_index(self, *, unplaced: bool = False) -> bool:
        """Discard index.db when SQLite finds it damaged, or when `unplaced` (damage was met and no check can say
        which index holds it): it is derived data, made again from the files by the next sync. True if discarded."""
        if not unplaced and self.index.intact():
            return False
        self.index.discard()
        self._usage_stamp, self._usage_offset = _UNSEEN, None   # usage is folded into the new index from the start
        self._known = None
        try:
            self.event(events.EventKind.INDEX, structural=True, discarded="damaged")
        except (OSError, RoseError):   # the note is best effort: the index is healed either way
            pass
        return True

    def rebuild_index(self) -> SyncReport:
        """Everything from the files again, usage folded from the whole log (into a new file if the old one is
        damaged: a rebuild inside a file with a bad page fails where the page is)."""
        self.heal_index()
        with self.lock():
            self.index.reset_usage()
            self._usage_stamp = _UNSEEN
            self._catch_up_usage()
            report = self.index.rebuild(self.record_dirs, self._parse_for_index)
            self._write_index_md()
        archive.reconcile(self, force=True)   # what is cold is where its file is; the catalog is made to say so
        return report

    def has(self, node_id: str) -> bool:
        return self.index.has_id(node_id)

    def get(self, node_id: str) -> Node:
        return self._get(node_id)[0]

    def _get(self, node_id: str, *, meaning: bool = False) -> tuple[Node, _OnDisk]:
        self._catch_up_usage()   # a pull may have changed usage.jsonl underneath
        rel = self.index.path_of(node_id)
        if rel is None:
            raise NodeNotFound(node_id)
        path = self.root / rel
        if not path.exists():  # deleted behind our back: let the index catch up, then report
            self.sync()
            raise NodeNotFound(node_id)
        return self._load(path, meaning=meaning)

    def rows(self) -> list[IndexRow]:
        return self.index.rows()

    def iter_nodes(self) -> Iterator[Node]:
        """Every readable node (corrupt files are skipped here and reported by sync/problems)."""
        self._catch_up_usage()
        states = self.index.usage_states()
        for row in self.index.rows():
            try:
                node = self._read(self.root / row.path)
            except (CorruptFile, FileNotFoundError):
                continue
            yield self._fold(node, usage.view_of(node), states.get(node.id))

    # -- nodes: writing --------------------------------------------------------------------------------------
    def new_id(self, taken: Callable[[str], bool] | None = None) -> str:
        while True:
            node_id = new_node_id()
            if self.has(node_id) or (taken is not None and taken(node_id)):
                continue
            if any(self.nodes_dir.glob(f"*/{node_id}.md")) or any(self.archive_dir.glob(f"*/{node_id}.md")):
                # a corrupt file holds that id: never reuse it
                continue
            if self.index.usage_known(node_id):  # a deleted lesson's usage stays in the log: never inherit it
                continue
            return node_id

    def save(self, node: Node) -> Node:
        """Write one node (its file only if its meaning changed, its usage as a record in usage.jsonl), redacted,
        and update the index and index.md, under the store lock."""
        with self.lock():
            listed = self._index_md_listed([node.id])
            with self.index.batch():   # the row and index.md's debt in one commit
                rewrote = self._save_unlocked(node)
                behind = rewrote and self.index.owe_index_md()
            self._flush_catalog()
            if rewrote:
                self._update_index_md(listed, whole=behind)
        return node

    def save_many(self, nodes: list[Node]) -> None:
        """`save` for many nodes at once, all or nothing: one index transaction, one usage append and one flush
        of the file system for the batch (FileBatch), instead of a commit and two fsyncs a node; then index.md
        gets the batch's lines spliced in (Store._update_index_md), not written whole. Killed between the commit
        and index.md, the debt the commit carries (Index.owe_index_md) has the next sync write index.md."""
        with self.lock():
            # where each lesson's line is before the batch: index.md, if still the file rose last wrote, is
            # spliced from that, bisected in memory (Store._update_index_md)
            listed = self._index_md_listed([node.id for node in nodes])
            batch = self._batch = FileBatch()
            rewrote = behind = False
            try:
                with self.index.batch():
                    in_batch: set[str] = set()
                    self._known = self.index.paths_and_states([node.id for node in nodes])
                    for i, node in enumerate(nodes):
                        if node.id in in_batch:   # a second save of one id reads the first one's file: land it
                            self._commit_batch()
                            in_batch.clear()
                            self._known = self.index.paths_and_states([n.id for n in nodes[i:]])
                        in_batch.add(node.id)
                        rewrote = self._save_unlocked(node) or rewrote
                    behind = rewrote and self.index.owe_index_md()
                    self._commit_batch()
                    self._flush_catalog()
            finally:
                self._batch = None
                self._known = None
                self._batch_usage = []
                self._batch_rows = []
                self._batch_clean = []
                batch.abort()
            if rewrote:
                self._update_index_md(listed, whole=behind)

    def _commit_batch(self) -> None:
        """The usage log first (as in a single save), then the files, durable and in place."""
        assert self._batch is not None
        self._flush_batch_rows()
        if self._batch_usage:
            records, self._batch_usage = self._batch_usage, []
            self._append_usage(records, batched=False)
        self._batch.commit()

    def _save_unlocked(self, node: Node, disk: _OnDisk | object | None = _UNSEEN, because: str = "") -> bool:
        """Returns whether the file was (re)written or moved. `disk` is the file as read under this same lock
        (update). A node whose status crosses `archived` moves between nodes/ and archive/ by a rename."""
        if not valid_node_id(node.id):
            raise ValueError(f"refusing to write a node whose id breaks the id grammar: {node.id[:80]!r}")
        redact_node(node)
        rel = self.node_rel(node)
        root = str(self.root)
        full = os.path.join(root, rel)   # as text: pathlib costs ~20 us a join, three a lesson in a bulk save
        known = self._known
        old_rel = self.index.path_of(node.id) if known is None else known[0].pop(node.id, None)
        self._catch_up_usage()
        if disk is _UNSEEN:
            disk = self._on_disk(os.path.join(root, old_rel or rel))
        folds = None if self._known is None else self._known[1]
        state = self.index.usage_state(node.id) if folds is None else folds.pop(node.id, None)
        base = usage.View()
        if isinstance(disk, _OnDisk) and not usage.base_taken(node.id, disk.base, state):
            base = _redacted(disk.base)   # an old file's, as written by hand or by an older rose
        records = []
        cold = node.status is Status.ARCHIVED
        meaning = usage.meaning(node)
        if cold:   # a cold file keeps the status it had: what a restore returns it to
            meaning["status"] = (node.archived_from or Status.ACTIVE).value
        moved = old_rel is not None and old_rel != rel
        crossing = moved and old_rel is not None and archive.is_cold_path(old_rel) != cold \
            and (self.root / old_rel).exists()
        changed = not isinstance(disk, _OnDisk) or not disk.same(meaning, node.body)
        rewrite = changed or (moved and not crossing)
        if rewrite and not base.empty():  # an old file's usage leaves its frontmatter now: into the log, once
            records.append(usage.base_record(node.id, base))
        change = usage.delta(node.id, usage.view_of(node), usage.combine(base, state), at="")
        if change is not None:   # its time asked only of a record that is written (a clock read and a strftime)
            change["at"] = usage.next_at(state)
            records.append(change)
        if records:   # the log first: killed before the file is written, the base is in both and counted once
            self._append_usage(records)
        from rose.store.frontmatter import render_node

        st = None
        if crossing and old_rel is not None:   # never batched: each move is durable on its own
            source, path = self.root / old_rel, Path(full)
            text = render_node(node, meaning) if changed else None
            if cold:   # into the archive: the rename first (recall stops serving it at once), then any new meaning
                move_file(source, path, sync=False)
                if text is not None:
                    write_text_atomic(path, text)
            else:      # out of it: any new meaning first, in the archive, then the rename
                if text is not None:
                    write_text_atomic(source, text)
                move_file(source, path, sync=False)
            self._moved_dirs.update((source.parent, path.parent))
            if text is None:
                self.index.move_clean(old_rel, rel)   # the same bytes, renamed
            else:
                self.index.mark_clean(rel, _clean_digest(text.encode("utf-8", "surrogatepass")))
            self.index.remove_path(old_rel)
            self._catalog.append(archive.archive_line(node, rel, because or _why(node)) if cold
                                 else archive.op_line("restore", node.id, because))
        else:
            if rewrite:
                text = render_node(node, meaning)
                data = text.encode("utf-8", "surrogatepass")   # once, for the digest and a bulk save's file
                # written from redacted fields (redaction is idempotent): these bytes are clean under this redactor
                digest = _clean_digest(data)
                if self._batch is not None:
                    st = self._batch.write_bytes(full, data)
                    self._batch_clean.append((rel, digest))
                else:
                    write_text_atomic(Path(full), text)
                    self.index.mark_clean(rel, digest)
            if moved and old_rel:  # the family changed: the old file goes, the new one is the node
                if self._batch is not None:
                    self._batch.unlink_after(self.root / old_rel)
                else:
                    try:
                        os.unlink(self.root / old_rel)
                    except FileNotFoundError:
                        pass
                self.index.remove_path(old_rel)
        st = st or os.stat(full)
        kept = usage.View() if rewrite or not isinstance(disk, _OnDisk) else _redacted(disk.base)
        if self._batch is not None:
            self._batch_rows.append((node, rel, st.st_mtime_ns, st.st_size, kept))
        else:
            self.index.upsert(node, rel, st.st_mtime_ns, st.st_size, kept)
        return rewrite or crossing

    def _flush_batch_rows(self) -> None:
        """The index rows save_many's batch has staged, written (inside its transaction): before anything reads
        or refolds rows (the usage catch-up) and before the batch's files land."""
        if self._batch_clean:
            marks, self._batch_clean = self._batch_clean, []
            self.index.mark_clean_many(marks)
        if self._batch_rows:
            rows, self._batch_rows = self._batch_rows, []
            self.index.upsert_many(rows)

    def _flush_catalog(self) -> None:
        """Append the catalog lines of the moves made under this lock (one write for a whole batch), after the
        renames they describe are durable."""
        if self._moved_dirs:
            self._sync_moved_dirs()
        if self._catalog:
            lines, self._catalog = self._catalog, []
            if not self._attributes_checked:
                self._ensure_gitattributes()
            archive.append(self.catalog_path, lines)

    MOVE_BATCH = 200   # records moved per lock held: a long archive pass never keeps the prompt path waiting

    def archive(self, ids: list[str], because: str) -> list[str]:
        """Move these records to the cold archive (each an atomic rename; the catalog says why). Records already
        cold are left alone. Returns the ids moved."""
        return self.move([(i, because) for i in ids], cold=True)

    def restore(self, ids: list[str], because: str = "") -> list[str]:
        """Move these cold records back to the hot store, each with the status it had. Returns the ids moved."""
        return self.move([(i, because) for i in ids], cold=False)

    def move(self, items: list[tuple[str, str]], *, cold: bool) -> list[str]:
        """(id, why) pairs into the archive (`cold`) or out of it, in batches of MOVE_BATCH under the lock, each
        batch's catalog lines appended at once and its folders synced once."""
        moved: list[str] = []
        for start in range(0, len(items), self.MOVE_BATCH):
            with self.lock():
                self._catch_up_usage()
                batch: list[str] = []
                for node_id, because in items[start:start + self.MOVE_BATCH]:
                    rel = self.index.path_of(node_id)
                    if rel is None or archive.is_cold_path(rel) == cold:
                        continue
                    try:
                        node, disk = self._get(node_id, meaning=True)
                    except (NodeNotFound, CorruptFile):
                        continue
                    if cold:
                        node.archived_from = node.status if node.status is not Status.ARCHIVED else \
                            (node.archived_from or Status.ACTIVE)
                        node.status = Status.ARCHIVED
                    else:
                        node.status, node.archived_from = node.archived_from or Status.ACTIVE, None
                    if not batch:   # before the first move's commit: killed after it, the next sync writes index.md
                        self.index.owe_index_md()
                    try:
                        self._save_unlocked(node, disk, because=because)
                    except FileExistsError as exc:   # a second copy of the id is there (a merge gone wrong)
                        self.event(events.EventKind.SKIP, what="move", id=node_id, reason=str(exc))
                        continue                      # both copies stay; the index reports the duplicate
                    batch.append(node_id)
                self._sync_moved_dirs()
                self._flush_catalog()
                if batch:
                    self._write_index_md()
                moved += batch
        return moved

    def _sync_moved_dirs(self) -> None:
        """Make the renames of this batch durable (one fsync per folder touched, not two per file)."""
        from rose.store.atomic import fsync_dir

        dirs, self._moved_dirs = self._moved_dirs, set()
        for folder in dirs:
            fsync_dir(folder)

    def delete(self, node_id: str, because: str = "deleted by you") -> Path:
        """Remove one record's file (hot or cold). Only `rose delete` and `rose clear` call this for good; the one
        other caller is recurrence promotion, after the record is written to the global store (a move between
        stores, like `rose init`'s). Its usage lines stay in the log (an id is never reused). Returns the path."""
        with self.lock():
            rel = self.index.path_of(node_id)
            if rel is None:
                raise NodeNotFound(node_id)
            path = self.root / rel
            self.index.owe_index_md()
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            self.index.remove_path(rel)
            if archive.is_cold_path(rel):
                self._catalog.append(archive.op_line("delete", node_id, because))
            self._flush_catalog()
            self._write_index_md()
        return path

    def _on_disk(self, path: Path | str) -> _OnDisk | None:
        if not os.access(path, os.F_OK):   # a new lesson's miss without an exception raised and caught (~15 us)
            return None
        try:
            data = reader.read_bytes(path)   # os.open: no pathlib open (and no Path made for a miss)
            node = self.read_node_file(Path(path), data)
        except (CorruptFile, FileNotFoundError, UnsafeFile):
            return None   # nothing readable there: the save writes the file whole, as it always did
        return _OnDisk(usage.meaning(node), node.body, usage.view_of(node))

    def _append_usage(self, records: list[dict[str, Any]], batched: bool = True) -> None:
        """Append under the store lock (the caller holds it), then fold our own lines into the index. Inside a
        batch (save_many) the records wait for the batch's commit, which appends them before any file lands."""
        if batched and self._batch is not None:
            self._batch_usage += records
            return
        if not self._attributes_checked:
            self._ensure_gitattributes()
        usage.append(self.usage_path, records)
        self._catch_up_usage(trusted=True)

    def _ensure_gitattributes(self) -> None:
        """A store made before usage.jsonl existed gets the union-merge line on its first usage write."""
        path = self.gitattributes_path
        try:
            text = reader.read_text(path, reader.SMALL)
        except FileNotFoundError:
            text = None
        except (OSError, UnicodeDecodeError):   # UnsafeFile too: a FIFO or a link there is never read
            self._attributes_checked = True
            return   # the user's own file, unreadable to us: left alone
        if text is None:
            write_text_atomic(path, GITATTRIBUTES)
        else:
            have = {" ".join(line.split()) for line in text.splitlines()}
            missing = [line for line in UNION_LINES if line not in have]
            if missing:
                write_text_atomic(path, text + ("" if text.endswith("\n") or not text else "\n")
                                  + "\n".join(missing) + "\n")
        self._attributes_checked = True

    def log_counts(self, node_id: str, sums: dict[str, int], *, rid: str,
                   registers: dict[str, Any] | None = None) -> bool:
        """Append one usage record of counters (and registers) no Node field holds (rose.credit's per-arm samples
        and its suspicion, rose.compress.payback's failed attempts), under the lock. The caller derives `rid` from
        what it records (an episode and a lesson, an attempt), so recording one thing twice writes and folds it
        once. Returns False when that rid is in the log already."""
        with self.lock():
            self._catch_up_usage()
            if self.index.rid_seen(rid):
                return False
            state = self.index.usage_state(node_id)
            record: dict[str, Any] = {"rid": rid, "id": node_id, "at": usage.next_at(state)}
            if sums:
                record["sum"] = dict(sums)
            if registers:
                record["set"] = dict(registers)
            self._append_usage([record])
        return True

    def update(self, node_id: str, change: Callable[[Node], Any], because: str = "") -> Node:
        """Read-modify-write one node under the lock, so concurrent updates never lose each other's changes. A
        change that sets the status to archived moves the record to the cold archive (`because` says why)."""
        with self.lock():
            self._catch_up_usage()
            self.index.sync(self.record_dirs, self._parse_for_index)
            node, disk = self._get(node_id, meaning=True)
            was = node.status
            change(node)
            if node.status is Status.ARCHIVED and was is not Status.ARCHIVED and node.archived_from is None:
                node.archived_from = Status.ACTIVE if was is Status.DISPUTED and not node.disputes else was
            listed = self._index_md_listed([node.id])
            with self.index.batch():
                rewrote = self._save_unlocked(node, disk, because=because)
                behind = rewrote and self.index.owe_index_md()
            self._flush_catalog()
            if rewrote:
                self._update_index_md(listed, whole=behind)
        return node

    def embed_missing(self, embedder: Any, batch: int = 256, ids: Collection[str] | None = None) -> int:
        """Give every node without a vector in this embedder's space one (new, hand-edited, or model switched);
        `ids`: only these of them (a lesson just added), without scanning every row for the others.

        The model runs outside the store lock; a vector is only stored if its node's text is still the text that
        was embedded, so a concurrent edit never ends up with a stale vector.
        """
        from rose.embed import embed_rows, to_blob
        from rose.store.index import text_hash

        done = 0
        while True:
            rows = self.index.missing_embeddings(embedder.name, limit=batch, ids=ids)
            if not rows:
                return done
            vectors = embed_rows(embedder, rows)   # a long lesson's chunks, one after another
            with self.lock():
                stored = self.index.set_embeddings(embedder.name, [
                    (r[0], to_blob(v), text_hash(r[1], r[2], r[3], r[4])) for r, v in zip(rows, vectors)])
            if stored == 0:
                return done  # everything changed under us: the next catch-up takes it from here
            done += stored
            if len(rows) < batch:
                return done  # that was all of them: no second scan of the table to be told so (it is O(lessons))

    def _write_index_md(self) -> None:
        """One line per hot lesson (what a selector greps): the cold archive is listed by its own catalog."""
        from rose.store.splice import write_spliced

        rows = self.index.conn.execute(
            "SELECT id, family, level, title, tags, gist, path FROM nodes WHERE cold = 0 ORDER BY family, level DESC, id"
        ).fetchall()
        rows.sort(key=_index_md_row_key)   # the order of the lines as written (a family shown visible may differ from
        lines = [INDEX_MD_HEADER, ""]      # the index's); the rows come sorted, so this is one pass
        lines += [_index_md_line(*r) for r in rows]
        try:
            st = write_spliced(self.index_md_path, [("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")])
        except (IsADirectoryError, NotADirectoryError) as exc:   # a folder a checkout left at index.md: derived,
            # so unwritten is only stale; the debt stays owed and the lesson itself is saved
            events.note_skips(self.events_path, "index.md", [f"not written: {exc.strerror}"], self.wait_s)
            return
        self._index_md_written(st)

    def _index_md_written(self, st: os.stat_result) -> None:
        """index.md is what the index lists: its debt is paid, and the file's stamp kept, by which the next write
        knows the file is still exactly these bytes (rose.store.splice.stamp)."""
        from rose.store.splice import stamp

        self.index.index_md_paid(stamp(st))

    def _index_md_listed(self, ids: Collection[str]) -> IndexMdListed:
        """Before a write changes these lessons: each one's key in index.md (None: not listed), what
        _update_index_md needs to splice a file it wrote itself without reading the file."""
        listed: IndexMdListed = dict.fromkeys(ids)
        for r in self.index.hot_rows_of(ids):
            listed[r[0]] = _index_md_row_key(r)
        return listed

    def _update_index_md(self, ids: Collection[str], *, whole: bool = False) -> None:
        """These lessons' lines of index.md replaced or put in their sorted places (a save, or a save_many's
        batch): the rest of the file is copied as bytes, never split into rows or recomputed from the index.
        Exactly the full rewrite's text, whatever was in the file for these ids before (every line of each goes,
        a hand-edited file's duplicates too). `whole`: index.md was owed before this write (Index.owe_index_md),
        so it may lack an earlier one's lines: written whole.

        `ids` as a mapping (Store._index_md_listed, taken before the write) says where each one's line was; if
        index.md is then still the file rose last wrote (its stamp, kept in the index), it is neither read nor
        searched: each old line and each new place is found by a bisection that reads a few blocks, and the new
        file is the old one's ranges copied by the kernel with the new lines between them (rose.store.splice),
        so a save costs about the same at 50,000 lessons as at 1,000. Otherwise the file is read: anything
        unexpected (another header, CRLF, bytes that are not UTF-8, a line the bisection reads that rose did not
        write) means the whole file is written again instead."""
        from rose.errors import SourceChanged
        from rose.store.splice import stamp, write_spliced

        if whole:
            self._write_index_md()
            return
        try:
            # never through a link: a repository's index.md pointing at another store's (~/.rose/index.md has
            # the same header) would have that catalogue's lines copied into this one; the whole rewrite
            # replaces the link instead; nor a FIFO, device or folder (rose.store.reader), which would block or
            # never end
            fd, st = reader.open_regular(self.index_md_path)
        except OSError:
            self._write_index_md()
            return
        try:
            if isinstance(ids, dict) and _PREAD and stamp(st) == self.index.index_md_stamp():
                try:
                    whole_file = None
                    if len(ids) > _FIND_EACH:   # a batch: the file read once, its bisections run in memory
                        whole_file = _read_fd(fd)
                        if len(whole_file) != st.st_size:
                            raise SourceChanged(errno.EAGAIN, "index.md changed while it was read")
                    pieces = self._index_md_splice(fd, st.st_size, ids, whole_file)
                    if pieces is not None and whole_file is not None:   # one write from memory, not a copy a gap
                        pieces = [_joined(whole_file, pieces)]
                    if pieces is not None:
                        self._index_md_written(write_spliced(self.index_md_path, pieces, fd, stamp(st)))
                        return
                except SourceChanged:   # written meanwhile by another program
                    self._write_index_md()
                    return
            try:
                data = _read_fd(fd)
                if not data.isascii():   # a pass without a copy, for what most stores hold
                    data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                data = b""
        finally:
            os.close(fd)
        head = f"{INDEX_MD_HEADER}\n\n".encode()
        if not data.startswith(head) or not data.endswith(b"\n") or b"\r" in data:
            self._write_index_md()
            return
        data = _without_lines_of(data, len(head), {i.encode() for i in ids})
        rows = self.index.hot_rows_of(ids)
        view = memoryview(data)   # the kept runs of the file are written from it, never copied
        pieces_read: list[bytes | memoryview] = [head]
        at = len(head)
        for key, line in sorted((_index_md_row_key(r), _index_md_line(*r).encode("utf-8", "surrogatepass"))
                                for r in rows):
            place = _index_md_place(data, at, len(data), key)   # the keys ascend: each place is past the last
            if place is None:
                self._write_index_md()
                return
            pieces_read += [view[at:place], line, b"\n"]
            at = place
        pieces_read.append(view[at:])
        self._index_md_written(write_spliced(self.index_md_path, pieces_read))

    def _index_md_splice(self, fd: int, size: int, listed: IndexMdListed,
                         data: bytes | None = None) -> list[Piece] | None:
        """The pieces of the new index.md (ranges of the old file `fd`, which is the full rewrite of the index
        before this write, and the new lines), or None when a line is not where the index says it was. `data`:
        the file's bytes, read whole by the caller (a batch's hundreds of bisections run in memory, not by
        blocks)."""
        from rose.store.splice import FileView

        head = f"{INDEX_MD_HEADER}\n\n".encode()
        view = FileView(fd, size) if data is None else data
        if size < len(head) or view[0:len(head)] != head or view[size - 1:size] != b"\n":
            return None
        # (offset, 0, a new line to put there) and (offset, 1, the end of the old line there, which goes)
        events: list[tuple[int, int, bytes | int]] = []
        old = sorted(key for key in listed.values() if key is not None)
        places = _index_md_places(view, len(head), size, old)
        if places is None:
            return None
        for key, at in zip(old, places):
            if at >= size:
                return None
            end = view.find(b"\n", at, size)
            if _index_md_key(view[at:end]) != key:
                return None
            events.append((at, 1, end + 1))
        new = sorted((_index_md_row_key(r), _index_md_line(*r).encode("utf-8", "surrogatepass"))
                     for r in self.index.hot_rows_of(list(listed)))
        places = _index_md_places(view, len(head), size, [key for key, _line in new])
        if places is None:
            return None
        for (_key, line), at in zip(new, places):
            events.append((at, 0, line + b"\n"))
        events.sort(key=lambda e: (e[0], e[1]))   # stable: new lines at one place stay in key order, before a drop
        pieces: list[Piece] = []
        copied = 0                                # the old file is in the pieces up to here
        for at, _kind, what in events:
            if at < copied:                       # two events inside one line: not a file rose wrote
                return None
            if at > copied:
                pieces.append((copied, at - copied))
            if isinstance(what, int):
                copied = what                     # the old line skipped
            else:
                copied = at
                pieces.append(what)
        if size > copied:
            pieces.append((copied, size - copied))
        return pieces

    # -- episodes --------------------------------------------------------------------------------------------
    def new_episode_id(self) -> str:
        while True:
            episode_id = new_episode_id()
            if not (self.episodes_dir / f"{episode_id}.json").exists():
                return episode_id

    def save_episode(self, episode: Episode) -> None:
        from rose.redact import redact_data

        if not valid_episode_id(episode.id):
            raise ValueError(f"refusing to write an episode whose id breaks the id grammar: {episode.id[:80]!r}")
        data = redact_data(episode.to_dict())
        write_text_atomic(self.episodes_dir / f"{episode.id}.json",
                          json.dumps(data, ensure_ascii=False, indent=2) + "\n")

    def get_episode(self, episode_id: str) -> Episode:
        if not valid_episode_id(episode_id):
            raise NodeNotFound(episode_id)
        path = self.episodes_dir / f"{episode_id}.json"
        if not path.exists():
            raise NodeNotFound(episode_id)
        return self._read_episode(path)

    def _read_episode(self, path: Path) -> Episode:
        from rose.records import Episode

        try:
            return Episode.from_dict(load_json(reader.read_text(path, reader.RECORD, within=self.root)))
        except UnsafeFile as exc:   # a FIFO, a device, a folder, a link out of the store, too big: never read
            raise CorruptFile(path, exc.reason) from None
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise CorruptFile(path, f"not a valid episode: {exc}") from None

    def episodes(self) -> tuple[list[Episode], list[CorruptFile]]:
        found, bad = [], []
        if self.episodes_dir.is_dir():
            for path in sorted(self.episodes_dir.glob("*.json")):
                try:
                    found.append(self._read_episode(path))
                except CorruptFile as exc:
                    bad.append(exc)
        return found, bad

    # -- machine-local state ---------------------------------------------------------------------------------
    def read_json(self, path: Path, default: Any) -> Any:
        """Read machine-local JSON (a path under `local`)."""
        try:
            return load_json(reader.read_text(path, reader.RECORD, within=self.local))
        except FileNotFoundError:
            return default
        except UnsafeFile as exc:   # a FIFO, device, folder or link a checkout left there: never read
            events.note_skips(self.events_path, self._rel(path), [exc.reason], self.wait_s)
            return default
        except (ValueError, UnicodeDecodeError, RecursionError):
            return default  # machine-local scratch: a torn or foreign file is replaced, never fatal

    def write_json(self, path: Path, data: Any, *, structural: bool = False) -> None:
        """Write machine-local JSON. `structural` data (ids, counters) carries no user text and skips redaction."""
        if not structural:
            from rose.redact import redact_data

            data = redact_data(data)
        write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=1)
                          + "\n")

    def event(self, kind: events.EventKind, *, structural: bool = False, **data: Any) -> None:
        events.append(self.events_path, kind, structural=structural, lock_timeout_s=self.wait_s, **data)
