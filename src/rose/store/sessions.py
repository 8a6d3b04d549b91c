"""Per-session scratch: one machine-local JSON file per session in the project store's `sessions/`.

Recall writes what it served (and when, for the freshness tiers; and each lesson's pack-local ref, M1, M2, ...);
the Stop hook writes its counters; the learner writes what it has learned from (`learned_upto`, the episode). All
of them read-modify-write through `update_session`, under the session's own lock, so a hook and a learner never
lose each other's changes. The file holds ids, counters and enum values only (structural: no redaction needed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from rose.store.store import Store

SELECTIONS_KEPT = 40   # per session: what each prompt's selector chose (ids), for stage 7
REF_PREFIX = "M"   # pack-local refs: M1, M2, ... (seed 003): short to report, stable within a session


def _safe(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)[:120] or "unknown"


def session_path(store: Store, session_id: str) -> Path:
    return store.sessions_dir / f"{_safe(session_id)}.json"


def session_lock(store: Store, session_id: str):  # type: ignore[no-untyped-def]
    """One session's scratch file is read-modify-written by the hooks and the learner: this lock orders them."""
    from rose.store.atomic import file_lock

    return file_lock(store.root / "locks" / f"session-{_safe(session_id)}.lock", timeout_s=store.wait_s)


def read_session(store: Store, session_id: str) -> dict[str, Any]:
    data = store.read_json(session_path(store, session_id), {})
    return data if isinstance(data, dict) else {}


def update_session(store: Store, session_id: str, change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """Read-modify-write one session's scratch data under its lock; returns what was written."""
    with session_lock(store, session_id):
        data = read_session(store, session_id)
        change(data)
        store.write_json(session_path(store, session_id), data, structural=True)
        return data


def clear_served(store: Store, session_id: str) -> None:
    """PreCompact: forget what was shown, so everything still needed is served again in full (refs stay)."""
    def reset(data: dict[str, Any]) -> None:
        data["served"] = {}
        data["compactions"] = int(data.get("compactions", 0)) + 1
    update_session(store, session_id, reset)


@dataclass
class SessionRecord:
    """What recall needs of a session: its turn counter, what it served when, and each lesson's ref."""

    turn: int = 0
    served: dict[str, int] = field(default_factory=dict)   # id -> turn it was last shown (full or refreshed)
    refs: dict[str, str] = field(default_factory=dict)     # M1 -> id, for every lesson ever served in the session
    selections: list[dict[str, Any]] = field(default_factory=list)   # this prompt's selection, appended on save

    @classmethod
    def load(cls, store: Store, session_id: str) -> SessionRecord:
        data = read_session(store, session_id)
        try:
            return cls(turn=int(data.get("turn", 0)),
                       served={str(k): int(v) for k, v in (data.get("served") or {}).items()},
                       refs={str(k): str(v) for k, v in (data.get("refs") or {}).items()})
        except (AttributeError, TypeError, ValueError):
            return cls()

    def ref(self, node_id: str) -> str:
        """The lesson's ref in this session, given on first serve and kept (M1, M2, ...)."""
        for ref, known in self.refs.items():
            if known == node_id:
                return ref
        ref = f"{REF_PREFIX}{len(self.refs) + 1}"
        self.refs[ref] = node_id
        return ref

    def save(self, store: Store, session_id: str) -> None:
        def merge(data: dict[str, Any]) -> None:
            ever = list(data.get("served_ever", [])) if isinstance(data.get("served_ever"), list) else []
            ever += [i for i in self.served if i not in ever]  # every lesson ever shown: attribution judges these
            refs = {**(data.get("refs") or {}), **self.refs} if isinstance(data.get("refs"), dict) else self.refs
            data.update({"turn": self.turn, "served": self.served, "served_ever": ever, "refs": refs})
            if self.selections:   # ids and counters only; the last SELECTIONS_KEPT (rose.learn.route credits them)
                kept = data.get("selections") if isinstance(data.get("selections"), list) else []
                data["selections"] = (kept + self.selections)[-SELECTIONS_KEPT:]
        update_session(store, session_id, merge)


def resolve_refs(store: Store, session_id: str, names: list[str]) -> list[str]:
    """Lesson ids for what a session reported: refs (M2) mapped through the session's record, ids kept as they are."""
    from rose.model import valid_node_id

    refs = {k.upper(): v for k, v in (read_session(store, session_id).get("refs") or {}).items()}
    out = []
    for name in names:
        node_id = refs.get(name.upper()) if name.upper().startswith(REF_PREFIX) else name
        if node_id and valid_node_id(node_id) and node_id not in out:
            out.append(node_id)
    return out
