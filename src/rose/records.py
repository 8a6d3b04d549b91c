"""The records of the data model: Node (its concerns, each field declared once with its frontmatter key and codec),
Claim, Trial, Stats and Episode, with their (de)serialisers. See rose.model, which holds the enums and the id
grammar and re-exports every name here on first use (`from rose.model import Node` keeps working): the prompt hook
reads the index's rows and never builds a record, so it does not pay for defining them (about a tenth of an
in-process hook's imports).
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from rose.model import (ClaimKind, EpisodeOutcome, MemoryType, Origin, Outcome, Scope, Status, _check_ids, now_iso,
                        valid_episode_id, valid_node_id)
from rose.typedrecord import MISSING, Record, field, fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import Enum
    from typing import Any


def _as_str(value: Any) -> str:
    """Coerce what YAML may hand back for a scalar we store as text (dates, numbers) into text."""
    if value.__class__ is str:   # most values (a rebuild asks this of every text field of every lesson)
        return value
    if value is None:
        return ""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value)


def _str_list(value: Any) -> list[str]:
    if value is None or (value.__class__ is list and not value):   # most lists a lesson holds are empty
        return []
    if isinstance(value, (str, int, float)):
        return [str(value)]
    return [_as_str(v) for v in value]


class Claim(Record):
    """One entry of a delta manifest: a piece of detail a compression removed, and the node that still holds it."""

    claim: str
    kind: ClaimKind = ClaimKind.FACT
    holder: str = ""   # id of the lower-level node whose body still contains the claim
    rescues: int = 0   # times re-attaching this claim turned a failure into a success
    attempts: int = 0  # times it was tried as a repair

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "kind": self.kind.value, "holder": self.holder,
                "rescues": self.rescues, "attempts": self.attempts}

    def redact_text(self, redact: Callable[[str], str]) -> None:
        self.claim = redact(self.claim)   # holder is an id, kind an enum

    @classmethod
    def from_dict(cls, data: Any) -> Claim:
        if isinstance(data, str):
            return cls(claim=data)
        return cls(claim=_as_str(data.get("claim")), kind=ClaimKind(data.get("kind") or "fact"),
                   holder=_as_str(data.get("holder")), rescues=int(data.get("rescues") or 0),
                   attempts=int(data.get("attempts") or 0))


class Trial(Record):
    """A descent in progress: detail attached under a compressed lesson after it failed, awaiting the next outcome.

    Descent crosses sessions: the failure is only known when a session ends, so the chosen candidate is attached
    to the lesson's served text and the next episode that uses the lesson decides (see rose.compress.descent).
    """

    episode: str                                          # the failed episode that opened it
    strategy: str = "delta-patch"                         # delta-patch | delta-jump | stepwise
    kind: str = "claim"                                   # claim | node | level0: what is attached
    attached: list[str] = field(default_factory=list)    # claim texts (claim) or node ids (node, level0)
    claims: list[str] = field(default_factory=list)      # the manifest claims this attempt tests
    queue: list[list[str]] = field(default_factory=list)  # next candidates, best first: [claim] or [node, *claims]
    tries: int = 1                                        # candidates attached so far
    idle: int = 0                                         # episodes that used the lesson without using the detail
    opened: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {"episode": self.episode, "strategy": self.strategy, "kind": self.kind,
                "attached": list(self.attached), "claims": list(self.claims),
                "queue": [list(q) for q in self.queue], "tries": self.tries, "idle": self.idle,
                "opened": self.opened}

    def redact_text(self, redact: Callable[[str], str]) -> None:
        self.attached = [redact(a) for a in self.attached]
        self.claims = [redact(c) for c in self.claims]
        self.queue = [[redact(q) for q in entry] for entry in self.queue]

    @classmethod
    def from_dict(cls, data: Any) -> Trial:
        data = data or {}
        return cls(episode=_as_str(data.get("episode")), strategy=_as_str(data.get("strategy")) or "delta-patch",
                   kind=_as_str(data.get("kind")) or "claim", attached=_str_list(data.get("attached")),
                   claims=_str_list(data.get("claims")),
                   queue=[_str_list(q) for q in (data.get("queue") or [])], tries=int(data.get("tries") or 1),
                   idle=int(data.get("idle") or 0), opened=_as_str(data.get("opened")) or now_iso())


class Stats(Record):
    """A lesson's judged record: how often it was served on judged work, and how that work went."""
    attempts: int = 0     # times served on work whose outcome was judged
    successes: int = 0    # served, used, and the work succeeded
    failures: int = 0     # served, used, and the work failed
    expansions: int = 0   # descents started from this node
    rescues: int = 0      # failures this node's detail turned into successes
    last_used: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__record_names__}

    @classmethod
    def from_dict(cls, data: Any) -> Stats:
        data = data or {}
        values: dict[str, Any] = {f.name: (_as_str(data[f.name]) if f.name == "last_used" else int(data[f.name] or 0))
                                  for f in fields(cls) if f.name in data}
        return cls(**values)


