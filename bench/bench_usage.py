#!/usr/bin/env python3
"""What usage.jsonl costs: folding a big log, catching up after a pull, and a credit, on a store of 1,000 lessons.

    .venv/bin/python bench/bench_usage.py [--lines 100000] [--lessons 1000] [--pulled 1000] [--runs 5]

1. Full fold: the index's usage cache dropped and rebuilt from the whole log (what `rose index --rebuild` and a
   checkout that rewrote the log pay), then `rose index --rebuild` itself, as a fresh process.
2. Catch-up after a pull: `--pulled` lines appended at the end (a merge or a fast-forward), then one full sync: the
   CRC of the folded prefix, the new lines folded, and the rows of the lessons they touched rewritten.
3. The steady state: a sync when nothing changed (one stat of the log), `Store.get`, and one credit
   (`Store.update`: the record computed, appended, fsynced and folded into the index).
Medians of `--runs`, wall clock and this process's CPU time (a fresh process's CPU time is not counted: "-").
"""
from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.gen_store import populate  # noqa: E402

from rose.model import Scope  # noqa: E402
from rose.store import Store, usage  # noqa: E402


def records(ids: list[str], n: int, seed: int, start: int = 0) -> list[dict]:
    """Credits as the learner writes them: counters, a time, the episode added to the regression set."""
    rng = random.Random(seed)
    out = []
    for i in range(start, start + n):
        ok = rng.random() < 0.8
        out.append({"rid": "u" + rng.getrandbits(64).to_bytes(8, "big").hex(), "id": rng.choice(ids),
                    "at": f"2026-03-01T10:00:00.{i % 1000:03d}Z",
                    "sum": {"attempts": 1, "successes" if ok else "failures": 1, "use_count": 1},
                    "max": {"last_used": f"2026-03-{1 + i % 28:02d}T10:00:00Z"},
                    "add": {"covers_tasks": [f"e_{i:08x}"]}})
    return out


def median(fn, runs: int) -> tuple[float, float]:
    """(wall, CPU) medians: on a shared machine the CPU time of this process is the steadier figure."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--lessons", type=int, default=1000)
    parser.add_argument("--pulled", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, tuple[float, float]]] = []
    with tempfile.TemporaryDirectory(prefix="rose-bench-usage-") as tmp:
        root = Path(tmp) / "p" / ".rose"
        store = populate(root, args.lessons)
        ids = [r.id for r in store.rows()]
        store.usage_path.write_bytes(usage.encode(records(ids, args.lines, seed=1)))
        size_mb = store.usage_path.stat().st_size / 1e6

        def full_fold() -> None:
            store.index.reset_usage()
            store._usage_stamp = object()
            store._catch_up_usage()
        rows.append((f"full fold of {args.lines:,} lines ({size_mb:.1f} MB)", median(full_fold, args.runs)))
        store.sync()
        blob = store.usage_path.read_bytes()
        rows.append(("  of which: parse + fold in memory only", median(
            lambda: [usage.fold(usage.new_state(), r) for r in usage.parse_lines(blob)[0]], args.runs)))
        wall, _cpu = median(lambda: subprocess.run(
            [sys.executable, "-m", "rose", "index", "--rebuild"], cwd=root.parent, check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), max(1, args.runs // 2))
        rows.append(("rose index --rebuild (fresh process)", (wall, float("nan"))))

        pulls = iter(range(100))

        def pull() -> None:
            k = next(pulls)
            with open(store.usage_path, "ab") as f:
                f.write(usage.encode(records(ids, args.pulled, seed=100 + k, start=args.lines + k * args.pulled)))
            store.sync()
        rows.append((f"sync after a pull appended {args.pulled:,} lines", median(pull, args.runs)))
        rows.append(("sync, nothing changed", median(store.sync, args.runs * 20)))
        rows.append(("Store.get", median(lambda: store.get(ids[7]), args.runs * 20)))
        n = iter(range(10_000))

        def one_credit() -> None:
            i = next(n)

            def change(node) -> None:
                node.stats.attempts += 1
                node.stats.successes += 1
                node.use_count += 1
                node.covers_tasks.append(f"e_c{i:06d}")
            store.update(ids[i % len(ids)], change)
        rows.append(("one credit (Store.update)", median(one_credit, args.runs * 10)))
        fresh = Store(root, Scope.PROJECT)
        rows.append(("first get in a new process (log unchanged)", median(lambda: fresh.get(ids[3]), 1)))
        store.close()
        fresh.close()
    print(f"{'what':<52} {'wall':>10} {'cpu':>10}")
    for label, (wall, cpu) in rows:
        cpu_text = "-" if cpu != cpu else f"{cpu * 1000:.1f}ms"
        print(f"{label:<52} {wall * 1000:>8.1f}ms {cpu_text:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
