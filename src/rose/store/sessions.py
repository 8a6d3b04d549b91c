"""Per-session scratch: one machine-local JSON file per session in the project store's `sessions/`.

Recall writes what it served (and when, for the freshness tiers; and each lesson's pack-local ref, M1, M2, ...);
the Stop hook writes its counters; the learner writes what it has learned from (`learned_upto`, the episode). All
of them read-modify-write through `update_session`, under the session's own lock, so a hook and a learner never
lose each other's changes. The file holds ids, counters and enum values only (structural: no redaction needed).

The file is read into one typed record, `SessionState`: every key any part of rose reads or writes is a field of
it, and no caller indexes the raw mapping. Reading is tolerant, because the file is scratch that a hook reads on
every prompt: a key of the wrong type gets its default and a logged skip (never an exception in a hook), a key rose
does not know (written by a newer or older rose) is kept verbatim in `extra` and written back, so nothing is lost.
A key is written only when it differs from its default, so a new field costs an older reader nothing.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.store.store import Store

SELECTIONS_KEPT = 40   # per session: what each prompt's selector chose (ids), for stage 7
REF_PREFIX = "M"   # pack-local refs: M1, M2, ... (seed 003): short to report, stable within a session


# -- reading one key: its value, or its default and the reason ---------------------------------------------------
# a key of the wrong type raises ValueError with the reason: its field takes the default, the reason is logged
def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return int(value)


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {type(value).__name__}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return value


def _mapping(value: Any) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping, got {type(value).__name__}")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {type(value).__name__}")
    return value


def _strs(value: Any) -> list[str]:
    items = _list(value)
    if not all(isinstance(v, str) for v in items):
        raise ValueError("expected a list of text")
    return list(items)


def _turns(value: Any) -> dict[str, int]:
    items = _mapping(value)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items.values()):
        raise ValueError("expected a mapping of id to turn")
    return dict(items)   # JSON keys are text


def _names(value: Any) -> dict[str, str]:
    items = _mapping(value)
    if not all(isinstance(v, str) for v in items.values()):
        raise ValueError("expected a mapping of text")
    return dict(items)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [_mapping(v) for v in _list(value)]


class _Reader:
    """Takes the known keys out of a mapping, one at a time; what is left over is the record's `extra`."""

    def __init__(self, data: dict[str, Any], where: str, problems: list[str]) -> None:
        self.rest, self.where, self.problems = dict(data), where, problems

    def take(self, name: str, parse: Callable[[Any], Any], default: Any) -> Any:
        if name not in self.rest:
            return default() if callable(default) else default
        value = self.rest.pop(name)
        try:
            return parse(value)
        except (TypeError, ValueError, AttributeError) as exc:   # the file's fault: the default, said on record
            self.problems.append(f"{self.where}{name}: {exc}")
        return default() if callable(default) else default


def _put(out: dict[str, Any], name: str, value: Any, default: Any) -> None:
    """Write a key only when it says something (an older reader gets the same default from its absence)."""
    if value != default:
        out[name] = value


# -- the parts of a session's state -------------------------------------------------------------------------------
class Reflection(Record):
    """The Stop hook's counters (rose.learn.reflect): where it has read the transcript to, what it has counted since
    the last reflection, and the cooldown. Written whole, every field, on each Stop."""

    offset: int = 0                 # bytes of the transcript counted so far
    tool_calls: int = 0
    failures: int = 0
    turns: int = 0
    last_reflection: float = 0.0    # epoch seconds of the last nudge (the cooldown runs from it)
    empty_reflections: int = 0      # the session's count at that Stop (the backoff reads it)
    last_decision: str = ""         # why the last Stop did or did not reflect
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, value: Any, problems: list[str]) -> Reflection:
        r = _Reader(_mapping(value), "reflection.", problems)
        return cls(offset=r.take("offset", _int, 0), tool_calls=r.take("tool_calls", _int, 0),
                   failures=r.take("failures", _int, 0), turns=r.take("turns", _int, 0),
                   last_reflection=r.take("last_reflection", _float, 0.0),
                   empty_reflections=r.take("empty_reflections", _int, 0),
                   last_decision=r.take("last_decision", _str, ""), extra=r.rest)

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "offset": self.offset, "tool_calls": self.tool_calls, "failures": self.failures,
                "turns": self.turns, "last_reflection": self.last_reflection,
                "empty_reflections": self.empty_reflections, "last_decision": self.last_decision}


class Learned(Record):
    """One learner job over the session (what it minted): the record of reflections that were worth it."""

    kind: str = ""
    minted: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, value: Any, problems: list[str]) -> Learned:
        r = _Reader(_mapping(value), "reflections[].", problems)
        return cls(kind=r.take("kind", _str, ""), minted=r.take("minted", _int, 0), extra=r.rest)

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "kind": self.kind, "minted": self.minted}