# -- a node's fields, grouped by concern (the module's docstring) ------------------------------------------------
class Codec(Record, frozen=True):
    """How one kind of value goes into the frontmatter and comes back. `text`: it can hold words a person or a
    model wrote (redacted before disk); ids, stamps, numbers and enums cannot."""

    write: Callable[[Any], Any]
    read: Callable[[Any], Any]
    text: bool = False
    # read(None) made without reading, for a key the file does not hold (a fresh value each call: lists are
    # mutable); None: read(None) itself is asked. tests/test_records_absent.py holds the two equal.
    absent: Callable[[], Any] | None = None


class Key(Record, frozen=True):
    """One field's place in the frontmatter. `order`: its position in the file (the default puts a new key after
    every key there is today). `name` "": the field's own name. `when`: written only when it holds of the value
    (None: always). `write`: (value, node) -> what the file holds, for a key that holds more than this field."""

    codec: Codec
    order: int = 10_000
    name: str = ""
    when: Callable[[Any], bool] | None = None
    write: Callable[[Any, Any], Any] | None = None   # (value, node) -> what the file holds, instead of the codec's
    own_key: bool = True                             # False: read from the file, written by another field's key


def _const(value: Any) -> Callable[[], Any]:
    return lambda: value


def _enum(kind: type[Enum], default: str) -> Codec:
    members = {m.value: m for m in kind}   # kind(raw) for a value it holds, without Enum's call machinery

    def read(raw: Any) -> Any:
        return members[raw] if raw.__class__ is str and raw in members else kind(raw or default)

    return Codec(lambda v: v.value, read, absent=_const(kind(default)))


def _node_ids(name: str) -> Codec:
    def read(raw: Any) -> list[str]:
        if raw.__class__ is list and not raw:   # most lessons' disputes, parents, derived_from: nothing to check
            return []
        return _check_ids(name, _str_list(raw), valid_node_id)

    return Codec(list, read, absent=list)


def _int(default: int = 0) -> Codec:
    return Codec(lambda v: v, lambda raw: int(raw or default), absent=_const(int(default)))


def _float(default: float) -> Codec:
    return Codec(lambda v: v, lambda raw: default if raw is None else float(raw), absent=_const(default))


def _none() -> None:
    return None


TEXT = Codec(lambda v: v, _as_str, text=True, absent=str)
TEXTS = Codec(list, _str_list, text=True, absent=list)
STAMP = Codec(lambda v: v, _as_str, absent=str)
OPTIONAL_TEXTS = Codec(lambda v: list(v), lambda raw: None if raw is None else _str_list(raw), text=True,
                       absent=_none)
QUOTES = Codec(dict, lambda raw: {str(k): _as_str(v) for k, v in raw.items()} if isinstance(raw, dict) else {},
               text=True, absent=dict)
BODY = Codec(lambda v: v, lambda raw: raw, text=True)   # below the frontmatter, never a key in it
FLAG = Codec(lambda v: v, bool, absent=bool)
OPTIONAL_FLOAT = Codec(lambda v: v, lambda raw: None if raw is None else float(raw), absent=_none)
CREATED = Codec(lambda v: v, lambda raw: _as_str(raw) or now_iso())   # absent: now, so read(None) is asked
CLAIMS = Codec(lambda v: [c.to_dict() for c in v], lambda raw: [Claim.from_dict(c) for c in (raw or [])], text=True,
               absent=list)
TRIALS = Codec(lambda v: [t.to_dict() for t in v], lambda raw: [Trial.from_dict(t) for t in (raw or [])], text=True,
               absent=list)
STATS = Codec(lambda v: v.to_dict(), lambda raw: Stats.from_dict(raw), absent=Stats)


