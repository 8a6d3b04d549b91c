"""Usage: what happens to a lesson when it is used, kept out of the lesson's file so a team can commit both.

A node's fields are split in two (the table is in rose.store.store's docstring). Its *meaning* is the frontmatter
and body of `nodes/<family>/<id>.md`, rewritten only when the meaning changes. Its *usage* lives in
`.rose/usage.jsonl`: one JSON record per line, only ever appended, committed, and merged by git's built-in union
driver (`.rose/.gitattributes` says `usage.jsonl merge=union`), so two clones that both used lessons merge without a
conflict and the merged log holds both clones' records.

A record describes what one save changed, in operations that commute, so the order of the lines is not meaning:

    {"rid": "u3f09a1c2d4e5b6a7", "id": "n_3fa9c1", "at": "2026-05-01T10:00:00.123Z",
     "sum": {"attempts": 1, "successes": 1, "use_count": 1},   counters: deltas, added up
     "max": {"last_used": "2026-05-01T10:00:00Z"},              times: the latest wins
     "add": {"covers_tasks": ["e_81bd20"]},                     sets: members added ...
     "del": {"gaps": ["e_0a1b2c"]},                             ... and removed (a capped list drops its oldest)
     "set": {"rejections": 0}}                                  registers: the value of the latest record

Two clones that each credited a lesson once merge to +2 (sums), not +1, and to the union of their episodes (sets).
Registers hold assignments (a snapshot, a measurement, a backoff state): the latest `at` wins. A set member, too,
is what its latest operation says (a last-writer-wins element set), so the folded value depends on which records
the log holds, never on the order of its lines (a union merge orders them as it likes); ties on `at` are decided by
rid, the same way on every machine, and a clone's own records of a node never tie (`next_at`). Claim and trial
counters are sums keyed by the item they count
(`claim:<hash of its text>:rescues`, `trial:<hash of episode and opening time>:idle`), so the manifest and the
trials stay in the file while their counts do not.

`rid` makes the fold idempotent: a line that appears twice (a criss-cross merge can duplicate lines) is counted
once. A *base record* (`"base": true`, `at` ""; its rid is derived from the values, so two clones that move the
same committed values produce the same record) carries the usage a file written before this split still held in
its frontmatter, when that file is next rewritten for a change of meaning; until then those frontmatter values are
the base the log is added to, so an old store keeps its numbers and a use of an old lesson still changes no byte.

Reading never trusts the log: a line that does not parse, or a field of the wrong type, is skipped; a torn last
line (a writer killed mid-append) is left for the next append, which starts on a fresh line.

Nothing here touches the disk except `append`; the store computes records (`delta`) from a node's in-memory
values against what the log already says, so the stages that change `node.stats` need not know about any of it.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

from rose.text import load_json
from rose.model import valid_node_id
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.records import Node

LOG_NAME = "usage.jsonl"
GITATTRIBUTES_LINE = "usage.jsonl merge=union"

STATS_COUNTERS = ("attempts", "successes", "failures", "expansions", "rescues")   # Stats fields, by name
LATEST = ("last_used", "last_attempt")   # stats.last_used, last_attempt: the latest wins
SETS = ("covers_tasks", "gaps", "preserve")
REGISTERS: dict[str, Any] = {"last_attempt_successes": 0, "rejections": 0, "heldout": [0, 0], "spans": None,
                             "importance": None}   # importance moved by evidence (rose.retention.rules); None: minted
# frontmatter keys that are usage: a file written before the split holds them (read as the base), new files never
FRONTMATTER_KEYS = ("stats", "use_count", "covers_tasks", "gaps", "preserve", "spans", "heldout", "last_attempt",
                    "last_attempt_successes", "rejections", "learned_importance")
CLAIM_COUNTERS = ("rescues", "attempts")
TRIAL_COUNTERS = ("idle",)
DUPLICATE_HITS = "duplicate_hits"   # an `extra` key (consolidate counts duplicates of a lesson there)


def now_at() -> str:
    """A record's time: milliseconds, so registers written within one second still order."""
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _digest(text: str, n: int = 10) -> str:
    import hashlib   # only when a node has claims, trials or old usage: the per-prompt path seldom needs it

    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]  # noqa: S324 - an identity, not a MAC


