"""Withholding, on the prompt path: a lesson that would be served in full is sometimes held back for the session.

For each lesson recall is about to serve in full for the first time in a session, one decision (never repeated in
that session: the arm is kept in the session's scratch, rose.store.sessions.SessionState.arms):

    measured at all?   not when its verdict is final (harmful, helps, no effect), not when it is a rule the user
                       stated (quoted from their words, or taught with `rose add`) unless credit.withhold_user_rules
    withheld?          with probability credit.withhold_rate (at most 0.5), never two sessions in a row

A lesson withheld at its first serve stays withheld for the whole session, so the session is one clean sample of
the withheld arm; the notice line says so ("1 withheld to measure it"). The draw is a hash of the session and the
lesson, so it is fixed per session and reproducible in the simulation. "Never twice in a row" is kept per store in
`cache/credit-last.json` (machine-local), read and written under its own short lock: when that lock cannot be had
in the prompt hook's bounded wait, nothing is withheld this time (serving is the safe side).

Cheap by design: counts come from the index's folded usage (one row per lesson), the verdict is arithmetic, the
user-rule check reads the head of a lesson file only for lessons about to be put in an arm, and nothing here imports
YAML, the redactor or a model.
"""
from __future__ import annotations

import os
import re

from rose.text import load_json
from rose.store import reader
from rose.credit.decide import SERVED, WITHHELD, Arm, Credit, Rules, should_withhold, verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.config import Settings
    from rose.recall.pack import Item
    from rose.store import Store
    from rose.store.sessions import SessionState

LAST_FILE = "credit-last.json"     # under a store's cache/: lesson id -> the arm of the last session that decided it
USER_ORIGINS = ("extraction", "manual")   # minted from the user's quoted words, or taught by hand (`rose add`)
_ORIGIN_RE = re.compile(r"^origin:\s*['\"]?([a-z]+)", re.MULTILINE)
_QUOTES_RE = re.compile(r"^quotes:\s*\S", re.MULTILINE)
HEAD_BYTES = 8192                  # the frontmatter is at the head of the file
MAX_HOPS = 8                       # a compression chain is followed down to its level-0 original at most this far


def counter(arm: str, what: str) -> str:
    """The usage-log counter of one arm: credit:served:n, credit:withheld:pass, ..."""
    return f"credit:{arm}:{what}"


def credit_of(state: dict[str, Any] | None) -> Credit:
    """A lesson's two arms from its folded usage state (rose.store.usage)."""
    sums = (state or {}).get("sum") or {}

    def arm(name: str) -> Arm:
        n = int(sums.get(counter(name, "n"), 0) or 0)
        return Arm(n, max(0, min(n, int(sums.get(counter(name, "pass"), 0) or 0))))
    return Credit(arm(SERVED), arm(WITHHELD))


SUSPECT = "credit:suspect"          # register: the withheld arm's size when the lesson became suspect (-1: not)


def suspect_of(state: dict[str, Any] | None) -> int | None:
    """When the lesson became suspect of harm (rose.credit.decide.advance), from its folded usage state."""
    entry = ((state or {}).get("set") or {}).get(SUSPECT)
    value = entry[1] if isinstance(entry, list) and len(entry) == 2 else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def rules_of(settings: Settings) -> Rules:
    return Rules(min_samples=max(1, settings.credit.min_samples), max_withheld=max(1, settings.credit.max_withheld))


def draw(session_id: str, node_id: str) -> float:
    """Uniform in [0, 1), fixed for a (session, lesson) pair."""
    import hashlib

    digest = hashlib.blake2b(f"withhold|{session_id}|{node_id}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big") / 2 ** 64


def is_user_rule(store: Store, row: Any) -> bool:
    """A rule resting on the user's own words: minted from a quote, taught by hand, or a compression of one."""
    seen = 0
    while row is not None and seen < MAX_HOPS:
        seen += 1
        try:
            fd, _st = reader.open_regular(store.root / row.path)   # a regular file, no link: no FIFO waited on
            try:
                head = os.read(fd, HEAD_BYTES).decode("utf-8", "replace")
            finally:
                os.close(fd)
        except OSError:   # UnsafeFile too
            return True    # unreadable: treat as the user's, which is never withheld by default
        found = _ORIGIN_RE.search(head)
        origin = found.group(1) if found else "manual"
        if origin in USER_ORIGINS or _QUOTES_RE.search(head):
            return True
        if origin not in ("compression", "merge") or not row.derived_from:
            return False
        below = store.index.rows_by_id(row.derived_from[:1])
        row = below.get(row.derived_from[0])
    return False


def withhold(items: list[Item], record: SessionState, settings: Settings, session_id: str) -> list[Item]:
    """The lessons among `items` (about to be served in full: the caller leaves refreshers and lessons still in
    context out) that this session withholds; `record.arms` is updated with every arm decided. Lessons already in an
    arm keep it; a withheld one stays withheld."""
    cs = settings.credit
    out: list[Item] = []
    undecided: dict[int, tuple[Store, list[Item]]] = {}
    for item in items:
        arm = record.arms.get(item.id)
        if arm == WITHHELD and cs.withhold_rate > 0:
            out.append(item)
        elif arm is None and cs.withhold_rate > 0:
            undecided.setdefault(id(item.store), (item.store, []))[1].append(item)
    rules = rules_of(settings)
    for store, pending in undecided.values():
        out += _decide(store, pending, record, settings, session_id, rules)
    return out


def _decide(store: Store, items: list[Item], record: SessionState, settings: Settings, session_id: str,
            rules: Rules) -> list[Item]:
    from rose.errors import LockTimeout
    from rose.store.atomic import file_lock

    cs = settings.credit
    path = store.cache_dir / LAST_FILE
    try:
        with file_lock(store.locks_dir / "credit-last.lock", timeout_s=store.wait_s):
            last = _read(path)
            withheld, changed = [], {}
            for item in items:
                state = store.index.usage_state(item.id)
                judged = verdict(credit_of(state), rules, suspect_of(state)).verdict
                if judged.final:
                    continue   # nothing more to learn: served, not measured
                if not cs.withhold_user_rules and is_user_rule(store, item.row):
                    continue   # the user's own rule: always served unless they opted in
                out = should_withhold(draw(session_id, item.id), cs.withhold_rate, last.get(item.id), judged)
                arm = WITHHELD if out else SERVED
                record.arms[item.id] = changed[item.id] = arm
                if out:
                    withheld.append(item)
            if changed:
                store.write_json(path, {**last, **changed}, structural=True)
            return withheld
    except (LockTimeout, OSError):
        for item in items:
            record.arms.pop(item.id, None)
        return []   # no record of the last arm: serve everything this time, decide again next prompt


def _read(path: Any) -> dict[str, str]:
    try:
        data = load_json(reader.read_text(path, reader.RECORD))
    except (OSError, ValueError, RecursionError):   # UnsafeFile too: a FIFO or a link there is never read
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