def key(codec: Codec, order: int = 10_000, **how: Any) -> dict[str, Key]:
    """A field's frontmatter key, as record field metadata: `field(default=..., metadata=key(TEXT, 40))`."""
    return {"key": Key(codec, order, **how)}


def _heldout(raw: Any) -> dict[str, Any]:
    return raw if isinstance(raw, dict) else {}


def _heldout_pair(total: int, node: Any) -> dict[str, int]:
    return {"passed": node.heldout_passed, "total": total}


def _is_set(value: Any) -> bool:
    return value is not None


HELDOUT_PASSED = Codec(lambda v: v, lambda raw: int(_heldout(raw).get("passed") or 0), absent=_const(0))
HELDOUT_TOTAL = Codec(lambda v: v, lambda raw: int(_heldout(raw).get("total") or 0), absent=_const(0))


_REQUIRED: dict[type, tuple[str, ...]] = {}


def _required(cls: type, data: dict[str, Any]) -> None:
    """The fields with no default (the body aside, which is never frontmatter) must be in the file, and not empty."""
    names = _REQUIRED.get(cls)
    if names is None:
        names = _REQUIRED[cls] = tuple(f.name for f in fields(cls) if f.default is MISSING
                                       and f.default_factory is MISSING and f.name != "body")
    missing = [name for name in names if not data.get(name)]
    if missing:
        raise ValueError(f"missing required field(s): {', '.join(missing)}")


def _node_id(raw: Any) -> str:
    node_id = _as_str(raw)
    if not valid_node_id(node_id):
        raise ValueError(f"id {node_id[:80]!r} breaks the id grammar (n_ then letters, digits, - or _)")
    return node_id


NODE_ID = Codec(lambda v: v, _node_id)
EPISODE_IDS = Codec(list, lambda raw: _check_ids("covers_tasks", _str_list(raw), valid_episode_id), absent=list)


class Content(Record):
    """What the lesson says and who it is for: the text recall serves and what routes it."""

    id: str = field(metadata=key(NODE_ID, 10))
    family: str = field(metadata=key(TEXT, 20))
    title: str = field(metadata=key(TEXT, 30))
    body: str = field(metadata=key(BODY, own_key=False))   # the markdown below the frontmatter
    gist: str = field(default="", metadata=key(TEXT, 40))
    memory_type: MemoryType = field(default=MemoryType.LESSON, metadata=key(_enum(MemoryType, "lesson"), 80))
    scope: Scope = field(default=Scope.PROJECT, metadata=key(_enum(Scope, "project"), 90))
    tags: list[str] = field(default_factory=list, metadata=key(TEXTS, 120))


class Graph(Record):
    """Where it sits in the DAG and how it stands beside its neighbours."""

    level: int = field(default=0, metadata=key(_int(), 50))
    status: Status = field(default=Status.ACTIVE, metadata=key(_enum(Status, "active"), 60))
    # an unresolved contradiction, asked at recall; the lessons it contradicts (both kept)
    conflict: str = field(default="", metadata=key(TEXT, 130))
    disputes: list[str] = field(default_factory=list, metadata=key(_node_ids("disputes"), 140))
    derived_from: list[str] = field(default_factory=list, metadata=key(_node_ids("derived_from"), 150))  # DOWN: detail
    parents: list[str] = field(default_factory=list, metadata=key(_node_ids("parents"), 160))  # UP: abstraction
    # what it was made from or stands beside (meaning; rose.retention)
    related: list[str] = field(default_factory=list, metadata=key(_node_ids("related"), 340, when=bool))


class Usage(Record):
    """What it is worth and how it has fared: the minted judgments, then what using it taught (rose.store.usage
    keeps the counters out of the file)."""

    importance: float = field(default=0.6, metadata=key(_float(0.6), 100))
    confidence: float = field(default=0.5, metadata=key(_float(0.5), 110))
    stats: Stats = field(default_factory=Stats, metadata=key(STATS, 200))
    outcome: Outcome = field(default=Outcome.UNKNOWN, metadata=key(_enum(Outcome, "unknown"), 220))
    use_count: int = field(default=0, metadata=key(_int(), 240))
    # importance moved by evidence (rose.retention.rules); None: as minted
    learned_importance: float | None = field(default=None, metadata=key(OPTIONAL_FLOAT, 350, when=_is_set))


