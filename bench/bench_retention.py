"""Retention over a long life in the simulated world: does the hot store stay small, sharp and whole?

    .venv/bin/python bench/bench_retention.py                  # 2,000 sessions (about 330 simulated days), the table
    .venv/bin/python bench/bench_retention.py --sessions 4000 --seed 3
    .venv/bin/python bench/bench_retention.py --write-doc      # and rewrite docs/benchmarks-retention.md

Both arms run the same task stream through the real hooks and the real learner (rose.sim.driver), each in its own
process and throwaway store, with a simulated miner (rose.sim.mining) that mints lessons of varying quality from
every session: the user's corrections of failed work (useful), notes that state nothing (useless), lessons that say
a rule was reverted when it was not (wrong), and orientation records that restate what a session applied (near
duplicates). Compression, descent and merge run as they do in production. The clock advances 4 hours a session.

    keep everything   importance moves with evidence, but nothing is ever archived
    retention         the whole of rose.retention: the floor, weak-and-stale, the watermarks with one consolidation
                      attempt and eviction by utility, cold paging back in, promotion of a cold record on use

The hot budgets are scaled to this small world (BENCH_HARD_TOKENS, a few hundred lessons rather than thousands);
the rules and the code are the production ones (rose.retention.rules). Per phase: success rate, the hot store's
tokens at the phase's end and its largest after any session (which must stay under the hard watermark), the
archive's size, recall latency (the UserPromptSubmit hook, median and 95th percentile), and the records ever
created that are no longer anywhere on disk (must be 0).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

ARMS = ("keep everything", "retention")
HOURS_PER_SESSION = 4
START = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
# the hot budgets of this small world: tokens per (scope, memory type); soft = 80% (rose.retention.rules.SOFT_SHARE)
BENCH_HARD_TOKENS = {("project", "lesson"): 4000, ("project", "orientation"): 1500, ("project", "experience"): 4000,
                     ("global", "lesson"): 2000, ("global", "orientation"): 1000, ("global", "experience"): 2000}
DOC = ROOT / "docs" / "benchmarks-retention.md"


@dataclass
class Phase:
    sessions: int = 0
    success: float = 0.0
    hot_tokens: dict[tuple[str, str], int] = field(default_factory=dict)   # by (scope, memory type), at the end
    hot_max: dict[tuple[str, str], int] = field(default_factory=dict)      # ... largest after any session
    hot_records: int = 0
    cold_records: int = 0
    cold_tokens: int = 0
    recall_p50: float = 0.0
    recall_p95: float = 0.0
    deleted: int = 0
    days: float = 0.0


@dataclass
class ArmResult:
    arm: str
    phases: list[Phase]
    minted: dict[str, int]
    archived: dict[str, int]
    consolidated: int
    promoted_back: int
    deleted: int
    seconds: float


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self) -> None:
        self.now += timedelta(hours=HOURS_PER_SESSION)


def _buckets(sim) -> tuple[dict[tuple[str, str], int], int, int, int]:
    """Hot tokens per (scope, memory type), each bucket under its own watermarks, and the record counts."""
    hot: dict[tuple[str, str], int] = {}
    hot_n = cold_n = cold_t = 0
    for store in sim.layers.stores():
        for scope, memory_type, h, tokens, c, ctok in store.index.buckets():
            hot[(scope, memory_type)] = hot.get((scope, memory_type), 0) + tokens
            hot_n, cold_n, cold_t = hot_n + h, cold_n + c, cold_t + ctok
    return hot, hot_n, cold_n, cold_t


def _ids(sim) -> set[str]:
    return {r[0] for s in sim.layers.stores() for r in s.index.conn.execute("SELECT id FROM nodes")}


def _on_disk(sim, ids: set[str]) -> set[str]:
    found = set()
    for store in sim.layers.stores():
        for folder in store.record_dirs:
            if folder.is_dir():
                found |= {p.stem for p in folder.rglob("*.md")} & ids
    return found


def run_arm(arm: str, sessions: int, phases: int, seed: int) -> ArmResult:
    from rose.retention.maintain import Policy, budgets, only
    from rose.sim import SimConfig, Simulation, default_world
    from rose.sim.mining import MiningBackend, MiningConfig
    from rose.store import events

    world = default_world(seed)
    tasks = world.sample_tasks(sessions, seed=seed)
    backend = MiningBackend(world, SimConfig(seed=seed), MiningConfig(seed=seed))
    clock = Clock()
    policy = Policy() if arm == "retention" else Policy(archive=False)
    started = time.monotonic()
    out: list[Phase] = []
    seen: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="rose-retention-") as tmp, only(policy), budgets(BENCH_HARD_TOKENS), \
            Simulation(Path(tmp), world=world, backend=backend, tag=f"r{seed}", clock=clock, correct=True) as sim:
        size = max(1, sessions // phases)
        for p in range(phases):
            chunk = tasks[p * size: (p + 1) * size if p < phases - 1 else sessions]
            results, hot_max = [], {}
            for task in chunk:
                clock.advance()
                results.append(sim.run(task))
                hot, *_rest = _buckets(sim)
                for k, v in hot.items():
                    hot_max[k] = max(hot_max.get(k, 0), v)
                seen |= _ids(sim)
            hot, hot_n, cold_n, cold_t = _buckets(sim)
            lat = sorted(r.recall_ms for r in results)
            out.append(Phase(
                sessions=len(results), success=sum(r.success for r in results) / len(results), hot_tokens=hot,
                hot_max=hot_max, hot_records=hot_n, cold_records=cold_n, cold_tokens=cold_t,
                recall_p50=statistics.median(lat), recall_p95=lat[min(len(lat) - 1, int(0.95 * len(lat)))],
                deleted=len(seen - _on_disk(sim, seen)), days=(clock.now - START).total_seconds() / 86400))
        archived: dict[str, int] = {}
        consolidated = promoted = 0
        for store in sim.layers.stores():
            for ev in events.read(store.events_path, kind="retention"):
                if ev.get("action") == "archive":
                    archived[ev.get("rule", "?")] = archived.get(ev.get("rule", "?"), 0) + int(ev.get("count") or 0)
                consolidated += ev.get("action") == "consolidated"
            promoted += sum(1 for line in (store.catalog_path.read_text().splitlines()
                                           if store.catalog_path.exists() else []) if '"op":"restore"' in line)
        deleted = len(seen - _on_disk(sim, seen))
    return ArmResult(arm, out, dict(sorted(backend.minted.items())), dict(sorted(archived.items())), consolidated,
                     promoted, deleted, time.monotonic() - started)


def table(results: list[ArmResult]) -> str:
    marks = [("project", "lesson"), ("project", "orientation")]
    lines = ["| phase | arm | success | hot tokens, project lesson / orientation (end; max after any session) | hot records "
             "| archive: records (tokens) | recall p50 / p95 ms | deleted |",
             "|---|---|---:|---|---:|---|---|---:|"]
    start = 1
    for p in range(len(results[0].phases)):
        n = results[0].phases[p].sessions
        label = f"{p + 1} (sessions {start}-{start + n - 1}, day {results[0].phases[p].days:.0f})"
        start += n
        for r in results:
            ph = r.phases[p]
            hot = " / ".join(f"{ph.hot_tokens.get(t, 0)} ({ph.hot_max.get(t, 0)})" for t in marks)
            lines.append(f"| {label} | {r.arm} | {ph.success:.1%} | {hot} | {ph.hot_records} | "
                         f"{ph.cold_records} ({ph.cold_tokens}) | {ph.recall_p50:.0f} / {ph.recall_p95:.0f} | "
                         f"{ph.deleted} |")
    return "\n".join(lines)


def run(sessions: int, phases: int, seed: int, serial: bool) -> str:
    started = time.monotonic()
    jobs = [(arm, sessions, phases, seed) for arm in ARMS]
    if serial:
        results = [run_arm(*job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=len(jobs)) as pool:
            results = list(pool.map(run_arm, *zip(*jobs)))
    keep, ret = results
    overall = {r.arm: sum(p.success * p.sessions for p in r.phases) / sum(p.sessions for p in r.phases)
               for r in results}
    held = all(tokens <= BENCH_HARD_TOKENS[bucket] for ph in ret.phases for bucket, tokens in ph.hot_max.items())
    marks = ", ".join(f"{t} {BENCH_HARD_TOKENS[('project', t)]}" for t in ("lesson", "orientation", "experience"))
    body = [f"{sessions} sessions ({HOURS_PER_SESSION} simulated hours apart), {phases} phases, seed {seed}; hard "
            f"watermarks (project, tokens): {marks}; soft = 80%", "", table(results), "",
            f"Success over the whole run: keep everything {overall[keep.arm]:.1%}, retention {overall[ret.arm]:.1%} "
            f"(retention {100 * (overall[ret.arm] - overall[keep.arm]):+.1f} points).",
            f"Hot store held under the hard watermark after every session with retention: {'yes' if held else 'NO'}.",
            "Minted by the simulated miner (candidates proposed): "
            + ", ".join(f"{k} {v}" for k, v in ret.minted.items()) + ".",
            "Archived by rule (retention): " + (", ".join(f"{k} {v}" for k, v in ret.archived.items()) or "none")
            + f"; consolidations verified and stored: {ret.consolidated}; records brought back from the archive: "
              f"{ret.promoted_back}.",
            f"Records deleted (created at some point, on disk nowhere at the end): keep everything {keep.deleted}, "
            f"retention {ret.deleted}.",
            f"Wall time: {time.monotonic() - started:.0f}s ("
            + ", ".join(f"{r.arm} {r.seconds:.0f}s" for r in results) + ")"]
    return "\n".join(body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--phases", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--serial", action="store_true", help="run the arms one after another (default: in parallel)")
    ap.add_argument("--write-doc", action="store_true", help=f"rewrite the tables in {DOC.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    text = run(args.sessions, args.phases, args.seed, args.serial)
    print(text)
    if args.write_doc:
        marker = "<!-- tables: generated by bench/bench_retention.py --write-doc -->"
        doc = DOC.read_text(encoding="utf-8") if DOC.exists() else marker + "\n"
        head, _sep, _old = doc.partition(marker)
        command = "python bench/bench_retention.py --write-doc" + \
            ("" if args.sessions == 2000 else f" --sessions {args.sessions}") + \
            ("" if args.phases == 8 else f" --phases {args.phases}") + ("" if args.seed == 7 else f" --seed {args.seed}")
        DOC.write_text(f"{head}{marker}\n\n`{command}`, {time.strftime('%Y-%m-%d')}:\n\n{text}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
