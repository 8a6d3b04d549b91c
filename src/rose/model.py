"""The data model of the spec: nodes (lessons) in a DAG, the episodes they are validated against, and their enums.

Records are plain dataclasses. `to_dict`/`from_dict` are the only (de)serialisers; the store decides the file
format. Unknown keys found in a hand-edited file are kept in `extra` so a round trip never drops them.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from enum import Enum
from typing import Any

ID_HEX_CHARS = 6  # n_xxxxxx: 16.7M ids per prefix; collisions are checked against the store when minting
# The id grammar. An id names a file (nodes/<family>/<id>.md, episodes/<id>.json) and is written into the injected
# block, so it may hold no path separator, dot, quote or markup: a file whose id breaks it is corrupt (reported,
# skipped, never written). Hand-written ids such as n_retry-policy are fine.
NODE_ID_RE = re.compile(r"n_[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
EPISODE_ID_RE = re.compile(r"e_[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def valid_node_id(value: object) -> bool:
    return isinstance(value, str) and NODE_ID_RE.fullmatch(value) is not None


def valid_episode_id(value: object) -> bool:
    return isinstance(value, str) and EPISODE_ID_RE.fullmatch(value) is not None


def _check_ids(field_name: str, ids: list[str], valid) -> list[str]:
    bad = [i for i in ids if not valid(i)]
    if bad:
        raise ValueError(f"{field_name} holds an id that breaks the id grammar: {bad[0][:80]!r}")
    return ids


class Agent(str, Enum):
    """The coding agents rose runs inside."""

    CLAUDE = "claude"
    CODEX = "codex"


class Status(str, Enum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DEMOTED = "demoted"
    DISPUTED = "disputed"
    ARCHIVED = "archived"   # in the cold archive (.rose/archive/): kept whole, never served unless paged back in


# What recall may serve, the one definition (the index, compression, retention and the simulation all use it): an
# active lesson, or a disputed one served with its open question. Superseded and demoted nodes are reached only
# through the lessons above them; an archived one is cold (rose.store.archive).
SERVABLE: tuple[Status, ...] = (Status.ACTIVE, Status.DISPUTED)
SERVABLE_SQL = "(" + ", ".join(f"'{s.value}'" for s in SERVABLE) + ")"   # for `status IN ...` in the index's SQL
# Never served, even when a selector names one on purpose (a superseded lesson may be, when a walk descends to it).
NEVER_SERVED: tuple[Status, ...] = (Status.ARCHIVED, Status.DEMOTED)


class Relation(str, Enum):
    """How a new lesson relates to an existing one (the judge's `reconcile` answer; rose.learn.consolidate acts on it)."""
    DUPLICATE = "duplicate"      # says the same thing: store nothing, record the hit
    REFINES = "refines"          # adds detail to the existing lesson: fold into its lineage
    CONTRADICTS = "contradicts"  # cannot both be true: keep both, mark both disputed, ask the question
    SPECIALISES = "specialises"  # a special case of the existing, more general lesson: a sibling under it
    ORTHOGONAL = "orthogonal"    # a different subject after all: a new family


class Origin(str, Enum):
    REFLECTION = "reflection"
    COMPRESSION = "compression"
    MERGE = "merge"
    MANUAL = "manual"
    EXTRACTION = "extraction"
    CONSOLIDATION = "consolidation"   # a verified shorter replacement of two similar records (rose.retention)


class MemoryType(str, Enum):
    LESSON = "lesson"            # procedural: do / avoid
    ORIENTATION = "orientation"  # descriptive: how the subject works (recalled as assumptions to verify)
    EXPERIENCE = "experience"    # a long, sectioned account of a trajectory and its outcome


class Scope(str, Enum):
    PROJECT = "project"
    GLOBAL = "global"


class Outcome(str, Enum):
    """The external outcome a memory rests on (seed 003): checked, failed, or honestly unknown."""

    VERIFIED = "verified"
    FAILED = "failed"
    UNKNOWN = "unknown"


class EpisodeOutcome(str, Enum):
    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"
    UNKNOWN = "unknown"


class ClaimKind(str, Enum):
    """What sort of detail a compression dropped; descent ranks these claims when a short form fails."""

    PARAMETER = "parameter"
    STEP = "step"
    CONDITION = "condition"
    EXAMPLE = "example"
    RATIONALE = "rationale"
    WARNING = "warning"
    FACT = "fact"


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def utcnow() -> datetime:
    """The time every stamp rose writes is read from (the simulation moves it through a long life)."""
    return _utcnow()


def now_iso() -> str:
    return utcnow().replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _random_hex(chars: int) -> str:
    return os.urandom((chars + 1) // 2).hex()[:chars]


def seeded_id(seed: str) -> str:
    """The id a lesson learned from `seed` gets, so the same evidence learned twice lands on one file."""
    import hashlib

    return "n_" + hashlib.sha256(seed.encode("utf-8", "surrogateescape")).hexdigest()[:ID_HEX_CHARS + 4]


def new_node_id() -> str:
    return "n_" + _random_hex(ID_HEX_CHARS)


def new_episode_id() -> str:
    return "e_" + _random_hex(ID_HEX_CHARS)


def _as_str(value: Any) -> str:
    """Coerce what YAML may hand back for a scalar we store as text (dates, numbers) into text."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value)


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [str(value)]
    return [_as_str(v) for v in value]


@dataclass
class Claim:
    """One entry of a delta manifest: a piece of detail a compression removed, and the node that still holds it."""

    claim: str
    kind: ClaimKind = ClaimKind.FACT
    holder: str = ""   # id of the lower-level node whose body still contains the claim
    rescues: int = 0   # times re-attaching this claim turned a failure into a success
    attempts: int = 0  # times it was tried as a repair

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "kind": self.kind.value, "holder": self.holder,
                "rescues": self.rescues, "attempts": self.attempts}

    @classmethod
    def from_dict(cls, data: Any) -> Claim:
        if isinstance(data, str):
            return cls(claim=data)
        return cls(claim=_as_str(data.get("claim")), kind=ClaimKind(data.get("kind") or "fact"),
                   holder=_as_str(data.get("holder")), rescues=int(data.get("rescues") or 0),
                   attempts=int(data.get("attempts") or 0))


@dataclass
class Trial:
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

    @classmethod
    def from_dict(cls, data: Any) -> Trial:
        data = data or {}
        return cls(episode=_as_str(data.get("episode")), strategy=_as_str(data.get("strategy")) or "delta-patch",
                   kind=_as_str(data.get("kind")) or "claim", attached=_str_list(data.get("attached")),
                   claims=_str_list(data.get("claims")),
                   queue=[_str_list(q) for q in (data.get("queue") or [])], tries=int(data.get("tries") or 1),
                   idle=int(data.get("idle") or 0), opened=_as_str(data.get("opened")) or now_iso())


@dataclass
class Stats:
    attempts: int = 0     # times served on work whose outcome was judged
    successes: int = 0    # served, used, and the work succeeded
    failures: int = 0     # served, used, and the work failed
    expansions: int = 0   # descents started from this node
    rescues: int = 0      # failures this node's detail turned into successes
    last_used: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Stats:
        data = data or {}
        values: dict[str, Any] = {f.name: (_as_str(data[f.name]) if f.name == "last_used" else int(data[f.name] or 0))
                                  for f in fields(cls) if f.name in data}
        return cls(**values)


@dataclass
class Node:
    """A lesson (or orientation / experience memory) and its place in the DAG."""

    id: str
    family: str
    title: str
    body: str
    gist: str = ""
    level: int = 0
    status: Status = Status.ACTIVE
    origin: Origin = Origin.MANUAL
    conflict: str = ""                                       # an unresolved contradiction, asked at recall
    disputes: list[str] = field(default_factory=list)       # ids of the lessons it contradicts (both kept)
    derived_from: list[str] = field(default_factory=list)   # points DOWN, toward detail
    parents: list[str] = field(default_factory=list)        # points UP, toward abstraction
    covers_tasks: list[str] = field(default_factory=list)   # episode ids: the regression set
    dropped: list[Claim] = field(default_factory=list)      # the delta manifest
    preserve: list[str] = field(default_factory=list)       # hints from rejected compressions
    stats: Stats = field(default_factory=Stats)
    memory_type: MemoryType = MemoryType.LESSON
    scope: Scope = Scope.PROJECT
    importance: float = 0.6
    confidence: float = 0.5
    tags: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)       # handles: session://<session>/message/<n>
    quotes: dict[str, str] = field(default_factory=dict)    # handle -> the user's verbatim words it rests on
    outcome: Outcome = Outcome.UNKNOWN
    created: str = field(default_factory=now_iso)
    use_count: int = 0
    unreconciled: bool = False                              # stored without a backend; reconciled later
    # -- compression and descent (rose.compress); written to the file only when set ---------------------------
    spans: list[str] | None = None                          # sentences observed doing work; None = no evidence yet
    heldout_passed: int = 0                                 # held-out episodes the accepted form reproduced
    heldout_total: int = 0                                  # held-out episodes replayed after acceptance
    trials: list[Trial] = field(default_factory=list)       # descents in progress (detail under trial)
    gaps: list[str] = field(default_factory=list)           # failed episodes even level 0 could not explain
    last_attempt: str = ""                                  # last compression or merge attempt (for the cooldown)
    last_attempt_successes: int = 0                         # stats.successes then: each attempt is earned anew
    rejections: int = 0                                     # attempts in a row that came back no smaller (backoff)
    # -- retention (rose.retention) ---------------------------------------------------------------------------
    related: list[str] = field(default_factory=list)        # ids it was made from or stands beside (meaning)
    learned_importance: float | None = None                 # importance moved by evidence (usage); None: as minted
    archived_from: Status | None = None                     # a cold record's own status, what a restore returns to
                                                            # (set by the store from the file; never frontmatter)
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
        out: dict[str, Any] = {
            "id": self.id, "family": self.family, "title": self.title, "gist": self.gist,
            "level": self.level, "status": self.status.value, "origin": self.origin.value,
            "memory_type": self.memory_type.value, "scope": self.scope.value,
            "importance": self.importance, "confidence": self.confidence, "tags": list(self.tags),
            "conflict": self.conflict, "disputes": list(self.disputes), "derived_from": list(self.derived_from),
            "parents": list(self.parents),
            "covers_tasks": list(self.covers_tasks), "dropped": [c.to_dict() for c in self.dropped],
            "preserve": list(self.preserve), "stats": self.stats.to_dict(), "evidence": list(self.evidence),
            "outcome": self.outcome.value, "created": self.created, "use_count": self.use_count,
            "unreconciled": self.unreconciled,
        }
        if self.quotes:
            out["quotes"] = dict(self.quotes)
        if self.spans is not None:
            out["spans"] = list(self.spans)
        if self.heldout_total:
            out["heldout"] = {"passed": self.heldout_passed, "total": self.heldout_total}
        if self.trials:
            out["trials"] = [t.to_dict() for t in self.trials]
        if self.gaps:
            out["gaps"] = list(self.gaps)
        if self.last_attempt:
            out["last_attempt"] = self.last_attempt
        if self.last_attempt_successes:
            out["last_attempt_successes"] = self.last_attempt_successes
        if self.rejections:
            out["rejections"] = self.rejections
        if self.related:
            out["related"] = list(self.related)
        if self.learned_importance is not None:
            out["learned_importance"] = self.learned_importance
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], body: str) -> Node:
        known = ({f.name for f in fields(cls)} | {"heldout"}) - {"archived_from"}
        extra = {k: v for k, v in data.items() if k not in known and k != "body"}
        heldout = given if isinstance(given := data.get("heldout"), dict) else {}
        missing = [k for k in ("id", "family", "title") if not data.get(k)]
        if missing:
            raise ValueError(f"missing required field(s): {', '.join(missing)}")
        node_id = _as_str(data["id"])
        if not valid_node_id(node_id):
            raise ValueError(f"id {node_id[:80]!r} breaks the id grammar (n_ then letters, digits, - or _)")
        refs = {name: _check_ids(name, _str_list(data.get(name)), valid_node_id)
                for name in ("disputes", "derived_from", "parents", "related")}
        learned = data.get("learned_importance")
        covers = _check_ids("covers_tasks", _str_list(data.get("covers_tasks")), valid_episode_id)
        return cls(
            id=node_id, family=_as_str(data["family"]), title=_as_str(data["title"]), body=body,
            gist=_as_str(data.get("gist")), level=int(data.get("level") or 0),
            status=Status(data.get("status") or "active"), origin=Origin(data.get("origin") or "manual"),
            conflict=_as_str(data.get("conflict")), disputes=refs["disputes"], derived_from=refs["derived_from"],
            parents=refs["parents"], covers_tasks=covers,
            dropped=[Claim.from_dict(c) for c in (data.get("dropped") or [])],
            preserve=_str_list(data.get("preserve")), stats=Stats.from_dict(data.get("stats")),
            memory_type=MemoryType(data.get("memory_type") or "lesson"),
            scope=Scope(data.get("scope") or "project"),
            importance=float(data.get("importance", 0.6)), confidence=float(data.get("confidence", 0.5)),
            tags=_str_list(data.get("tags")), evidence=_str_list(data.get("evidence")),
            quotes={str(k): _as_str(v) for k, v in data["quotes"].items()} if isinstance(data.get("quotes"), dict)
            else {},
            outcome=Outcome(data.get("outcome") or "unknown"), created=_as_str(data.get("created")) or now_iso(),
            use_count=int(data.get("use_count") or 0), unreconciled=bool(data.get("unreconciled", False)),
            spans=None if data.get("spans") is None else _str_list(data.get("spans")),
            heldout_passed=int(heldout.get("passed") or 0), heldout_total=int(heldout.get("total") or 0),
            trials=[Trial.from_dict(t) for t in (data.get("trials") or [])], gaps=_str_list(data.get("gaps")),
            last_attempt=_as_str(data.get("last_attempt")),
            last_attempt_successes=int(data.get("last_attempt_successes") or 0),
            rejections=int(data.get("rejections") or 0),
            related=refs["related"],
            learned_importance=None if learned is None else float(learned),
            extra=extra,
        )


@dataclass
class Episode:
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