class Provenance(Record):
    """Where it came from and what it rests on."""

    origin: Origin = field(default=Origin.MANUAL, metadata=key(_enum(Origin, "manual"), 70))
    evidence: list[str] = field(default_factory=list, metadata=key(TEXTS, 210))   # session://<session>/message/<n>
    created: str = field(default_factory=now_iso, metadata=key(CREATED, 230))
    unreconciled: bool = field(default=False, metadata=key(FLAG, 250))   # stored without a backend; reconciled later
    # handle -> the user's verbatim words it rests on
    quotes: dict[str, str] = field(default_factory=dict, metadata=key(QUOTES, 260, when=bool))


class Compression(Record):
    """Compression and descent (rose.compress): the regression set, the delta manifest, what replays and
    attempts learned (most of it usage, kept out of the file by rose.store.usage)."""

    covers_tasks: list[str] = field(default_factory=list, metadata=key(EPISODE_IDS, 170))   # the regression set
    dropped: list[Claim] = field(default_factory=list, metadata=key(CLAIMS, 180))          # the delta manifest
    preserve: list[str] = field(default_factory=list, metadata=key(TEXTS, 190))   # hints from rejected compressions
    # sentences observed doing work; None = no evidence yet
    spans: list[str] | None = field(default=None, metadata=key(OPTIONAL_TEXTS, 270, when=_is_set))
    # held-out episodes the accepted form reproduced, of those replayed after acceptance: one key, `heldout`
    heldout_passed: int = field(default=0, metadata=key(HELDOUT_PASSED, 280, name="heldout", own_key=False))
    heldout_total: int = field(default=0, metadata=key(HELDOUT_TOTAL, 280, name="heldout", when=bool,
                                                       write=_heldout_pair))
    trials: list[Trial] = field(default_factory=list, metadata=key(TRIALS, 290, when=bool))   # detail under trial
    gaps: list[str] = field(default_factory=list, metadata=key(TEXTS, 300, when=bool))  # failures level 0 left open
    last_attempt: str = field(default="", metadata=key(STAMP, 310, when=bool))   # compression or merge: cooldown
    # stats.successes at the last attempt (each attempt is earned anew); attempts in a row no smaller (backoff)
    last_attempt_successes: int = field(default=0, metadata=key(_int(), 320, when=bool))
    rejections: int = field(default=0, metadata=key(_int(), 330, when=bool))


class Retention(Record):
    """The cold archive (rose.retention): set by the store from where the file is, never frontmatter."""

    archived_from: Status | None = None   # a cold record's own status, what a restore returns to


class Node(Retention, Compression, Provenance, Usage, Graph, Content):
    """A lesson (or orientation / experience memory) and its place in the DAG: the concerns above, flat (the
    module's docstring says why). The bases are listed last-first: a record (as a dataclass) orders its fields from
    the last base, so Content's required fields come first."""

    extra: dict[str, Any] = field(default_factory=dict)     # unknown frontmatter keys, kept verbatim

    @property
    def is_apex(self) -> bool:
        return not self.parents

    @property
    def heldout_pass_rate(self) -> float | None:
        """Share of held-out episodes reproduced after acceptance; None when none were replayed."""
        return self.heldout_passed / self.heldout_total if self.heldout_total else None

    def to_dict(self) -> dict[str, Any]:
        """Frontmatter order: identity and routing view first, bookkeeping last. `body` is not frontmatter."""
        out: dict[str, Any] = {}
        for name, key in _written_keys(type(self)):
            value = getattr(self, name)
            if key.when is None or key.when(value):
                out[key.name or name] = key.write(value, self) if key.write else key.codec.write(value)
        for extra_key, value in self.extra.items():
            out.setdefault(extra_key, value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], body: str) -> Node:
        _required(cls, data)
        table = _readers(cls)
        template = table.template
        if template is None:   # a __post_init__, or a field set otherwise: read in field order, built by __init__
            values, extra = _read_in_order(table, data, body)
            return cls(**values, extra=extra)
        values = template.copy()   # every field in order, an absent key's value where it is the same each time
        extra = {}
        by_key = table.by_key
        try:
            for file_key, raw in data.items():   # the keys the file holds (a lesson holds about half of them)
                readers = by_key.get(file_key)
                if readers is None:
                    extra[file_key] = raw
                    continue
                for name, read, absent in readers:
                    values[name] = read(raw) if raw is not None or absent is None else absent()
            for name, file_key, make in table.fresh:   # absent keys whose value is made anew: a list, the clock
                if file_key not in data:
                    values[name] = make()
            if table.body is not None:   # always, with a template (the class's body has a key)
                values["body"] = table.body(body)
        except Exception:   # read again in field order, which raises the first bad field's error, as before
            _read_in_order(table, data, body)
            raise
        for name, factory in table.factories:
            values[name] = factory()
        values["extra"] = extra
        node = cls.__new__(cls)
        node.__dict__ = values   # what __init__ would set, in field order (_readers checks that it is all of them)
        return node

    def redact_text(self, redact: Callable[[str], str], where: Callable[[str], bool] | None = None) -> None:
        """Pass every field that can carry words (its codec says so) through `redact`, in place; `where`, given a
        field's frontmatter key ("body" for the body), picks some of them (the store redacts a file's meaning and
        the text the usage log brings apart)."""
        self.redact_fields(redact, text_fields(type(self), where))

    def redact_fields(self, redact: Callable[[str], str], names: tuple[str, ...]) -> None:
        """redact_text over fields named by text_fields (a caller that redacts the same ones per lesson asks it once)."""
        for name in names:
            setattr(self, name, _redacted(getattr(self, name), redact))