class Reported(Record):
    """`rose used`: what the session said it used (it wins over the judge, rose.learn.attribute)."""

    used: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    ts: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, value: Any, problems: list[str]) -> Reported:
        r = _Reader(_mapping(value), "reported.", problems)
        return cls(used=r.take("used", _strs, list), unused=r.take("unused", _strs, list), ts=r.take("ts", _str, ""),
                   extra=r.rest)

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "used": list(self.used), "unused": list(self.unused), "ts": self.ts}


class Exposure(Record):
    """A generated skill or guardrail matched in the session (rose.evolve.runtime): its arm, decided once."""

    arm: str = ""
    state: str = ""    # the record's state when it matched (shadow, trial, active)
    kind: str = ""     # skill | guardrail
    scope: str = "project"
    at: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, value: Any, problems: list[str]) -> Exposure:
        r = _Reader(_mapping(value), "evolution.", problems)
        return cls(arm=r.take("arm", _str, ""), state=r.take("state", _str, ""), kind=r.take("kind", _str, ""),
                   scope=r.take("scope", _str, "project"), at=r.take("at", _str, ""), extra=r.rest)

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "arm": self.arm, "state": self.state, "kind": self.kind, "scope": self.scope,
                "at": self.at}


def _each(parse: Callable[[Any, list[str]], Any], problems: list[str]) -> Callable[[Any], list[Any]]:
    return lambda value: [parse(v, problems) for v in _list(value)]


class SessionState(Record):
    """Everything rose keeps about one session, typed. Recall's part (turn, served, refs, arms, selections) is
    merged into the file by `save_recall`; every other writer changes it through `update_session`; a record read
    with no lock (recall's, read_session's) is a snapshot."""

    # recall (rose.recall): the prompt counter, what was shown when, each lesson's ref, the credit arms
    turn: int = 0
    served: dict[str, int] = field(default_factory=dict)   # id -> turn it was last shown (full or refreshed)
    served_ever: list[str] = field(default_factory=list)   # every lesson shown in the session: attribution judges these
    refs: dict[str, str] = field(default_factory=dict)     # M1 -> id, for every lesson ever served in the session
    arms: dict[str, str] = field(default_factory=dict)     # id -> "served" | "withheld": the session's credit arm
                                                           # for each lesson (rose.credit), decided once, sticky
    selections: list[dict[str, Any]] = field(default_factory=list)   # what each prompt's selector chose (stage 7)
    compactions: int = 0                                   # PreCompact resets `served`; counted here
    # the Stop hook (rose.learn.reflect)
    reflection: Reflection = field(default_factory=Reflection)
    # the learner (rose.learn): how far it has learned, the episode, which stages ran, what it minted
    learned_upto: int = 0                                  # messages before this one are learned from
    empty_reflections: int = 0                             # learner jobs in a row that minted nothing (the backoff)
    reflections: list[Learned] = field(default_factory=list)
    episode: str = ""                                      # the session's episode id, once recorded
    compressed: bool = False                               # compression ran (marked before it runs: once only)
    routed: bool = False                                   # stage 7 ran for the session
    reported: Reported | None = None                       # `rose used`, when the session said
    evolution: dict[str, Exposure] = field(default_factory=dict)   # artifact id -> its exposure (rose.evolve)
    extra: dict[str, Any] = field(default_factory=dict)    # keys this rose does not know, kept verbatim

    @classmethod
    def from_dict(cls, data: Any, problems: list[str] | None = None) -> SessionState:
        """The record a file holds; a key of the wrong type is its default, with the reason added to `problems`."""
        problems = [] if problems is None else problems
        if not isinstance(data, dict):
            problems.append(f"the file holds a {type(data).__name__}, not a mapping")
            return cls()
        r = _Reader(data, "", problems)
        reported = r.take("reported", lambda v: Reported.from_dict(v, problems), None)
        return cls(
            turn=r.take("turn", _int, 0), served=r.take("served", _turns, dict),
            served_ever=r.take("served_ever", _strs, list), refs=r.take("refs", _names, dict),
            arms=r.take("arms", _names, dict), selections=r.take("selections", _dicts, list),
            compactions=r.take("compactions", _int, 0),
            reflection=r.take("reflection", lambda v: Reflection.from_dict(v, problems), Reflection),
            learned_upto=r.take("learned_upto", _int, 0), empty_reflections=r.take("empty_reflections", _int, 0),
            reflections=r.take("reflections", _each(Learned.from_dict, problems), list),
            episode=r.take("episode", _str, ""), compressed=r.take("compressed", _bool, False),
            routed=r.take("routed", _bool, False), reported=reported,
            evolution=r.take("evolution", lambda v: {_str(k): Exposure.from_dict(e, problems)
                                                     for k, e in _mapping(v).items()}, dict),
            extra=r.rest)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        _put(out, "turn", self.turn, 0)
        _put(out, "served", dict(self.served), {})
        _put(out, "served_ever", list(self.served_ever), [])
        _put(out, "refs", dict(self.refs), {})
        _put(out, "arms", dict(self.arms), {})
        _put(out, "selections", list(self.selections), [])
        _put(out, "compactions", self.compactions, 0)
        if self.reflection != Reflection():
            out["reflection"] = self.reflection.to_dict()
        _put(out, "learned_upto", self.learned_upto, 0)
        _put(out, "empty_reflections", self.empty_reflections, 0)
        _put(out, "reflections", [x.to_dict() for x in self.reflections], [])
        _put(out, "episode", self.episode, "")
        _put(out, "compressed", self.compressed, False)
        _put(out, "routed", self.routed, False)
        if self.reported is not None:
            out["reported"] = self.reported.to_dict()
        _put(out, "evolution", {k: e.to_dict() for k, e in self.evolution.items()}, {})
        return out

    def ref(self, node_id: str) -> str:
        """The lesson's ref in this session, given on first serve and kept (M1, M2, ...)."""
        for ref, known in self.refs.items():
            if known == node_id:
                return ref
        ref = f"{REF_PREFIX}{len(self.refs) + 1}"
        self.refs[ref] = node_id
        return ref

    @classmethod
    def load(cls, store: Store, session_id: str) -> SessionState:
        return read_session(store, session_id)

    def save_recall(self, store: Store, session_id: str, selection: dict[str, Any] | None = None) -> None:
        """Merge recall's part into the file under the lock: this prompt's served record and turn replace the file's,
        refs and the lessons ever shown add up, the first arm decided stands, and this prompt's `selection` (ids and
        counters: what stage 7 credits rules from, rose.learn.route) is appended, the last SELECTIONS_KEPT kept."""
        def merge(state: SessionState) -> None:
            state.served_ever += [i for i in self.served if i not in state.served_ever]
            state.turn, state.served = self.turn, dict(self.served)
            state.refs = {**state.refs, **self.refs}
            state.arms = {**self.arms, **state.arms}   # a concurrent prompt never flips an arm
            if selection is not None:
                state.selections = (state.selections + [selection])[-SELECTIONS_KEPT:]
        update_session(store, session_id, merge)


