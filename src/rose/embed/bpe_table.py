"""The tokenizer rules of rose.embed.bpe as a small SQLite file, so a command tokenizes its query without reading
the 1.8 MB config.

Reading the config with json and building its rank table costs 45-68 ms of CPU a command, most of it making 93,000
strings (a marshal or pickle of the same dicts loads no faster). A query looks up a few dozen of them; from a table
keyed by token and by merge pair, each lookup is a few microseconds. The file is derived from the config once (by
the first process that tokenizes in Python) and names the config it was made from (its path, size, mtime and
inode, and this format); any other config, a file that is not this user's and private, a link, or one that does not
open as this module's table is passed over, the config read as before, and the file made again (it lives in the
user's own store's cache/ folder, created 0700). The rules it holds are the very ones Rules.of built (tested:
the same ids as the library on every text of the test set).
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path

from rose.embed.bpe import Rules

FORMAT = "bpe-table-1"
# Whether a process that read the config makes the table for the next one. The warm helper says no: it lives for
# hours, keeps its rules in memory, and making the table (0.18 s of CPU) fell in the moments after its start, which
# issue 15's settle target counts; the next short command makes it instead.
MAKES_TABLES = True


class _Source:
    """The open table, and the config behind it: a lookup the table fails (pages torn after it opened) is answered
    from the config's own rules instead, read once, and the table is removed so the next process makes it again."""

    def __init__(self, conn, config: Path, path: Path):
        self.conn, self.config, self.path = conn, config, path
        self.rules: Rules | None = None

    def config_rules(self) -> Rules:
        if self.rules is None:
            import contextlib

            with contextlib.suppress(OSError):
                self.path.unlink()
            rules = Rules.load(self.config)
            if rules is None:
                raise ValueError(f"{self.config} no longer holds rules rose.embed.bpe follows")
            self.rules = rules
        return self.rules


class _Lookup:
    """A read-only mapping over one table, each key looked up once (what Rules uses: `in`, `[]`, `get`)."""

    def __init__(self, source: _Source, table: str):
        self._source = source
        self._table = table
        self._sql = f"SELECT v FROM {table} WHERE k = ?"  # noqa: S608 - this module's fixed table names
        self._seen: dict[str, int | None] = {}

    def get(self, key: str, default: int | None = None) -> int | None:
        import sqlite3

        if key not in self._seen:
            try:
                row = self._source.conn.execute(self._sql, (key,)).fetchone()
                self._seen[key] = None if row is None else int(row[0])
            except sqlite3.DatabaseError:   # the table broke under this process: the config's rules answer
                rules = self._source.config_rules()
                self._seen[key] = (rules.vocab if self._table == "vocab" else rules.ranks).get(key)
        found = self._seen[key]
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __getitem__(self, key: str) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


def table_path(config: Path) -> Path:
    from rose.store.paths import global_root

    return global_root() / "cache" / f"tokenizer-{zlib.crc32(str(config).encode('utf-8', 'surrogatepass')):08x}.db"


def source_stamp(config: Path) -> str:
    st = os.stat(config)
    return f"{FORMAT}|{config}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def load(config: Path) -> Rules | None:
    """The rules of `config`: from its table when that is current and rose's own, else read from the config (and
    the table made for the next process). None when the config uses rules bpe does not follow."""
    try:
        stamp = source_stamp(config)
    except OSError:
        return Rules.load(config)
    path = table_path(config)
    rules = _open(path, stamp, config)
    if rules is not None:
        return rules
    rules = Rules.load(config)
    if rules is not None and MAKES_TABLES:
        try:
            write(path, stamp, rules)
        except (OSError, ValueError):   # a read-only home, a full disk: the next process reads the config again
            pass
    return rules


def _open(path: Path, stamp: str, config: Path) -> Rules | None:
    import sqlite3

    try:
        st = os.lstat(path)
    except OSError:
        return None
    from rose.ownership import not_own

    if not_own(st, os.geteuid()) is not None:
        return None   # a link, or not this user's private file: made again
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        row = conn.execute("SELECT v FROM meta WHERE k = 'source'").fetchone()
        if row is None or row[0] != stamp:
            conn.close()
            return None
        special = dict(conn.execute("SELECT k, v FROM special"))
    except sqlite3.DatabaseError:
        return None   # torn, or not this module's table: made again
    source = _Source(conn, config, path)
    return Rules(_Lookup(source, "vocab"), _Lookup(source, "ranks"), special)  # type: ignore[arg-type]


def write(path: Path, stamp: str, rules: Rules) -> None:
    """The table for `rules`, made in a temp file beside its place and renamed over it."""
    import sqlite3
    import tempfile

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode=OFF")
            for table in ("vocab", "ranks", "special"):
                conn.execute(f"CREATE TABLE {table} (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID")
            conn.executemany("INSERT INTO vocab VALUES (?, ?)", rules.vocab.items())
            conn.executemany("INSERT INTO ranks VALUES (?, ?)", rules.ranks.items())
            conn.executemany("INSERT INTO special VALUES (?, ?)", rules.special.items())
            conn.execute("INSERT INTO meta VALUES ('source', ?)", (stamp,))
            conn.commit()
        finally:
            conn.close()
        os.chmod(tmp, 0o600)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)   # whole before it is renamed into place: a torn table would fail lookups, not opening
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
