"""The judge cache: nothing is judged twice. Machine-local (`.rose/judge-cache.json`), bounded, shared by processes.

Key: call name, call version, backend, model, the forked session (if any) and a SHA-256 of the request's canonical
JSON (sorted keys). Change any of them, including a call's VERSION, and the old answer is simply never looked up.

The file is one JSON document, written with one entry per line, oldest first:

    {"format":1,"seq":812,"entries":{
    "relevance/v1/claude/default/<sha256>":{"seq":11,"at":"2025-...Z","answer":{...}},
    ...
    }}

- A lookup finds its entry's line by its key and parses that line only, so a hit on a full cache (5000 entries,
  a few MB) costs milliseconds, not a parse of the whole file; any other layout falls back to a full parse.
- Reads take no lock: the file is only ever replaced whole (write to temp, fsync, rename), so a reader sees the old
  file or the new one. A missing, torn or foreign file reads as empty; an entry of the wrong shape is a miss.
- Writes are read-merge-write under `locks/judge-cache.lock`, so concurrent processes never lose each other's
  entries. They work on lines too (only the new answer is encoded), a few tens of ms on a full cache. Answers are
  redacted before they are written.
- The bound (`agent.cache_max_entries`) evicts the oldest entries first, by write order (`seq`). A hit does not
  refresh an entry: reads stay write-free on the hot path.
- Only valid answers are written (Judge validates before `put` and re-validates on every `get`); failures never.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rose.text import load_json
from rose.model import now_iso
from rose.store import reader

FORMAT = 1
DEFAULT_MAX_ENTRIES = 5000
_HEAD_PREFIX = '{"format":1,"seq":'
_HEAD_LINE = re.compile(rb'\{"format":1,"seq":(\d+),"entries":\{\n')
_ENTRY_LINE = re.compile(rb'("(?:[^"\\\n]|\\.)*"):\{"seq":(\d+),')


def cache_key(call: str, version: int, backend: str, model: str, request_json: str, session: str | None = None) -> str:
    digest = hashlib.sha256(request_json.encode("utf-8")).hexdigest()
    parts = [call, f"v{version}", backend, model or "default"]
    if session:
        parts.append("fork:" + hashlib.sha256(session.encode("utf-8")).hexdigest()[:16])
    return "/".join(parts + [digest])


class JudgeCache:
    def __init__(self, path: Path, max_entries: int = DEFAULT_MAX_ENTRIES, lock_path: Path | None = None):
        self.path = Path(path)
        self.max_entries = max(1, int(max_entries))
        self.lock_path = lock_path or self.path.parent / "locks" / "judge-cache.lock"

    def _read(self) -> dict[str, Any]:
        try:
            data = load_json(reader.read_text(self.path, reader.LOG))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):   # UnsafeFile too: never read
            return {"format": FORMAT, "seq": 0, "entries": {}}
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
            return {"format": FORMAT, "seq": 0, "entries": {}}
        if not isinstance(data.get("seq"), int):
            data["seq"] = 0
        return data

    def get(self, key: str) -> Any | None:
        """The stored answer (raw JSON) or None. The caller re-validates it; an invalid one is a miss."""
        try:
            raw = reader.read_bytes(self.path, reader.LOG)   # a FIFO, device or link there: a miss
        except OSError:
            return None
        if _HEAD_LINE.fullmatch(raw[: raw.find(b"\n") + 1]):
            needle = b"\n" + json.dumps(key, ensure_ascii=False).encode("utf-8") + b":"
            at = raw.find(needle)
            if at < 0:
                return None
            end = raw.find(b"\n", at + 1)
            line = raw[at + len(needle): end if end >= 0 else len(raw)].rstrip().rstrip(b",")
            try:
                entry = load_json(line)
            except (ValueError, UnicodeDecodeError):
                entry = None
        else:
            entry = self._read()["entries"].get(key)
        if not isinstance(entry, dict) or "answer" not in entry:
            return None
        return entry["answer"]

    def put(self, key: str, answer: Any) -> None:
        from rose.store.atomic import file_lock, write_bytes_atomic
        from rose.redact import redact_data

        with file_lock(self.lock_path):
            head_seq, lines = self._lines()
            seq = max([head_seq, *(s for _, s, _ in lines)]) + 1
            kb = json.dumps(key, ensure_ascii=False).encode("utf-8")
            entry = {"seq": seq, "at": now_iso(), "answer": redact_data(answer)}
            lines = [line for line in lines if line[0] != kb]
            lines.append((kb, seq, kb + b":" + json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
                          .encode("utf-8")))
            lines.sort(key=lambda line: line[1])
            lines = lines[-self.max_entries:]
            body = b",\n".join(line[2] for line in lines)
            write_bytes_atomic(self.path, (_HEAD_PREFIX + f'{seq},"entries":{{\n').encode() + body + b"\n}}\n")

    def _lines(self) -> tuple[int, list[tuple[bytes, int, bytes]]]:
        """(seq, [(json-encoded key, seq, whole entry line)]) without parsing the answers. A file in another layout
        is parsed whole and re-encoded; a line of the wrong shape is dropped."""
        try:
            raw = reader.read_bytes(self.path, reader.LOG)   # a FIFO, device or link there: an empty cache
        except OSError:
            raw = b""
        rows = raw.split(b"\n")
        head = _HEAD_LINE.fullmatch(rows[0] + b"\n") if rows else None
        if head is not None and len(rows) >= 3 and rows[-1] == b"" and rows[-2] == b"}}":
            out = []
            for row in rows[1:-2]:
                row = row.rstrip(b",")
                m = _ENTRY_LINE.match(row)
                if m and row.endswith(b"}"):
                    out.append((m.group(1), int(m.group(2)), row))
            return int(head.group(1)), out
        data = self._read()
        out = []
        for k, v in data["entries"].items():
            if isinstance(v, dict) and isinstance(v.get("seq"), int) and not isinstance(v["seq"], bool) \
                    and "answer" in v:
                kb = json.dumps(k, ensure_ascii=False).encode("utf-8")
                v = {"seq": v["seq"], "at": v.get("at", ""), "answer": v["answer"]}
                out.append((kb, v["seq"], kb + b":" + json.dumps(v, ensure_ascii=False, separators=(",", ":"))
                            .encode("utf-8")))
        return data["seq"], out

    def __len__(self) -> int:
        return len(self._read()["entries"])

    def keys(self) -> list[str]:
        """Keys oldest first."""
        entries = self._read()["entries"]
        return sorted(entries, key=lambda k: entries[k].get("seq", 0) if isinstance(entries[k], dict) else 0)

    def clear(self) -> None:
        from rose.store.atomic import file_lock, write_text_atomic

        with file_lock(self.lock_path):
            write_text_atomic(self.path, _HEAD_PREFIX + '0,"entries":{\n}}\n')