# -- the file -------------------------------------------------------------------------------------------------------
def _safe(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)[:120] or "unknown"


def session_path(store: Store, session_id: str) -> Path:
    return store.sessions_dir / f"{_safe(session_id)}.json"


def session_lock(store: Store, session_id: str):
    """One session's scratch file is read-modify-written by the hooks and the learner: this lock orders them."""
    from rose.store.atomic import file_lock

    return file_lock(store.locks_dir / f"session-{_safe(session_id)}.lock", timeout_s=store.wait_s)


def read_session(store: Store, session_id: str) -> SessionState:
    """The session's state; a file that is torn or not rose's reads as a new session, a wrong-typed key as its
    default, each problem a logged skip."""
    problems: list[str] = []
    state = SessionState.from_dict(store.read_json(session_path(store, session_id), {}), problems)
    if problems:
        _log_skips(store, session_id, problems)
    return state


def _log_skips(store: Store, session_id: str, problems: list[str]) -> None:
    from rose.errors import LockTimeout
    from rose.store.events import EventKind

    try:   # the reasons name keys and types only: structural, no redactor on the prompt path
        store.event(EventKind.SKIP, structural=True, what="session state", session=_safe(session_id),
                    reason="; ".join(problems)[:500])
    except (OSError, LockTimeout):
        pass   # the log is busy or unwritable: the defaults stand; a hook never fails over its scratch


def update_session(store: Store, session_id: str, change: Callable[[SessionState], Any]) -> SessionState:
    """Read-modify-write one session's state under its lock; returns what was written."""
    with session_lock(store, session_id):
        state = read_session(store, session_id)
        change(state)
        store.write_json(session_path(store, session_id), state.to_dict(), structural=True)
        return state


def clear_served(store: Store, session_id: str) -> None:
    """PreCompact: forget what was shown, so everything still needed is served again in full (refs stay)."""
    def reset(state: SessionState) -> None:
        state.served = {}
        state.compactions += 1
    update_session(store, session_id, reset)


def resolve_refs(store: Store, session_id: str, names: list[str]) -> list[str]:
    """Lesson ids for what a session reported: refs (M2) mapped through the session's record, ids kept as they are."""
    from rose.model import valid_node_id

    refs = {k.upper(): v for k, v in read_session(store, session_id).refs.items()}
    out = []
    for name in names:
        node_id = refs.get(name.upper()) if name.upper().startswith(REF_PREFIX) else name
        if node_id and valid_node_id(node_id) and node_id not in out:
            out.append(node_id)
    return out