def text_fields(cls: type, where: Callable[[str], bool] | None = None) -> tuple[str, ...]:
    """The names of the fields of `cls` that can carry words (their codec says so), of those whose frontmatter key
    ("body" for the body) `where` picks."""
    return tuple(name for name, key in _keys(cls) if key.codec.text and (where is None or where(key.name or name)))


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, (Claim, Trial)):
        value.redact_text(redact)
    return value


_KEYS: dict[type, tuple[tuple[str, Key], ...]] = {}
_WRITTEN: dict[type, tuple[tuple[str, Key], ...]] = {}


def _keys(cls: type) -> tuple[tuple[str, Key], ...]:
    """(field name, Key) of every field of the class that has a key, in declaration order (cached per class)."""
    got = _KEYS.get(cls)
    if got is None:
        got = _KEYS[cls] = tuple((f.name, f.metadata["key"]) for f in fields(cls) if "key" in f.metadata)
    return got


if TYPE_CHECKING:   # annotations only: typing is not imported to run
    _Reader = tuple[str, str, Callable[[Any], Any], Callable[[], Any] | None]


class _Readers(Record, frozen=True):
    """from_dict's table, per class. In field order: (field name, frontmatter key, codec read, codec absent) of the
    keyed fields before and after the body (read from the text below the frontmatter, `body`), and the frontmatter
    keys the class knows. For reading by the keys a file holds: `by_key` (a key's fields: `heldout` holds two),
    `template` (every field by name in field order, holding its value when its key is absent where that is the same
    value each time: a string, a number, an enum member, None), `fresh` (the fields whose absent value is made anew:
    (name, key, maker)) and `factories` (unkeyed fields with a default factory, `extra` aside). `template` is None
    when the class has a __post_init__ or a field from_dict cannot set: __init__ builds it then."""
    before_body: tuple[_Reader, ...]
    body: Callable[[Any], Any] | None
    after_body: tuple[_Reader, ...]
    known: frozenset[str]
    template: dict[str, Any] | None
    by_key: dict[str, tuple[tuple[str, Callable[[Any], Any], Callable[[], Any] | None], ...]]
    fresh: tuple[tuple[str, str, Callable[[], Any]], ...]
    factories: tuple[tuple[str, Callable[[], Any]], ...]


_READERS: dict[type, _Readers] = {}
_SAME_EACH_TIME = (str, int, float, bool, type(None))   # values an absent() may share between readings