def _keyed(prefix: str, identities: list[str]) -> list[str]:
    """Stable keys for items, by content; equal items are told apart by their occurrence."""
    seen: dict[str, int] = {}
    out = []
    for ident in identities:
        k = f"{prefix}:{_digest(ident)}"
        n = seen.get(k, 0)
        seen[k] = n + 1
        out.append(k if n == 0 else f"{k}.{n}")
    return out


def claim_keys(node: Node) -> list[str]:
    return _keyed("claim", [c.claim for c in node.dropped])


def trial_keys(node: Node) -> list[str]:
    return _keyed("trial", [f"{t.episode}\x00{t.opened}" for t in node.trials])


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- a node's usage, as values -------------------------------------------------------------------------------
class View(Record):
    """Every usage value of one node: what a node holds in memory, or what the file and the log say together."""

    sums: dict[str, int] = field(default_factory=dict)
    latest: dict[str, str] = field(default_factory=dict)
    sets: dict[str, list[str]] = field(default_factory=dict)
    registers: dict[str, Any] = field(default_factory=dict)

    def empty(self) -> bool:
        if any(self.sums.values()) or any(self.latest.values()) or any(self.sets.values()):
            return False
        registers = self.registers
        for name, default in REGISTERS.items():  # noqa: SIM110 - a plain loop: asked twice of every lesson
            if registers.get(name, default) != default:
                return False
        return True

    def to_json(self) -> str:
        return json.dumps({"sums": self.sums, "latest": self.latest, "sets": self.sets, "registers": self.registers},
                          ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> View:
        if not text:
            return cls()
        data = load_json(text)
        return cls(data["sums"], data["latest"], data["sets"], data["registers"])


def view_of(node: Node) -> View:
    stats = node.stats
    sums = {name: getattr(stats, name) for name in STATS_COUNTERS}
    sums["use_count"] = node.use_count
    if node.extra:
        hits = _count(node.extra.get(DUPLICATE_HITS))
        if hits is not None:
            sums[DUPLICATE_HITS] = hits
    if node.dropped:   # most lessons have neither claims nor trials (a rebuild asks this of every lesson)
        for key, claim in zip(claim_keys(node), node.dropped):
            for name in CLAIM_COUNTERS:
                sums[f"{key}:{name}"] = getattr(claim, name)
    if node.trials:
        for key, trial in zip(trial_keys(node), node.trials):
            for name in TRIAL_COUNTERS:
                sums[f"{key}:{name}"] = getattr(trial, name)
    return View(
        sums=sums,
        latest=dict(zip(LATEST, (stats.last_used, node.last_attempt))),
        sets={"covers_tasks": list(node.covers_tasks), "gaps": list(node.gaps), "preserve": list(node.preserve)},
        registers={"last_attempt_successes": node.last_attempt_successes, "rejections": node.rejections,
                   "heldout": [node.heldout_passed, node.heldout_total],
                   "spans": None if node.spans is None else list(node.spans),
                   "importance": node.learned_importance},
    )


def apply(node: Node, view: View) -> Node:
    """Set every usage field of `node` from `view` (claim and trial counters by their keys). Returns the node."""
    s = view.sums
    for name in STATS_COUNTERS:
        setattr(node.stats, name, int(s.get(name, 0)))
    node.use_count = int(s.get("use_count", 0))
    if DUPLICATE_HITS in s and (_count(node.extra.get(DUPLICATE_HITS)) is not None or s[DUPLICATE_HITS]):
        node.extra[DUPLICATE_HITS] = int(s[DUPLICATE_HITS])
    for key, claim in zip(claim_keys(node), node.dropped):
        for name in CLAIM_COUNTERS:
            setattr(claim, name, int(s.get(f"{key}:{name}", 0)))
    for key, trial in zip(trial_keys(node), node.trials):
        for name in TRIAL_COUNTERS:
            setattr(trial, name, int(s.get(f"{key}:{name}", 0)))
    node.stats.last_used = view.latest.get("last_used", "")
    node.last_attempt = view.latest.get("last_attempt", "")
    node.covers_tasks = list(view.sets.get("covers_tasks", []))
    node.gaps = list(view.sets.get("gaps", []))
    node.preserve = list(view.sets.get("preserve", []))
    r = {**REGISTERS, **view.registers}
    node.last_attempt_successes = int(r["last_attempt_successes"])
    node.rejections = int(r["rejections"])
    node.heldout_passed, node.heldout_total = (int(x) for x in r["heldout"])
    node.spans = None if r["spans"] is None else list(r["spans"])
    node.learned_importance = None if r["importance"] is None else float(r["importance"])
    return node


def meaning(node: Node) -> dict[str, Any]:
    """The frontmatter a node's file holds: every field but its usage (see the table in rose.store.store)."""
    import copy   # here, not at the top: the prompt path reads the log and never snapshots a node

    data = node.to_dict()
    for key in node.extra:   # the node's own objects: a snapshot, not a view (the rest of to_dict is fresh)
        if key in data and isinstance(data[key], (dict, list)):
            data[key] = copy.deepcopy(data[key])
    for key in FRONTMATTER_KEYS:
        data.pop(key, None)
    if _count(node.extra.get(DUPLICATE_HITS)) is not None:
        data.pop(DUPLICATE_HITS, None)
    data["dropped"] = [{k: v for k, v in c.items() if k not in CLAIM_COUNTERS} for c in data["dropped"]]
    if "trials" in data:
        data["trials"] = [{k: v for k, v in t.items() if k not in TRIAL_COUNTERS} for t in data["trials"]]
    return data


def _later(a: str, b: str) -> bool:
    """Is time `a` later than time `b`? ("" is the earliest; unparseable times compare as text.)"""
    if not a:
        return False
    if not b:
        return True
    if len(a) == len(b) and a[-1:] == b[-1:] == "Z":   # the form rose writes: text order is time order
        return a > b
    try:
        return _when(a) > _when(b)
    except (ValueError, TypeError):
        return a > b


def _a_time(text: str) -> bool:
    """Is this a time at all? Text that is not one (a hand-edited or hostile line) would win "the latest" by text
    order and hold that place against every real time after it."""
    try:
        _when(text)
    except ValueError:
        return False
    return True


def _when(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


# -- records -------------------------------------------------------------------------------------------------
def delta(node_id: str, new: View, old: View, *, at: str | None = None) -> dict[str, Any] | None:
    """The record that takes `old` to `new`, or None when nothing changed. Counters of claims or trials the node no
    longer has are left alone (nothing reads them), so a repaired claim's history is not written off."""
    rec: dict[str, Any] = {}
    sums = {k: v - old.sums.get(k, 0) for k, v in new.sums.items() if v != old.sums.get(k, 0)}
    latest = {k: v for k, v in new.latest.items() if _later(v, old.latest.get(k, ""))}
    add: dict[str, list[str]] = {}
    gone: dict[str, list[str]] = {}
    for name in SETS:
        now, before = new.sets.get(name, []), old.sets.get(name, [])
        if now == before:
            continue
        now_set, before_set = set(now), set(before)
        if a := [x for x in dict.fromkeys(now) if x not in before_set]:
            add[name] = a
        if d := [x for x in dict.fromkeys(before) if x not in now_set]:
            gone[name] = d
    regs = {k: new.registers.get(k, d) for k, d in REGISTERS.items()
            if new.registers.get(k, d) != old.registers.get(k, d)}
    for key, part in (("sum", sums), ("max", latest), ("add", add), ("del", gone), ("set", regs)):
        if part:
            rec[key] = part
    if not rec:
        return None
    return {"rid": "u" + os.urandom(8).hex(), "id": node_id, "at": now_at() if at is None else at, **rec}


def redacted(view: View) -> View:
    """The view with its free text (preserve hints, spans) redacted: an old file's values, read as they are."""
    from rose.redact import redact

    spans = view.registers.get("spans")
    return View(dict(view.sums), dict(view.latest),
                {k: [redact(x) for x in v] if k == "preserve" else list(v) for k, v in view.sets.items()},
                {**view.registers, "spans": None if spans is None else [redact(x) for x in spans]})


def base_record(node_id: str, base: View) -> dict[str, Any]:
    """The usage an old file held in its frontmatter (redacted by the caller), as one record with a rid derived from
    the values: two clones that move the same committed values out write the same record, counted once."""
    rec = delta(node_id, base, View(), at="") or {"id": node_id, "at": ""}
    rec["rid"] = base_rid(node_id, base)
    rec["base"] = True
    return rec


def base_rid(node_id: str, base: View) -> str:
    """Derived from the base's numbers, times and ids (not its free text, which redaction may rewrite)."""
    regs = {k: v for k, v in base.registers.items() if k != "spans"}
    spans = base.registers.get("spans")
    ident = json.dumps([node_id, sorted(base.sums.items()), sorted(base.latest.items()),
                        base.sets.get("covers_tasks", []), base.sets.get("gaps", []),
                        len(base.sets.get("preserve", [])), sorted(regs.items()),
                        None if spans is None else len(spans)], sort_keys=True, default=str)
    return "b" + _digest(ident, 16)


def valid_record(rec: Any) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("rid"), str) and bool(rec["rid"]) \
        and valid_node_id(rec.get("id")) and isinstance(rec.get("at", ""), str)


def split_lines(data: bytes, *, final: bool = False) -> tuple[list[bytes], int]:
    """(lines, bytes consumed). Complete lines are consumed whether or not they parse; with `final`, an
    unterminated last line is consumed only if it is a whole record (a torn prefix of a JSON object never is)."""
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")
    if final and end < len(data) and parse_line(data[end:]) is not None:
        return [*lines, data[end:]], len(data)
    return lines, end


def parse_lines(data: bytes, *, final: bool = False) -> tuple[list[dict[str, Any]], int]:
    lines, consumed = split_lines(data, final=final)
    return [r for r in map(parse_line, lines) if r is not None], consumed


def parse_line(raw: bytes) -> dict[str, Any] | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        rec = load_json(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return rec if valid_record(rec) else None


_RID_LEAD = b'{"rid":"'


def quick_rid(raw: bytes) -> str | None:
    """The rid of a line as rose writes it (the rid leads), without parsing the line; None: parse it to know."""
    if raw.startswith(_RID_LEAD):
        end = raw.find(b'"', len(_RID_LEAD))
        rid = raw[len(_RID_LEAD):end]
        if end > 0 and rid.isalnum():
            return rid.decode("ascii")
    return None


def encode(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for r in records).encode("utf-8", "surrogatepass")


def append(path: os.PathLike[str] | str, records: list[dict[str, Any]]) -> None:
    """Append records (the caller holds the store lock). A torn last line left by a killed writer is closed first,
    so it stays one unreadable line instead of swallowing this record too."""
    data = encode(records)
    if not data:
        return
    from rose.store.reader import open_append

    fd = open_append(path, read=True)   # a regular file only: a FIFO or a device is refused (UnsafeFile)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


# -- folding records: the state the index caches per node ------------------------------------------------------
def new_state() -> dict[str, Any]:
    return {"sum": {}, "max": {}, "sets": {}, "set": {}, "bases": [], "at": ""}


def _key(at: str, rid: str, pos: int = 0) -> str:
    """Orders operations: by time, then rid (a base record's empty time sorts first, a tie is decided the same way
    on every machine), then place in the record. Fixed width, so text order is that order."""
    return f"{at:<24.24}{rid:<20.20}{pos:06d}"


def fold(state: dict[str, Any], rec: dict[str, Any]) -> None:
    """Apply one record to a node's folded state (a JSON-able dict). Fields of the wrong type are skipped.

    The result depends on which records were folded, never on their order (a union merge orders lines as it
    likes): sums add, times take the latest, and each set member and each register keeps the operation with the
    greatest key (a last-writer-wins element set). Call `finish` before the state is stored."""
    at = rec.get("at") or ""
    rid = rec["rid"]
    if at > state["at"]:
        state["at"] = at
    if rec.get("base") and rid not in state["bases"]:
        state["bases"].append(rid)
    part = rec.get("sum")
    if part.__class__ is dict:   # (JSON object keys are always text; exact type checks keep bools out)
        sums = state["sum"]
        for name, value in part.items():
            if value.__class__ is int:
                sums[name] = sums.get(name, 0) + value
    part = rec.get("max")
    if part.__class__ is dict:
        latest = state["max"]
        for name, value in part.items():
            if value.__class__ is str and _a_time(value) and _later(value, latest.get(name, "")):
                latest[name] = value
    for op, present in (("del", False), ("add", True)):
        part = rec.get(op)
        if part.__class__ is not dict:
            continue
        for name, items in part.items():
            if items.__class__ is not list:
                continue
            members = state["sets"].setdefault(name, {})   # member -> [present, key of its latest operation]
            for pos, item in enumerate(items):
                if item.__class__ is str:
                    key = _key(at, rid, pos)
                    current = members.get(item)
                    if current is None or key > current[1]:
                        members[item] = [present, key]
    part = rec.get("set")
    if part.__class__ is dict:
        for name, value in part.items():
            if name in REGISTERS and not _register_ok(name, value):
                continue
            key = _key(at, rid)
            current = state["set"].get(name)
            if current is None or key > current[0]:
                state["set"][name] = [key, value]


def finish(state: dict[str, Any]) -> dict[str, Any]:
    """Order each set's members by their latest operation (what `combine` reads them in)."""
    for name, members in state["sets"].items():
        state["sets"][name] = dict(sorted(members.items(), key=lambda kv: kv[1][1]))
    return state


def next_at(state: dict[str, Any] | None) -> str:
    """A time for the next record of a node: now, but after every record of it folded so far, so one clone's
    records of a node order as they were written even within one millisecond."""
    at = now_at()
    last = (state or {}).get("at", "")
    if last and at <= last and last[-1:] == "Z" and len(last) == len(at):
        bumped = _when(last) + timedelta(milliseconds=1)
        at = bumped.strftime("%Y-%m-%dT%H:%M:%S.") + f"{bumped.microsecond // 1000:03d}Z"
    return at


def _register_ok(name: str, value: Any) -> bool:
    if name in ("last_attempt_successes", "rejections"):
        return _count(value) is not None
    if name == "heldout":
        return isinstance(value, list) and len(value) == 2 and all(_count(v) is not None for v in value)
    if name == "spans":
        return value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    if name == "importance":
        return value is None or (value.__class__ in (int, float) and 0.0 <= value <= 1.0)
    return True


def combine(base: View, state: dict[str, Any] | None) -> View:
    """What the file (`base`: values an old file still holds) and the log (`state`) say together."""
    if not state:
        return View(dict(base.sums), dict(base.latest), {k: list(v) for k, v in base.sets.items()},
                    dict(base.registers))
    sums = dict(base.sums)
    for name, value in state["sum"].items():
        sums[name] = sums.get(name, 0) + value
    latest = dict(base.latest)
    for name, value in state["max"].items():
        if _later(value, latest.get(name, "")):
            latest[name] = value
    sets = {}
    for name in {*base.sets, *state["sets"]}:
        members = state["sets"].get(name, {})
        kept = [x for x in base.sets.get(name, []) if x not in members or members[x][0]]
        have = set(kept)
        sets[name] = kept + [x for x, (present, _key) in members.items() if present and x not in have]
    registers = dict(base.registers)
    for name, (_at, value) in state["set"].items():
        registers[name] = value
    return View(sums, latest, sets, registers)


def index_columns(view: View, claims: list[list[str]]) -> dict[str, Any]:
    """The index's usage columns (rose.store.index), from a folded view and the node's [claim key, claim text]."""
    patches = [text for key, text in claims if view.sums.get(f"{key}:rescues", 0) > 0]
    heldout = view.registers.get("heldout", REGISTERS["heldout"])
    learned = view.registers.get("importance")
    return {"last_used": view.latest.get("last_used", ""), "use_count": int(view.sums.get("use_count", 0)),
            "learned_importance": None if learned is None else float(learned),
            "patches": json.dumps(patches, ensure_ascii=False), "origin_rescues": len(patches),
            "heldout_passed": int(heldout[0]), "heldout_total": int(heldout[1]),
            "gaps": len(view.sets.get("gaps", []))}


def base_taken(node_id: str, base: View, state: dict[str, Any] | None) -> bool:
    """Has the log already taken this file's frontmatter usage in (a base record of exactly these values)?"""
    return state is not None and bool(state["bases"]) and not base.empty() and base_rid(node_id, base) in state["bases"]
