"""The data model of the spec: nodes (lessons) in a DAG, the episodes they are validated against, and their enums.

The records are defined in rose.records and loaded on first use (`from rose.model import Node` works as before):
the prompt hook needs the enums and the id grammar, not the records.

Records are `rose.typedrecord.Record`s (dataclass semantics, no code generated per class). `to_dict`/`from_dict`
are the only (de)serialisers; the store decides the file format. Unknown keys found in a hand-edited file are kept
in `extra` so a round trip never drops them.

A Node's fields are grouped by concern (Content, Graph, Usage, Provenance, Compression, Retention), each field
declared once with its frontmatter key (`key(codec, order)`: how it is written and read, whether it carries words
and so is redacted, when it is left out), and `Node.to_dict` / `from_dict` / `redact_text` derived from those
declarations: a new field is one line in its concern, and its key goes after every key there is today, so files
keep their bytes (tests/test_node_frontmatter.py pins them). Node is composed by inheritance (flat: `node.use_count`,
`Node(id=..., parents=[...])`) rather than of nested records (`node.usage.use_count`): nesting would have rewritten
about 770 attribute uses and 70 constructors across the code and tests for no gain in what a reader or mypy sees,
since each concern's fields are already together, in one class.
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from enum import Enum

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.records import Claim as Claim
    from rose.records import Codec as Codec
    from rose.records import Compression as Compression
    from rose.records import Content as Content
    from rose.records import Episode as Episode
    from rose.records import Graph as Graph
    from rose.records import Key as Key
    from rose.records import Node as Node
    from rose.records import Provenance as Provenance
    from rose.records import Retention as Retention
    from rose.records import Stats as Stats
    from rose.records import Trial as Trial
    from rose.records import Usage as Usage
    from rose.records import key as key

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


# The records (Node, Claim, Trial, Stats, Episode, the codecs) are defined in rose.records and loaded on first use.
_RECORDS = frozenset((
    "_as_str", "_str_list", "Claim", "Trial", "Stats", "Codec", "Key", "_enum", "_node_ids", "_int", "_float",
    "TEXT", "TEXTS", "STAMP", "OPTIONAL_TEXTS", "QUOTES", "BODY", "FLAG", "OPTIONAL_FLOAT", "CREATED",
    "CLAIMS", "TRIALS", "STATS", "key", "_heldout", "_heldout_pair", "_is_set", "HELDOUT_PASSED",
    "HELDOUT_TOTAL", "_REQUIRED", "_required", "_node_id", "NODE_ID", "EPISODE_IDS", "Content", "Graph",
    "Usage", "Provenance", "Compression", "Retention", "Node", "_redacted", "_KEYS", "_WRITTEN", "_keys",
    "_written_keys", "Episode"))


def __getattr__(name: str) -> Any:
    if name in _RECORDS:
        from rose import records

        return getattr(records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
