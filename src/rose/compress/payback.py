"""Does a learner stage pay for itself on this store? The token arithmetic an attempt must pass before it is made.

Compression. An attempt costs model calls now: one `compress`, the span observation (one `assess`), then a
`replay_probe` and a `replay_judge` per validation episode sampled (at most `replay_k`, at most the episodes there
are); once accepted, as many again per held-out episode. It pays back later, on every session that serves the
shorter form: its tokens are saved in the pack. (They are saved again in that session's `assess` prompt, which
carries every served lesson: bench/bench_compression.py measured it shrinking by 94% of what the pack saved
without faults. Counted twice, though, the rule let compression cut a level deeper, to level 3 on two of five
lessons within 30 sessions, and the clean run lost 1.4 points of success to it, 94.3% against 95.7%; so the
saving is counted once, READS_PER_SERVE = 1, and the second read is margin.) A lesson that is rarely served never
earns the attempt back, so it is not attempted:

    cost    = (2 + 2 * replays) * (CALL_OVERHEAD_TOKENS + lesson tokens)
    saving  = lesson tokens * (1 - max_token_ratio) * READS_PER_SERVE * serve rate * HORIZON_SESSIONS
    worth   = chance * (saving - 2 * held-out replays * (CALL_OVERHEAD_TOKENS + lesson tokens)) >= cost

`1 - max_token_ratio` is the least an accepted candidate saves. `chance` is the odds the attempt is accepted, from
the lineage's own record (the lesson and the forms below it, `odds`): (accepted + 1) / (accepted + failed + 1),
where every attempt that saved nothing counts as failed, whatever failed it (a candidate too long, under-reported
or empty, a replay that failed, an answer out of schema, a held-out demotion; a backend outage says nothing about
the lesson and is not counted). A failed attempt was paid for and saved nothing, so a lineage whose attempts keep
failing (a compressor that under-reports on this store, a lesson already as short as its evidence allows) is
asked less and less, and stops once the odds no longer cover the calls; it is asked again when the saving grows
(the lesson served more often, or made longer by a repair), and each accepted form raises the odds of the next
level. With no record the chance is 1: the first attempt is judged on its saving alone.

`serve rate` is the share of the store's most recent episodes (RECENT_EPISODES) that served the lesson or withheld it
to measure it (rose.credit): how often it would be in a pack. The constants were measured in the simulated world
(bench/bench_compression.py: a compression prompt is about 780 tokens for a 250-token lesson, a replay call about
540) and hold for real models to the extent rose's own prompts dominate a call's size.

Merge. A merge parent is served beside its children (they keep their detail), so it adds its own tokens to every
pack that serves it and saves none; its return is in selection: the apex walk reads one line for two lessons. While
the stores fit the recall budget, recall serves them whole and no selector runs (rose.store.budget), so a parent
could only cost: `merge_pays` says no then, and yes again once the stores outgrow the budget.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rose.model import Origin, Status
from rose.store import reader
from rose.text import load_json

if TYPE_CHECKING:
    from rose.compress.graph import Graph
    from rose.config import RecallSettings
    from rose.model import Node
    from rose.store import Store

CALL_OVERHEAD_TOKENS = 450    # a compression or replay prompt's instructions and framing, beyond the lesson itself
READS_PER_SERVE = 1           # the pack only; the assess prompt's read is margin (see above)
HORIZON_SESSIONS = 200        # sessions an accepted compression is counted on to keep serving
RECENT_EPISODES = 100         # the window the serve rate is measured over
MIN_EPISODES = 10             # below this the store is too young to say: the attempt is allowed
FAILED = "compress:failed"    # usage-log counter (Store.log_counts): attempts on this lesson that saved nothing


@dataclass(frozen=True)
class Payback:
    worth: bool
    cost: float
    saving: float
    serve_rate: float | None
    chance: float = 1.0

    @property
    def reason(self) -> str:
        rate = "unknown" if self.serve_rate is None else f"{self.serve_rate:.0%}"
        verdict = "pays for itself" if self.worth else "would not pay for itself"
        odds = "" if self.chance >= 1 else f", {self.chance:.0%} odds of acceptance after failed attempts"
        return (f"an attempt {verdict}: ~{self.cost:,.0f} tokens now against ~{self.saving:,.0f} saved over "
                f"{HORIZON_SESSIONS} sessions (served in {rate} of recent sessions{odds})")


def call_tokens(lesson_tokens: int) -> int:
    return CALL_OVERHEAD_TOKENS + lesson_tokens


def attempt_cost(lesson_tokens: int, replays: int) -> float:
    """The calls made before the verdict: compress, the span observation, and a probe and a judge per replay."""
    return (2 + 2 * max(replays, 0)) * call_tokens(lesson_tokens)


def expected_saving(lesson_tokens: int, max_token_ratio: float, serve_rate: float) -> float:
    return lesson_tokens * max(0.0, 1.0 - max_token_ratio) * READS_PER_SERVE * serve_rate * HORIZON_SESSIONS


def chance(accepted: int, failed: int) -> float:
    """The odds the next attempt on a lineage is accepted, from its record: 1 with none."""
    return (max(accepted, 0) + 1) / (max(accepted, 0) + max(failed, 0) + 1)


def judge(lesson_tokens: int, replays: int, max_token_ratio: float, serve_rate: float | None, *,
          heldout: int = 0, odds: float = 1.0) -> Payback:
    """Pure: is one compression attempt on a lesson of this size, served this often, replayed on `replays`
    validation and `heldout` held-out episodes, with these odds of acceptance, worth its calls?"""
    cost = attempt_cost(lesson_tokens, replays)
    if serve_rate is None:
        return Payback(True, cost, float("nan"), None, odds)
    saving = expected_saving(lesson_tokens, max_token_ratio, serve_rate)
    net = odds * (saving - 2 * max(heldout, 0) * call_tokens(lesson_tokens))
    return Payback(net >= cost, cost, saving, serve_rate, odds)


def odds(graph: Graph, node: Node) -> float:
    """`chance` for the lineage of `node` (it and the forms below it): accepted compressions standing in it, against
    the failed attempts logged on its forms and the compressions of them demoted since."""
    accepted = failed = 0
    for n in graph.subtree(node):
        if n.origin is Origin.COMPRESSION and n.status is not Status.DEMOTED:
            accepted += 1
        found = graph.find(n.id)
        if found is not None:
            failed += failures(found.store, n.id)
        for pid in n.parents:
            parent = graph.node(pid)
            if parent is not None and parent.origin is Origin.COMPRESSION and parent.status is Status.DEMOTED:
                failed += 1
    return chance(accepted, failed)


def failures(store: Store, node_id: str) -> int:
    state = store.index.usage_state(node_id) or {}
    value = (state.get("sum") or {}).get(FAILED, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def record_failure(store: Store, node: Node) -> None:
    """One failed attempt on `node`, logged once: its rid derives from the attempt's mark (`last_attempt` and the
    successes it was earned by, set as it started; every attempt needs new successes, so no two share it)."""
    import hashlib

    mark = f"{FAILED}|{node.id}|{node.last_attempt}|{node.last_attempt_successes}"
    store.log_counts(node.id, {FAILED: 1},
                     rid="u" + hashlib.sha256(mark.encode("utf-8", "surrogatepass")).hexdigest()[:16])


@dataclass(frozen=True)
class Gate:
    worth: bool
    reason: str


def merge_pays(stores: list[Store], rs: RecallSettings) -> Gate:
    """A merge parent pays only where a selector chooses: not while recall serves the stores whole."""
    from rose.store.budget import whole

    size = whole(stores)
    if size.fits(rs):
        return Gate(False, f"the whole store is served ({size.tokens:,} of {rs.max_pack_tokens:,} tokens): a parent "
                           "would only add to every pack")
    return Gate(True, f"the store outgrows the recall budget ({size.tokens:,} > {rs.max_pack_tokens:,} tokens)")


def serve_rate(episode_dirs: list[Path], node_id: str) -> float | None:
    """Share of the most recent episodes (across `episode_dirs`) that served or withheld `node_id`; None when there
    are fewer than MIN_EPISODES."""
    found: list[tuple[int, str]] = []
    for folder in episode_dirs:
        try:
            with os.scandir(folder) as entries:
                for e in entries:
                    if e.name.endswith(".json"):
                        try:
                            found.append((e.stat().st_mtime_ns, e.path))
                        except OSError:
                            continue
        except OSError:
            continue
    if len(found) < MIN_EPISODES:
        return None
    recent = sorted(found, reverse=True)[:RECENT_EPISODES]
    hits = total = 0
    for _mtime, path in recent:
        try:
            data = load_json(reader.read_text(path, reader.RECORD))   # no FIFO, device or link: skipped
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        total += 1
        arms = data.get("arms")
        arms = arms if isinstance(arms, dict) else {}
        hits += node_id in (data.get("served") or []) or node_id in arms
    return hits / total if total >= MIN_EPISODES else None