def _read_in_order(table: _Readers, data: dict[str, Any], body: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """from_dict's reading field by field, in field order (the first bad field raises): (values, extra)."""
    values: dict[str, Any] = {}
    get = data.get
    for name, file_key, read, absent in table.before_body:
        raw = get(file_key)
        values[name] = read(raw) if raw is not None or absent is None else absent()
    if table.body is not None:
        values["body"] = table.body(body)
    for name, file_key, read, absent in table.after_body:
        raw = get(file_key)
        values[name] = read(raw) if raw is not None or absent is None else absent()
    known = table.known
    return values, {k: v for k, v in data.items() if k not in known}


def _maker(read: Callable[[Any], Any], absent: Callable[[], Any] | None) -> Callable[[], Any]:
    return absent if absent is not None else lambda: read(None)


def _readers(cls: type) -> _Readers:
    got = _READERS.get(cls)
    if got is None:
        got = _READERS[cls] = _make_readers(cls)
    return got


def _make_readers(cls: type) -> _Readers:
    from enum import Enum

    keys = dict(_keys(cls))
    specs = fields(cls)
    names = [f.name for f in specs]
    at = names.index("body") if "body" in keys else len(names)
    table = [(name, key.name or name, key.codec.read, key.codec.absent) for name, key in keys.items()
             if name != "body"]
    template: dict[str, Any] = {}
    settable = getattr(cls, "__record_post_init__", None) is None and "extra" in names and "body" in keys
    by_key: dict[str, list[tuple[str, Callable[[Any], Any], Callable[[], Any] | None]]] = {}
    fresh, factories = [], []
    for f in specs:
        key = keys.get(f.name)
        if f.name == "body" or f.name == "extra":
            template[f.name] = None   # set by every reading
            if key is not None:
                by_key[key.name or f.name] = []   # a `body:` key in the frontmatter is known, and read from nowhere
        elif key is not None:
            file_key, read, absent = key.name or f.name, key.codec.read, key.codec.absent
            by_key.setdefault(file_key, []).append((f.name, read, absent))
            first = None if absent is None else absent()
            if absent is not None and first is absent() and isinstance(first, (*_SAME_EACH_TIME, Enum)):
                template[f.name] = first
            else:
                template[f.name] = None
                fresh.append((f.name, file_key, _maker(read, absent)))
        elif f.default_factory is not MISSING:
            template[f.name] = None
            factories.append((f.name, f.default_factory))
        elif f.default is not MISSING:
            template[f.name] = f.default
        else:
            settable = False   # a required field with no key (the body aside): __init__ says so
    return _Readers(before_body=tuple(r for r in table if names.index(r[0]) < at),
                    body=keys["body"].codec.read if "body" in keys else None,
                    after_body=tuple(r for r in table if names.index(r[0]) > at),
                    known=frozenset(key.name or name for name, key in keys.items()),
                    template=template if settable else None, by_key={k: tuple(v) for k, v in by_key.items()},
                    fresh=tuple(fresh), factories=tuple(factories))


def _written_keys(cls: type) -> tuple[tuple[str, Key], ...]:
    """The keys a file holds, in file order (a stable sort: equal orders keep their declaration order)."""
    got = _WRITTEN.get(cls)
    if got is None:
        got = _WRITTEN[cls] = tuple(sorted(((n, k) for n, k in _keys(cls) if k.own_key), key=lambda nk: nk[1].order))
    return got


class Episode(Record):
    """What happened when work was accepted: the ambient oracle that compressions are replayed against."""

    id: str
    session: str
    prompt: str
    outcome: EpisodeOutcome = EpisodeOutcome.UNKNOWN
    served: list[str] = field(default_factory=list)   # what was injected
    used: list[str] = field(default_factory=list)     # what actually bore on the work
    accepted_summary: str = ""                        # what the agent ended up doing
    created: str = field(default_factory=now_iso)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "session": self.session, "prompt": self.prompt, "outcome": self.outcome.value,
               "served": list(self.served), "used": list(self.used),
               "accepted_summary": self.accepted_summary, "created": self.created}
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        known = {f.name for f in fields(cls)}
        if not data.get("id"):
            raise ValueError("missing required field: id")
        if not valid_episode_id(_as_str(data["id"])):
            raise ValueError(f"id {_as_str(data['id'])[:80]!r} breaks the episode id grammar")
        return cls(id=_as_str(data["id"]), session=_as_str(data.get("session")), prompt=_as_str(data.get("prompt")),
                   outcome=EpisodeOutcome(data.get("outcome") or "unknown"), served=_str_list(data.get("served")),
                   used=_str_list(data.get("used")), accepted_summary=_as_str(data.get("accepted_summary")),
                   created=_as_str(data.get("created")) or now_iso(),
                   extra={k: v for k, v in data.items() if k not in known})
