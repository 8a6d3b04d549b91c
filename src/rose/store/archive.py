"""The cold archive: where retention puts what the hot store no longer needs, whole, and how it is listed.

    .rose/archive/<memory_type>/<id>.md   a cold record: its file, moved here by an atomic rename   committed
    .rose/archive/catalog.jsonl           one line per move (id, title, tags, a short preview, why)  committed,
                                                                                                    union-merged
Cold is a place, not a flag: a record is cold exactly when its file is under archive/, so a rebuilt index (or a
clone, or a pull that brings a teammate's moves) knows what is cold from the folder alone. In memory a cold node's
status is `archived` (rose.model.Status.ARCHIVED, the one concept of archived); its file keeps the status it had,
which is what a restore returns it to, so a move is a pure rename (git sees one) and a record that only moved is
byte-identical to what it was. `rose resolve --drop` and every automatic rule archive through here.

The catalog is what a person (or grep) reads to see what is in the archive without opening it, and what a merge of
two clones' archives merges line by line. It is append-only: `archive`, `restore` and `delete` operations, the last
one per id winning. A move is written to it after the rename, so a writer killed between the two leaves a catalog
one line short; `reconcile` (run by every maintenance pass and by `rose index --rebuild`) appends what the folder
shows and the catalog lacks. Nothing here deletes or rewrites a record.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from rose.text import load_json
from rose.model import now_iso
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.store.store import Store

ARCHIVE_DIR = "archive"
CATALOG_NAME = "catalog.jsonl"
GITATTRIBUTES_LINE = f"{ARCHIVE_DIR}/{CATALOG_NAME} merge=union"
_PREFIX = ARCHIVE_DIR + "/"


def is_cold_path(rel: str) -> bool:
    """Is this store-relative path (posix) a cold record's?"""
    return rel.startswith(_PREFIX)


def cold_rel(memory_type: str, node_id: str) -> str:
    return f"{ARCHIVE_DIR}/{memory_type}/{node_id}.md"


class Entry(Record):
    """A cold record as the catalog lists it."""

    id: str
    title: str
    tags: list[str]
    preview: str
    memory_type: str
    scope: str
    path: str           # relative to the store root
    because: str        # why it moved (the rule, and its numbers)
    at: str

    def to_dict(self) -> dict[str, Any]:
        return {"op": "archive", "id": self.id, "title": self.title, "tags": list(self.tags),
                "preview": self.preview, "memory_type": self.memory_type, "scope": self.scope, "path": self.path,
                "because": self.because, "at": self.at}


def archive_line(node: Any, rel: str, because: str) -> dict[str, Any]:
    from rose.retention.rules import preview

    return Entry(node.id, node.title, list(node.tags), preview(node), node.memory_type.value, node.scope.value, rel,
                 because, now_iso()).to_dict()


def op_line(op: str, node_id: str, because: str = "") -> dict[str, Any]:
    out = {"op": op, "id": node_id, "at": now_iso()}
    if because:
        out["because"] = because
    return out


def append(path: Path, lines: list[dict[str, Any]]) -> None:
    """Append catalog lines (the caller holds the store lock), redacted like everything rose writes, with the same
    torn-line discipline as the usage log (rose.store.usage.append)."""
    if not lines:
        return
    from rose.redact import redact_data
    from rose.store import usage
    from rose.store.atomic import private_dir

    private_dir(path.parent)
    usage.append(path, [redact_data(line) for line in lines])


def read(path: Path) -> dict[str, Entry]:
    """The catalog folded: the live entry of every id whose last operation is an `archive`. Lines that do not
    parse are skipped (a torn last line, a merge gone wrong): the folder, not the catalog, is the truth."""
    from rose.errors import UnsafeFile
    from rose.store import reader

    try:
        data = reader.read_bytes(path, reader.LOG)   # a regular file only, bounded: never a FIFO or a device
    except FileNotFoundError:
        return {}
    except UnsafeFile as exc:   # read as empty, and said: the folder is the truth
        from rose.store.events import note_skips
        from rose.store.paths import local_root

        note_skips(local_root(path.parent.parent) / "events.jsonl", "archive catalog", [exc.reason], 1.0)
        return {}
    live: dict[str, Entry] = {}
    for raw in data.split(b"\n"):
        raw = raw.strip()
        if not raw:
            continue
        try:
            rec = load_json(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            continue
        if rec.get("op") == "archive":
            try:
                live[rec["id"]] = Entry(rec["id"], str(rec.get("title", "")), [str(t) for t in rec.get("tags", [])],
                                        str(rec.get("preview", "")), str(rec.get("memory_type", "")),
                                        str(rec.get("scope", "")), str(rec.get("path", "")),
                                        str(rec.get("because", "")), str(rec.get("at", "")))
            except (TypeError, ValueError):
                continue
        elif rec.get("op") in ("restore", "delete"):
            live.pop(rec["id"], None)
    return live


RECONCILED_KEY = "catalog_checked"   # index meta: the catalog's stat and the cold set it was last found to match


class Reconciled(Record):
    """What reconciling the cold catalog with the archive's files changed."""
    added: int = 0      # cold records the catalog lacked (a move interrupted before its line, or a pull)
    closed: int = 0     # catalog entries whose record is no longer cold (restored or deleted elsewhere)


def reconcile(store: Store, *, force: bool = False) -> Reconciled:
    """Make the catalog list exactly what the archive folder holds (appending, never rewriting). Cheap when nothing
    changed since the last check: the catalog's size and mtime and the index's cold ids are compared first."""
    _ = store.index.conn   # opened (and migrated) before anything reads it
    path = store.catalog_path
    cold = {r[0]: r[1] for r in store.index.conn.execute("SELECT id, path FROM nodes WHERE cold = 1")}
    try:
        st = os.stat(path)
        stamp = [st.st_size, st.st_mtime_ns]
    except FileNotFoundError:
        stamp = [0, 0]
    import zlib

    digest = zlib.crc32("\n".join(sorted(cold)).encode("utf-8", "surrogatepass"))
    key = json.dumps([stamp, len(cold), digest])
    row = store.index.conn.execute("SELECT value FROM meta WHERE key = ?", (RECONCILED_KEY,)).fetchone()
    if not force and row and row[0] == key:
        return Reconciled()
    out = Reconciled()
    with store.lock():
        live = read(path)
        lines: list[dict[str, Any]] = []
        for node_id, rel in sorted(cold.items()):
            if node_id not in live:
                try:
                    node = store.get(node_id)
                except Exception:  # noqa: BLE001 - unreadable: listed by the index's problems, not here
                    continue
                lines.append(archive_line(node, rel, "found in the archive without a catalog line "
                                                     "(a move interrupted before it was listed, or a pull)"))
                out.added += 1
        for node_id in sorted(set(live) - set(cold)):
            op = "restore" if store.index.has_id(node_id) else "delete"
            lines.append(op_line(op, node_id, "no longer in the archive folder"))
            out.closed += 1
        append(path, lines)
        try:
            st = os.stat(path)
            stamp = [st.st_size, st.st_mtime_ns]
        except FileNotFoundError:
            stamp = [0, 0]
        store.index.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                 (RECONCILED_KEY, json.dumps([stamp, len(cold), digest])))
    return out
